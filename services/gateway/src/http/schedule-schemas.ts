/**
 * JSON Schemas of the recurring series' bodies (ADR 20), part of
 * request-schemas.ts's `schemas`: the validators and the OpenAPI document
 * both read them there.
 */

/** At most the held periods of the longest series (24 periods, period 0 paid at purchase). */
export const HELD_PERIODS_MAX = 23;
export const SCHEDULE_CANCEL_REASON_MAX = 500;

const HEX32 = "^0x[0-9a-fA-F]{64}$";

export const scheduleSchemas = {
  /** POST /v1/schedules/{id}/cancel: the seller's cancel; the body is optional. */
  ScheduleCancel: {
    type: "object",
    additionalProperties: false,
    description: "Cancels the series: no held period is charged from then on; settled periods stay settled. The body is optional.",
    properties: {
      reason: {
        type: "string",
        minLength: 1,
        maxLength: SCHEDULE_CANCEL_REASON_MAX,
        description: "Why, as the schedule.cancelled event and the series show it (cancel_reason).",
      },
    },
  },
  /** POST /schedule/{id}/cancel: the payer's cancel, exactly one of three ways. */
  ScheduleBuyerCancel: {
    type: "object",
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    description:
      "Exactly one of: signature (the payer's EIP-191 personal_sign of GET /schedule/{id}'s cancel.message: charging stops, the held authorizations stay valid on chain until their windows end); authorizations (the payer's signatures of cancel.onchain's CancelAuthorization typed data: the service submits each, after which no held period can be charged by anyone); payer (a test-mode series only: its payer's address).",
    properties: {
      signature: { type: "string", pattern: "^0x[0-9a-fA-F]{130}$", description: "The EIP-191 signature of cancel.message: 0x and 130 hex digits." },
      authorizations: {
        type: "array",
        minItems: 1,
        maxItems: HELD_PERIODS_MAX,
        description: "One per held period to cancel on chain: its nonce (cancel.onchain[].nonce) and the signature of its typed data, split.",
        items: {
          type: "object",
          additionalProperties: false,
          required: ["nonce", "signature"],
          properties: {
            nonce: { type: "string", pattern: HEX32, description: "The held period's nonce, 0x and 64 hex digits." },
            signature: {
              type: "object",
              additionalProperties: false,
              required: ["v", "r", "s"],
              properties: {
                v: { type: "integer", enum: [27, 28], description: "The signature's recovery id (27 or 28)." },
                r: { type: "string", pattern: HEX32, description: "0x and 64 hex digits." },
                s: { type: "string", pattern: HEX32, description: "0x and 64 hex digits." },
              },
            },
          },
        },
      },
      payer: { type: "string", pattern: "^0x[0-9a-fA-F]{40}$", description: "A test-mode series' payer (refused for a live series)." },
    },
  },
} as const;
