import { answered } from "@c402/rpc";
import { Router, type Request, type Response } from "express";
import { ReportFiling } from "../../operations/reports";
import { reportView } from "../../views/reports";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { validateBody } from "../validate";
import { packageKeyOf } from "../face-requests";

/**
 * Reports on checkouts (catalog owns them):
 *
 *   POST  /v1/checkouts/{id}/reports   anyone (no credential; a package key names its purchase): file a report
 *   GET   /v1/checkouts/{id}/reports   seller (read_only): one checkout's reports
 *   GET   /v1/reports                  seller (read_only): every report on the account's checkouts
 *   PATCH /v1/reports/{id}             seller (payments): acknowledge or resolve
 *
 * There is no DELETE (the router answers 405). A report never moves money.
 */

export function reportRoutes(deps: GatewayDeps, reports = new ReportFiling(deps)): Router {
  const { clients, settings } = deps;
  const router = Router();

  router.post("/v1/checkouts/:id/reports", async (req, res) => {
    res.status(201).json(await reports.file(req, res, String(req.params.id), req.body, packageKeyOf(req)));
  });

  /** One page of the account's reports, of one checkout when the path names it. */
  const listed = async (req: Request, res: Response) => {
    const page = pageRequestOf(req.query);
    const r = await clients.catalog.listReports({
      accountId: credentialOf(req).accountId,
      ...(req.params.id !== undefined ? { checkoutId: String(req.params.id) } : {}),
      ...servicePage(page),
    });
    const { items, ...more } = pageOf(r.reports, page.limit, createdAtKey);
    res.json({ reports: items.map((x) => reportView(x, settings.baseUrl)), ...more });
  };
  router.get("/v1/reports", requireScope(clients, "read_only"), listed);
  router.get("/v1/checkouts/:id/reports", requireScope(clients, "read_only"), listed);

  router.patch("/v1/reports/:id", requireScope(clients, "payments"), async (req, res) => {
    const body = validateBody("ReportUpdate", req.body);
    const cred = credentialOf(req);
    const r = await clients.catalog.updateReport({
      accountId: cred.accountId,
      actor: cred.actor,
      reportId: String(req.params.id),
      status: body.status,
      ...(body.note !== undefined ? { note: body.note } : {}),
    });
    res.json(reportView(answered(r.report, "report"), settings.baseUrl));
  });

  return router;
}
