import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { paymentEventsV1 } from "@c402/contracts";
import { invalid } from "@c402/problems";
import {
  heldPeriodNonce,
  isEvmPayload,
  isValidEoaSignature,
  v1NetworkName,
  type ExactEvmAuthorization,
  type PaymentPayload,
  type PaymentRequirements,
} from "@c402/x402";
import { getAddress, isAddress } from "viem";
import type { PaymentRow } from "../store/payments-store";
import { decodePayment, paymentRejected } from "./verify-payment";

/**
 * A recurring series (ADR 20): the purchase pays period 0 and brings one
 * signed EIP-3009 authorization per later period, each valid only inside its
 * own window. Everything here is pure: the windows a 402 and /prepare state,
 * the checks every held payload passes before anything is recorded, and what
 * period 0's row keeps of the series.
 */

/** A day on the live clock. The test face's compressed day is SCHEDULE_REHEARSAL_DAY_SECONDS (config). */
export const DAY_SECONDS = 86_400;

/**
 * How far the anchor a buyer's held windows imply may lie past "now" by the
 * clock that checks them (a block mined between prepare and pay, clocks a
 * little apart); it may lie up to the requirement's maxTimeoutSeconds before.
 */
export const ANCHOR_TOLERANCE_SECONDS = 30;

/** A series checkout's frozen terms (catalog's CheckoutSchedule). */
export interface SeriesTerms {
  intervalDays: number;
  /** Counts period 0: 2 to 24. */
  periods: number;
}

/** One held period as period 0's row keeps it: the authorization and the buyer's signature (never logged, never on the bus). */
export interface HeldAuthorization {
  period: number;
  authorization: ExactEvmAuthorization;
  signature: string;
}

/** What period 0's payment row keeps of its series (column `series`). */
export interface SeriesRecord {
  interval_days: number;
  interval_seconds: number;
  periods: number;
  /** T: period k's window is (T + k·I, T + (k+1)·I), seconds. */
  anchor: number;
  /** The token's EIP-712 domain name and version the held authorizations are signed under (cancels are too). */
  token: { name: string; version: string };
  held: HeldAuthorization[];
}

/** The series interval in seconds on a rail whose day lasts `daySeconds`. */
export function intervalSecondsOf(terms: SeriesTerms, daySeconds: number): number {
  return terms.intervalDays * daySeconds;
}

/** A series requirement's `extra.schedule` (snake_case, as `extra.escrow`): each held period's window as seconds after the purchase. */
export function scheduleExtra(terms: SeriesTerms, daySeconds: number): Record<string, unknown> {
  const interval = intervalSecondsOf(terms, daySeconds);
  const windows = [];
  for (let k = 1; k < terms.periods; k++) windows.push({ period: k, opens_after_seconds: k * interval, closes_after_seconds: (k + 1) * interval });
  return { interval_days: terms.intervalDays, periods: terms.periods, windows };
}

/** Period k's authorization (k = 1 … periods-1): period 0's payer, payee and value, its own window from anchor T, and its derived nonce. */
export function heldAuthorizations(
  period0: ExactEvmAuthorization,
  anchor: number,
  intervalSeconds: number,
  periods: number,
): { period: number; authorization: ExactEvmAuthorization }[] {
  const held = [];
  for (let k = 1; k < periods; k++) {
    const validAfter = String(anchor + k * intervalSeconds);
    const validBefore = String(anchor + (k + 1) * intervalSeconds);
    held.push({
      period: k,
      authorization: { ...period0, validAfter, validBefore, nonce: heldPeriodNonce(period0.nonce, k, validAfter, validBefore) },
    });
  }
  return held;
}

/** What verifying the held payloads needs of the clock and chain of the purchase's rail. */
export interface HeldChecks {
  /** Now, in seconds, by the clock the token checks windows against (live: the latest block; test face: the wall clock). */
  now: bigint;
  /** Whether the nonce is already used or cancelled on chain (live only). */
  authorizationUsed?: (from: `0x${string}`, nonce: `0x${string}`) => Promise<boolean>;
}

/** The answer when a series is bought without its held periods (a plain X-PAYMENT retry, or a /pay without `schedule`). */
export function heldPeriodsMissing(terms: SeriesTerms, given: number): never {
  throw paymentRejected(
    "invalid_schedule_held_missing",
    `This checkout is a recurring series of ${terms.periods} periods: the purchase brings ${terms.periods - 1} held period payment(s) beside period 0's; ${given} came. ` +
      "Prepare it with POST /c/{id}/prepare (its schedule[] lists what to sign) and pay with POST /c/{id}/pay {payment, schedule: [payload, …]}.",
  );
}

/** A checkout that is no series given held payloads. */
export function notASeries(): never {
  throw invalid([{ field: "schedule", reason: "this checkout is not a recurring series: it takes no held period payments" }]);
}

/**
 * Verifies every held payload of a series purchase against period 0's
 * payment (ADR 20, payment rule 7) and answers what period 0's row keeps; the
 * first bad one refuses the whole purchase, naming `schedule[i]` and its
 * period. Nothing is written and nothing is sent.
 */
