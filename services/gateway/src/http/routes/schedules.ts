import { Router } from "express";
import type { ScheduleOperations } from "../../operations/schedules";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";

/**
 * Recurring series after their purchase (the schedules service owns them; ADR 20):
 *
 *   GET  /v1/schedules                seller (read_only): the account's series of the key's mode, `checkout_id`, `status`
 *   GET  /v1/schedules/{id}           seller (read_only): one series with periods_detail[]
 *   POST /v1/schedules/{id}/cancel    seller (payments): the seller's cancel, optional {reason}
 *   GET  /schedule/{id}               none: the buyer's view and how to cancel (an sch_ id; a slug there is the seller catalogue)
 *   POST /schedule/{id}/cancel        none: the payer's cancel ({signature} | {authorizations} | {payer} for a test-mode series)
 *
 * The buyer routes need no credential: the payer's signature (or, in test
 * mode, address) is what the schedules service checks.
 */
export function scheduleRoutes({ clients }: GatewayDeps, schedules: ScheduleOperations): Router {
  const router = Router();
  router.get("/v1/schedules", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await schedules.list(credentialOf(req), req.query));
  });
  router.get("/v1/schedules/:id", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await schedules.get(credentialOf(req), String(req.params.id)));
  });
  router.post("/v1/schedules/:id/cancel", requireScope(clients, "payments"), async (req, res) => {
    res.json(await schedules.cancel(credentialOf(req), String(req.params.id), req.body));
  });
  router.get("/schedule/:id", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(await schedules.buyerView(String(req.params.id)));
  });
  router.post("/schedule/:id/cancel", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(await schedules.buyerCancel(String(req.params.id), req.body));
  });
  return router;
}
