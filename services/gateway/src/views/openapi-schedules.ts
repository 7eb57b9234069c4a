import { SCHEDULE_STATUSES } from "./schedules";
import { bool, caip2, idOf, object, orNull, ref, str, strOrNull, timestamp, timestampOrNull, url, type Schema } from "./openapi-schema";

/**
 * Recurring series (ADR 20) in the OpenAPI document: the seller's
 * /v1/schedules operations, the buyer's cancel, and the shapes a checkout's
 * prepare and paid answers add for a series. openapi.ts merges them in and
 * hands over its operation helpers (as for openapi-escrow.ts). GET
 * /schedule/{id} shares its path with the seller catalogue's page
 * (/schedule/{slug}, openapi-catalogue.ts), which documents both answers.
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };

export interface ScheduleOperationKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  authenticated: (minimumScope: "read_only" | "payments" | "full") => Part;
  bodyProblems: Part;
  use: (name: "NotFound" | "Conflict" | "InvalidRequest" | "Unavailable") => unknown;
  json: (description: string, schema: Schema) => unknown;
  body: (name: "ScheduleCancel" | "ScheduleBuyerCancel") => unknown;
  pathParam: (name: string, schema: Schema, description?: string) => unknown;
  pageQuery: unknown[];
}

/** Request bodies a client could send as they are. */
export const SCHEDULE_EXAMPLES = {
  ScheduleCancel: { reason: "The customer moved to the yearly plan." },
  ScheduleBuyerCancel: { signature: `0x${"11".repeat(65)}` },
};

const scheduleId = idOf("sch");
const hex32: Schema = { type: "string", pattern: "^0x[0-9a-fA-F]{64}$" };
const whole: Schema = { type: "integer", minimum: 0 };
const unixSeconds: Schema = { type: "integer", minimum: 0, description: "Unix seconds (the authorization's own bound; EIP-3009 counts both ends exclusive)" };

export function scheduleResponseSchemas(): Record<string, Schema> {
  const summaryProperties: Record<string, Schema> = {
    id: scheduleId,
    object: { const: "schedule" },
    url: { ...url, description: "The buyer's view: BASE_URL/schedule/{id}" },
    status: { enum: [...SCHEDULE_STATUSES] },
    checkout_id: str,
    periods: { type: "integer", minimum: 2, maximum: 24, description: "Periods, period 0 (paid at purchase) included" },
    periods_settled: whole,
    interval_days: { type: "integer", minimum: 1, maximum: 366 },
    paid_through: { ...timestampOrNull, description: "The end of the last settled period's window" },
    next_charge_at: { ...timestampOrNull, description: "When the next unsettled period's window opens (or its next retry); null once the series ended" },
    payer: str,
    network: caip2,
    amount_usd: { ...str, description: "One period's price" },
    total: { type: "integer", minimum: 0, description: "What one period moves, fee included, USDC atomic units (as receipts count it)" },
    test_mode: bool,
    created_at: timestamp,
    ended_at: timestampOrNull,
    cancelled_by: { enum: ["buyer", "seller", "system", null] },
    cancel_reason: strOrNull,
  };
  const period = object(
    {
      period: whole,
      status: { enum: ["settled", "scheduled", "due", "retrying", "lapsed", "cancelled"] },
      valid_after: { ...timestampOrNull, description: "The period's window opens after this instant" },
      valid_before: { ...timestampOrNull, description: "… and closes before this one" },
      payment_id: { ...orNull(idOf("pay")), description: "The period's payment, once it was charged" },
      receipt_url: { ...orNull(url), description: "BASE_URL/r/{payment_id}; null until the period settled" },
      settled_at: timestampOrNull,
      attempts: whole,
      last_failure: strOrNull,
      next_attempt_at: timestampOrNull,
      cancelled_onchain: { ...bool, description: "The payer's cancelAuthorization for this period landed on chain" },
    },
    { closed: true, description: "One period of a series" },
  );
  const detailProperties = { ...summaryProperties, periods_detail: { type: "array", items: period, description: "Every period, 0 first" } };
  const typedData: Schema = {
    type: "object",
    required: ["domain", "types", "primaryType", "message"],
    description: "EIP-712 typed data (eth_signTypedData_v4)",
  };
  return {
    ScheduleSummary: object(summaryProperties, { closed: true, description: "A recurring series as lists show it" }),
    Schedule: object(detailProperties, { closed: true, description: "A recurring series with every period" }),
    ScheduleList: object({ schedules: { type: "array", items: ref("ScheduleSummary") }, has_more: bool, next_cursor: strOrNull }, { closed: true }),
    ScheduleCancelled: object(
      { ...detailProperties, already_ended: { ...bool, description: "The series had ended before this cancel: nothing changed" } },
      { closed: true, description: "The series after the seller's cancel" },
    ),
    ScheduleBuyerView: object(
      {
        ...detailProperties,
        cancel: {
          ...orNull(
            object(
              {
                message: { ...str, description: "The text the payer signs with EIP-191 (personal_sign) to stop the charging" },
                onchain: {
                  type: "array",
                  items: object(
                    { period: whole, nonce: hex32, valid_before: timestampOrNull, typed_data: typedData },
                    { closed: true, description: "A held period's USDC CancelAuthorization for the payer to sign" },
                  ),
                  description: "One per held period still cancellable on chain (the live network's USDC, or the rehearsal token for a test-mode series)",
                },
                how: str,
              },
              { closed: true },
            ),
          ),
          description: "How the payer cancels; null once the series ended",
        },
      },
      { closed: true, description: "A series as its buyer sees it (no credential), with how to cancel it" },
    ),
    ScheduleBuyerCancelled: object(
      {
        schedule: ref("Schedule"),
        already_ended: bool,
        note: { ...str, description: "What the cancel means for the held authorizations" },
        onchain: {
          type: "array",
          items: object(
            { nonce: hex32, period: whole, status: str, tx_hash: strOrNull, reason: strOrNull },
            { closed: true, description: "A submitted cancelAuthorization's outcome: cancelled, used or refused" },
          ),
        },
      },
      { closed: true, description: "The series after the payer's cancel" },
    ),
    PurchasedSchedule: object(
      {
        id: scheduleId,
        url: { ...url, description: "The buyer's view (GET it to see the series and cancel it)" },
        status: { const: "active" },
        periods: { type: "integer", minimum: 2, maximum: 24 },
        periods_settled: whole,
        interval_days: { type: "integer", minimum: 1, maximum: 366 },
        paid_through: timestampOrNull,
        next_charge_at: timestampOrNull,
      },
      { closed: true, description: "The recurring series this purchase started (its period 0 settled)" },
    ),
    PreparedPeriod: object(
      {
        period: { type: "integer", minimum: 1, maximum: 23 },
        valid_after: unixSeconds,
        valid_before: unixSeconds,
        typed_data: typedData,
        payload_stub: object({ x402Version: { enum: [2] }, accepted: ref("PaymentRequirement"), payload: { type: "object" } }, { optional: ["accepted"] }),
      },
      {
        closed: true,
        description: "A held period's authorization, rendered as period 0's: sign typed_data, put the signature in payload_stub.payload.signature",
      },
    ),
  };
}

