import { answered } from "@c402/rpc";
import { invalid, ProblemError } from "@c402/problems";
import { Router, type NextFunction, type Request, type Response } from "express";
import { createWebhook } from "../../operations/webhooks";
import { attemptView, deliveryView, verificationKeyView, webhookView } from "../../views/webhooks";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { noStore } from "../request-context";

const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** How long the verification keys may be cached: a rotation overlaps by a day, and receivers refetch on a failure. */
const VERIFICATION_KEY_MAX_AGE_SECONDS = 300;

/** /v1/webhooks: sellers' receivers (run by the webhooks service), their deliveries and attempts, and the service's verification keys. */
export function webhookRoutes(deps: GatewayDeps): Router {
  const { clients } = deps;
  const router = Router();
  const change = (req: Request) => {
    const cred = credentialOf(req);
    return { accountId: cred.accountId, actor: cred.actor, testMode: cred.mode === "test" };
  };
  const statusOf = (query: Record<string, unknown>): string | undefined => {
    if (query.status === undefined) return undefined;
    if (typeof query.status === "string" && (DELIVERY_STATUSES as readonly string[]).includes(query.status)) return query.status;
    throw invalid([{ field: "status", reason: `must be one of ${DELIVERY_STATUSES.join(", ")}` }]);
  };

  router.get("/v1/webhooks/verification-key", async (_req, res) => {
    const r = await clients.webhooks.verificationKeys({});
    res.setHeader("Cache-Control", `public, max-age=${VERIFICATION_KEY_MAX_AGE_SECONDS}`);
    res.json(verificationKeyView(r.keys));
  });

  router.post("/v1/webhooks", requireScope(clients, "full"), noStore, async (req, res) => {
    res.status(201).json(await createWebhook(deps, credentialOf(req), req.body));
  });

  router.get("/v1/webhooks", requireScope(clients, "read_only"), async (req, res) => {
    const page = pageRequestOf(req.query);
    const r = await clients.webhooks.listEndpoints({ accountId: credentialOf(req).accountId, ...servicePage(page) });
    const { items, ...more } = pageOf(r.endpoints, page.limit, createdAtKey);
    res.json({ webhooks: items.map(webhookView), ...more });
  });

  // /v1/webhooks/verification-key is not a receiver: DELETE on it is a wrong method (405), not a receiver's delete.
  const receiverIdOnly = (req: Request, res: Response, next: NextFunction) => {
    if (req.params.id !== "verification-key") return next();
    res.setHeader("Allow", "GET, HEAD");
    next(new ProblemError("method-not-allowed", `${req.method} is not allowed on this path; it accepts GET, HEAD.`));
  };
  router.delete("/v1/webhooks/:id", receiverIdOnly, requireScope(clients, "full"), async (req, res) => {
    const r = await clients.webhooks.deleteEndpoint({ ...change(req), endpointId: String(req.params.id) });
    res.json({ ...webhookView(answered(r.endpoint, "endpoint")), deleted: true, pending_removed: Number(r.pendingRemoved) });
  });

  router.get("/v1/webhooks/:id/deliveries", requireScope(clients, "read_only"), async (req, res) => {
    const page = pageRequestOf(req.query);
    const status = statusOf(req.query);
    const r = await clients.webhooks.listDeliveries({
      accountId: credentialOf(req).accountId,
      endpointId: String(req.params.id),
      ...servicePage(page),
      ...(status ? { status } : {}),
    });
    const { items, ...more } = pageOf(r.deliveries, page.limit, createdAtKey);
    res.json({ deliveries: items.map(deliveryView), ...more });
  });

  router.get("/v1/webhooks/:id/deliveries/:deliveryId", requireScope(clients, "read_only"), async (req, res) => {
    const r = await clients.webhooks.getDelivery({
      accountId: credentialOf(req).accountId,
      endpointId: String(req.params.id),
      deliveryId: String(req.params.deliveryId),
    });
    res.json({ ...deliveryView(answered(r.delivery, "delivery")), payload: JSON.parse(r.payloadJson) as unknown, attempts: r.attempts.map(attemptView) });
  });

  return router;
}
