import { HANDOFF_NONCE } from "@c402/ids";
import { invalid } from "@c402/problems";
import { Router, type Request, type Response } from "express";
import type { Face } from "../../faces/face";
import { faceUrl } from "../../views/checkouts";
import { qrSvg } from "../../views/qr";
import type { GatewayDeps } from "../deps";
import { checkoutIdOf, escrowCheckoutIdOf, handoffOf } from "../face-requests";

/** A day: the face URL of a checkout never changes. */
const QR_MAX_AGE_SECONDS = 86_400;

/**
 * GET /c/{id}/qr.svg and /c/{id}/test/qr.svg (and /e/{id}/… for an escrow
 * checkout): the face URL as an SVG QR code.
 * With `h` (a handoff nonce) the code carries it, so the phone's payment names
 * the nonce the showing page polls with; that answer is per page, so no-store.
 * Without it the code is the same for everyone and is cached for a day.
 */
export function qrRoutes({ clients, settings }: GatewayDeps): Router {
  const router = Router();

  const qr =
    (face: Face, idOf = checkoutIdOf) =>
    async (req: Request, res: Response) => {
      const id = idOf(req);
      const h = handoffOf(req);
      if (req.query.h !== undefined && (h === undefined || !HANDOFF_NONCE.test(h))) {
        throw invalid([{ field: "h", reason: `the handoff nonce must match ${HANDOFF_NONCE.source}` }]);
      }
      // 404 for a checkout that does not exist: a code is drawn only for a real face.
      await clients.catalog.getCheckout({ checkoutId: id });
      const url = faceUrl(settings.baseUrl, id, face) + (h === undefined ? "" : `?h=${h}`);
      res.setHeader("Cache-Control", h === undefined ? `public, max-age=${QR_MAX_AGE_SECONDS}` : "no-store");
      res.type("image/svg+xml").send(await qrSvg(url));
    };

  router.get("/c/:id/qr.svg", qr("live"));
  router.get("/c/:id/test/qr.svg", qr("test"));
  router.get("/e/:id/qr.svg", qr("live", escrowCheckoutIdOf));
  router.get("/e/:id/test/qr.svg", qr("test", escrowCheckoutIdOf));
  return router;
}