/** The series' fields of a 402 requirement's extra (snake_case, as extra.escrow's). */
export const requirementScheduleExtra: Schema = object(
  {
    interval_days: { type: "integer", minimum: 1, maximum: 366 },
    periods: { type: "integer", minimum: 2, maximum: 24 },
    windows: {
      type: "array",
      items: object({ period: { type: "integer", minimum: 1 }, opens_after_seconds: whole, closes_after_seconds: whole }, { closed: true }),
      description: "Each held period's window, in seconds after the purchase (the prepared authorizations carry the absolute times)",
    },
  },
  {
    closed: true,
    description:
      "A recurring series: period 0 is this payment; each later period is an authorization signed now (POST …/prepare answers them in schedule[]), valid only inside its window and charged on its date",
  },
);

export function schedulePaths(k: ScheduleOperationKit): Record<string, Record<string, unknown>> {
  const ID = k.pathParam("id", scheduleId, "The series' id");
  return {
    "/v1/schedules": {
      get: k.operation(
        {
          operationId: "listSchedules",
          summary: "The account's recurring series, newest first",
          description: "Any seller credential; a test key lists test-mode series, a live key live ones. `checkout_id` and `status` filter.",
          parameters: [
            {
              name: "checkout_id",
              in: "query",
              required: false,
              schema: { type: "string", minLength: 1, maxLength: 64 },
              description: "Only this checkout's series",
            },
            { name: "status", in: "query", required: false, schema: { enum: [...SCHEDULE_STATUSES] }, description: "Only series in this status" },
            ...k.pageQuery,
          ],
          responses: { "200": k.json("A page of series", ref("ScheduleList")), "422": k.use("InvalidRequest"), "503": k.use("Unavailable") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/schedules/{id}": {
      get: k.operation(
        {
          operationId: "getSchedule",
          summary: "One recurring series, with every period",
          description: "periods_detail[]: each period's status, window and, once settled, its receipt. Another account's series (or an unknown id) is 404.",
          parameters: [ID],
          responses: { "200": k.json("The series", ref("Schedule")), "404": k.use("NotFound"), "503": k.use("Unavailable") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/schedules/{id}/cancel": {
      post: k.operation(
        {
          operationId: "cancelSchedule",
          summary: "Cancel a recurring series (seller)",
          description:
            "No held period is charged from then on; settled periods stay settled (schedule.cancelled fires). The body is optional: {reason}. A series already ended answers as it is, already_ended true.",
          parameters: [ID],
          requestBody: { ...(k.body("ScheduleCancel") as Record<string, unknown>), required: false },
          responses: { "200": k.json("The series now", ref("ScheduleCancelled")), "404": k.use("NotFound"), "503": k.use("Unavailable") },
        },
        k.authenticated("payments"),
        k.bodyProblems,
      ),
    },
    "/schedule/{id}/cancel": {
      post: k.operation(
        {
          operationId: "cancelScheduleByBuyer",
          summary: "Cancel a recurring series (its payer; no credential)",
          description:
            "Exactly one of: {signature} (the payer's EIP-191 signature of GET /schedule/{id}'s cancel.message: charging stops, the held authorizations stay valid on chain until their windows end); {authorizations: [{nonce, signature: {v, r, s}}]} (the payer's signatures of cancel.onchain's typed data: the service submits each, after which no held period can be charged by anyone); {payer} (a test-mode series only). A signature that is not the payer's is 422 (or 403).",
          parameters: [ID],
          requestBody: k.body("ScheduleBuyerCancel"),
          responses: {
            "200": k.json("The series now, and each on-chain cancel's outcome", ref("ScheduleBuyerCancelled")),
            "403": { $ref: "#/components/responses/Forbidden" },
            "404": k.use("NotFound"),
            "409": k.use("Conflict"),
            "503": k.use("Unavailable"),
          },
        },
        k.bodyProblems,
      ),
    },
  };
}
