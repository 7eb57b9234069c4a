import { REPORT_CATEGORIES, REPORT_KINDS, REPORT_STATUSES } from "@c402/contracts";
import { bool, checkoutOrArticleId, idOf, object, ref, str, strOrNull, timestamp, timestampOrNull, url, usd, type Schema } from "./openapi-schema";

/**
 * The report operations and shapes of the OpenAPI document (openapi.ts
 * merges them in, handing over its operation helpers so both files build
 * operations and problems the same way; schemas use openapi-schema.ts).
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };

export interface OperationKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  authenticated: (minimumScope: "read_only" | "payments") => Part;
  bodyProblems: Part;
  use: (name: "NotFound" | "Conflict" | "InvalidRequest" | "RateLimited" | "Unavailable" | "PackageKeyRefused") => unknown;
  json: (description: string, schema: Schema, headers?: Record<string, unknown>) => unknown;
  body: (name: "ReportCreate" | "ReportUpdate") => unknown;
  pathParam: (name: string, schema: Schema, description?: string) => unknown;
  checkoutId: unknown;
  pageQuery: unknown[];
  rateLimitHeaders: () => Record<string, unknown>;
}

/** Request bodies a client could send as they are. */
export const REPORT_EXAMPLES = {
  ReportCreate: { category: "stale_data", detail: "The forecast was yesterday's." },
  ReportUpdate: { status: "resolved", note: "The feed was stale for an hour; fixed at 14:05 UTC." },
};

export function reportResponseSchemas(): Record<string, Schema> {
  const category = { enum: REPORT_CATEGORIES };
  const kind = {
    enum: REPORT_KINDS,
    description: "buyer: the report names a receipt of the checkout (the payment is attached); anonymous: it does not",
  };
  return {
    ReportFiled: object(
      {
        id: idOf("rpt"),
        object: { const: "report" },
        checkout_id: checkoutOrArticleId,
        category,
        kind,
        receipt_id: { anyOf: [idOf("pay"), { type: "null" }] },
        status: { const: "open" },
        created_at: timestamp,
        refunds: { const: false, description: "A report never moves money" },
        next: { type: "string", minLength: 1, description: "What happens next, in words" },
      },
      { closed: true, description: "The confirmation of a filed report" },
    ),
    ReportPayment: object(
      {
        id: idOf("pay"),
        amount_usd: usd,
        total: { type: "integer", minimum: 0, description: "What the buyer paid, fee included, in USDC atomic units" },
        network: str,
        payer: str,
        subject: str,
        tx_hash: str,
        test_mode: bool,
        settled_at: timestampOrNull,
        delivery: object({ outcome: str }),
        receipt_url: url,
      },
      { closed: true, description: "The payment a buyer report is attached to, as its receipt showed it when the report was filed" },
    ),
    Report: object(
      {
        id: idOf("rpt"),
        object: { const: "report" },
        checkout_id: checkoutOrArticleId,
        category,
        detail: strOrNull,
        kind,
        status: { enum: REPORT_STATUSES },
        note: { ...strOrNull, description: "The seller's latest note (given when acknowledging or resolving)" },
        payment: { anyOf: [ref("ReportPayment"), { type: "null" }] },
        test_mode: { type: "boolean", description: "The report concerns rehearsal: a rehearsal payment, or a checkout not armed when it was filed" },
        created_at: timestamp,
        updated_at: timestamp,
        acknowledged_at: timestampOrNull,
        resolved_at: timestampOrNull,
      },
      { closed: true, description: "A report on one of the account's checkouts, with the payment it is attached to" },
    ),
    ReportList: object({ reports: { type: "array", items: ref("Report") }, has_more: bool, next_cursor: strOrNull }),
  };
}

export function reportPaths(k: OperationKit): Record<string, Record<string, unknown>> {
  const list = (summary: string, parameters: unknown[], extra: Record<string, unknown> = {}) =>
    k.operation(
      { summary, parameters, responses: { "200": k.json("A page of reports, newest first", ref("ReportList")), "422": k.use("InvalidRequest"), ...extra } },
      k.authenticated("read_only"),
    );
  return {
    "/v1/checkouts/{id}/reports": {
      post: k.operation(
        {
          operationId: "fileReport",
          summary: "Report a problem with a checkout (no credential; a report never refunds)",
          description:
            "Anyone may report, for a checkout in any state (void and expired ones too). With `receipt_id` (a receipt of this checkout) the report is a buyer report with the payment attached; a receipt of another checkout, or none, answers 422 naming receipt_id. A package key (`Authorization: Bearer <package_key>`, without receipt_id) names its purchase the same way; another checkout's or an unknown key is 401. Without it the report is anonymous and rate limited harder: 20 an hour per client address, 5 an hour per address and checkout; buyer reports 20 an hour per receipt and 60 per address. The seller is told (their reports list, a `checkout.reported` event) and can acknowledge or resolve it.",
          parameters: [
            k.checkoutId,
            {
              name: "Authorization",
              in: "header",
              required: false,
              schema: { type: "string", pattern: "^Bearer pk_(test|live)_[0-9A-Za-z]{32}$" },
              description: "Bearer <package_key>: the package's purchase is the report's receipt (any other Authorization is ignored)",
            },
          ],
          requestBody: k.body("ReportCreate"),
          responses: {
            "201": k.json("Filed: what happens next", ref("ReportFiled"), k.rateLimitHeaders()),
            "401": k.use("PackageKeyRefused"),
            "404": k.use("NotFound"),
            "429": k.use("RateLimited"),
            "503": k.use("Unavailable"),
          },
        },
        k.bodyProblems,
      ),
      get: list("The reports on one of the account's checkouts (another account's checkout is 404)", [k.checkoutId, ...k.pageQuery], {
        "404": k.use("NotFound"),
      }),
    },
    "/v1/reports": {
      get: list("Every report on the account's checkouts", k.pageQuery),
    },
    "/v1/reports/{report_id}": {
      patch: k.operation(
        {
          operationId: "updateReport",
          summary: "Acknowledge or resolve a report (resolving needs a note); there is no DELETE",
          description:
            "open → acknowledged → resolved, or open → resolved; anything else (acknowledging twice, changing a resolved report) answers 409. A note replaces the previous one. Recorded as a `report.updated` account event.",
          parameters: [k.pathParam("report_id", { type: "string", pattern: "^rpt_[0-9A-Za-z]{24}$" }, "Report id")],
          requestBody: k.body("ReportUpdate"),
          responses: { "200": k.json("The report", ref("Report")), "404": k.use("NotFound"), "409": k.use("Conflict") },
        },
        k.authenticated("payments"),
        k.bodyProblems,
      ),
    },
  };
}
