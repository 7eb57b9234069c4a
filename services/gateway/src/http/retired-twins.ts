import { isId } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import type { NextFunction, Request, Response } from "express";
import type { GatewayDeps } from "./deps";

/** A checkout's URLs: /c/<id> and what hangs under it. */
const CHECKOUT_PATH = /^\/c\/([^/]+)(\/.*)?$/;
/** A twin's face and its companions, which are now the live checkout's rehearsal face's. */
const FACE_PATHS = new Set(["", "/pay", "/prepare", "/qr.svg"]);

/** Where a twin's URL lives now: its face under /c/{live_id}/test, anything else (usage, handoff) beside it; the query kept. */
export function retiredTwinTarget(liveId: string, rest: string, query: string): string {
  return `/c/${liveId}${FACE_PATHS.has(rest) ? `/test${rest}` : rest}${query}`;
}

/**
 * Spec, Payment rules 6: URLs of the retired twin-row model's test twins
 * answer 307 to /c/{live_id}/test (a 307 keeps the method, the body and the
 * headers). Catalog is asked only once a /c/ URL found nothing (404), so the
 * checkouts that exist pay nothing for it. A package key bought on a twin row
 * finds its package on that row and is answered there, never redirected.
 */
export function retiredTwinRedirect({ clients }: Pick<GatewayDeps, "clients">) {
  return async (err: unknown, req: Request, res: Response, next: NextFunction): Promise<void> => {
    const match = CHECKOUT_PATH.exec(req.path);
    const id = match?.[1];
    if (!(err instanceof ProblemError) || err.slug !== "not-found" || id === undefined || !isId("checkout", id)) return next(err);
    let liveId: string | undefined;
    try {
      liveId = (await clients.catalog.resolveRetiredTwin({ checkoutId: id })).liveId;
    } catch {
      // Catalog cannot say: the 404 stands (a twin's buyer tries again).
      return next(err);
    }
    if (liveId === undefined) return next(err);
    const at = req.originalUrl.indexOf("?");
    const target = retiredTwinTarget(liveId, match?.[2] ?? "", at < 0 ? "" : req.originalUrl.slice(at));
    // Plain text whatever the Accept: the answer the OpenAPI document names.
    res.status(307).location(target).type("text/plain").send(`This request belongs at ${target}`);
  };
}
