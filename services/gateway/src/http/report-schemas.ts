import { REPORT_CATEGORIES } from "@c402/contracts";

/**
 * JSON Schemas of the report bodies, part of request-schemas.ts's `schemas`
 * (validation, the OpenAPI document and the body types all read them there).
 * Catalog applies the same rules again (docs/decisions.md, Reports).
 */

/** Characters (code points) of a report's `detail` and of a seller's `note`. */
export const REPORT_TEXT_MAX = 2_000;

export const reportSchemas = {
  /** POST /v1/checkouts/{id}/reports (public). */
  ReportCreate: {
    type: "object",
    additionalProperties: false,
    required: ["category"],
    properties: {
      category: { type: "string", enum: REPORT_CATEGORIES, description: "What went wrong (a closed set)." },
      detail: { type: "string", maxLength: REPORT_TEXT_MAX, description: "In the buyer's words; at most 2000 characters." },
      receipt_id: {
        type: "string",
        pattern: "^pay_[0-9A-Za-z]{24}$",
        description:
          "A receipt of this checkout (the payment id of /r/{payment_id}): the report is then a buyer report with the payment attached, rate limited per receipt. Without it the report is anonymous and rate limited harder, per client address.",
      },
    },
  },
  /** PATCH /v1/reports/{id}: acknowledge or resolve; resolving needs a note. */
  ReportUpdate: {
    type: "object",
    additionalProperties: false,
    required: ["status"],
    properties: {
      status: {
        type: "string",
        enum: ["acknowledged", "resolved"],
        description: "open → acknowledged → resolved, or open → resolved; any other move answers 409.",
      },
      note: {
        type: "string",
        maxLength: REPORT_TEXT_MAX,
        description: "What the seller did or will do; at most 2000 characters. Required to resolve (a blank note counts as none).",
      },
    },
  },
} as const;