export async function verifyHeldPayloads(opts: {
  headers: readonly string[];
  period0: PaymentPayload;
  requirement: PaymentRequirements;
  terms: SeriesTerms;
  intervalSeconds: number;
  checks: HeldChecks;
}): Promise<SeriesRecord> {
  const { headers, period0, requirement, terms, intervalSeconds: I, checks } = opts;
  const expected = terms.periods - 1;
  if (headers.length < expected) heldPeriodsMissing(terms, headers.length);
  if (headers.length > expected) {
    throw paymentRejected("invalid_schedule_held_extra", `This series holds ${expected} period(s) after period 0; ${headers.length} held payments came.`);
  }
  const a0 = period0.payload.authorization;
  const payer = getAddress(a0.from);
  const held: HeldAuthorization[] = [];
  let anchor = 0;
  for (const [i, header] of headers.entries()) {
    const k = i + 1;
    const refuse = (reason: string, why: string): never => {
      throw paymentRejected(`invalid_schedule_${reason}`, `schedule[${i}] (period ${k}): ${why}`);
    };
    let presented;
    try {
      presented = decodePayment(header);
    } catch {
      return refuse("payload", "not a payment payload (base64 of the x402 payment JSON).");
    }
    if (!isEvmPayload(presented)) return refuse("payload", "a held period is an EIP-3009 authorization.");
    const payload = presented;
    const scheme = payload.x402Version === 2 ? payload.accepted?.scheme : payload.scheme;
    const network = payload.x402Version === 2 ? payload.accepted?.network : payload.network;
    if (scheme !== "exact") refuse("scheme", `scheme ${scheme}; a held period is exact.`);
    if (network !== requirement.network && network !== v1NetworkName(requirement.network))
      refuse("network", `network ${network}; period 0 is on ${requirement.network}.`);
    const a = payload.payload.authorization;
    if (!isAddress(a.from, { strict: false }) || getAddress(a.from) !== payer) refuse("payer", "from is not period 0's payer.");
    if (!isAddress(a.to, { strict: false }) || getAddress(a.to) !== getAddress(a0.to)) refuse("recipient", "it pays a different recipient than period 0.");
    if (a.value !== a0.value) refuse("value", `it is for ${a.value} atomic units; every period costs ${a0.value}.`);
    let validAfter: number, validBefore: number;
    try {
      validAfter = Number(BigInt(a.validAfter));
      validBefore = Number(BigInt(a.validBefore));
    } catch {
      return refuse("window", "validAfter and validBefore must be integers.");
    }
    if (k === 1) {
      anchor = validAfter - I;
      const now = Number(checks.now);
      if (anchor > now + ANCHOR_TOLERANCE_SECONDS || anchor < now - requirement.maxTimeoutSeconds - ANCHOR_TOLERANCE_SECONDS) {
        refuse("window", `its window is anchored at ${anchor}, not at this purchase (now ${now}); prepare again and sign what it answers.`);
      }
    }
    if (validAfter !== anchor + k * I || validBefore !== anchor + (k + 1) * I) {
      refuse("window", `its window must be (${anchor + k * I}, ${anchor + (k + 1) * I}): every period's window follows the one before, ${I} seconds long.`);
    }
    if (a.nonce.toLowerCase() !== heldPeriodNonce(a0.nonce, k, a.validAfter, a.validBefore).toLowerCase()) {
      refuse("nonce", "its nonce is not the one derived from period 0's nonce and this period (prepare again and sign what it answers).");
    }
    if (!(await isValidEoaSignature(requirement, a, payload.payload.signature))) {
      refuse("signature", "the signature does not recover to period 0's payer under the token's EIP-712 domain.");
    }
    if (checks.authorizationUsed && (await checks.authorizationUsed(payer, a.nonce as `0x${string}`)))
      refuse("nonce_used", "its nonce is already used or cancelled on chain.");
    held.push({ period: k, authorization: { ...a, from: payer, to: getAddress(a.to) }, signature: payload.payload.signature });
  }
  return {
    interval_days: terms.intervalDays,
    interval_seconds: I,
    periods: terms.periods,
    anchor,
    token: { name: String(requirement.extra.name ?? ""), version: String(requirement.extra.version ?? "") },
    held,
  };
}

/** The series of period 0's row, or undefined for any other row. */
export function seriesOf(row: Pick<PaymentRow, "series">): SeriesRecord | undefined {
  return (row.series ?? undefined) as SeriesRecord | undefined;
}

const at = (seconds: number) => timestampFromDate(new Date(seconds * 1000));

/** A series as a purchase answers it (SubmitPaymentResponse.schedule). */
export interface ScheduleSummary {
  id: string;
  periods: number;
  periodsSettled: number;
  intervalDays: number;
  /** The end of the last settled period. */
  paidThrough: Date;
  /** When the next held period's window opens; absent when none is left. */
  nextChargeAt?: Date;
}

/** The summary of a series with `settled` periods paid (period 0 first): paid through the end of the last, next charge when the next window opens. */
export function scheduleSummary(scheduleId: string, series: SeriesRecord, settled: number): ScheduleSummary {
  const paidThrough = new Date((series.anchor + settled * series.interval_seconds) * 1000);
  return {
    id: scheduleId,
    periods: series.periods,
    periodsSettled: settled,
    intervalDays: series.interval_days,
    paidThrough,
    ...(settled < series.periods ? { nextChargeAt: paidThrough } : {}),
  };
}

/** payment.settled's `series` (period 0 only): the terms and each held window and nonce, never a signature. */
export function seriesStartedMessage(accountId: string, series: SeriesRecord): paymentEventsV1.SeriesStarted {
  return create(paymentEventsV1.SeriesStartedSchema, {
    accountId,
    intervalDays: series.interval_days,
    periods: series.periods,
    held: series.held.map((h) => ({
      period: h.period,
      nonce: h.authorization.nonce.toLowerCase(),
      validAfter: at(Number(h.authorization.validAfter)),
      validBefore: at(Number(h.authorization.validBefore)),
    })),
  });
}
