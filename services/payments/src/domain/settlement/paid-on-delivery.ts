import { ORIGIN_HOP_MARGIN_MS, ORIGIN_TIMEOUT_MAX_MS, PAID_REQUEST_TIMEOUT_MS, type DeliveryOutcomeName } from "@c402/contracts";
import { failpoint } from "@c402/failpoints";
import { notChargedProblem, ProblemError, rehearsalCapProblem } from "@c402/problems";
import { isStellarNetworkId, isSvmNetwork } from "@c402/x402";
import { paymentsStore as store, type PaymentRow, type PaymentsDb } from "../../store/payments-store";
import type { CheckoutForPayment, RelayOrigin } from "../requirements";
import { paymentRejected } from "../verify-payment";

/** A relay delivery as fulfillment recorded it (one per payment). */
export interface DeliveryRecord {
  outcome: DeliveryOutcomeName;
  charged: boolean;
  /** The origin's status; 0 when it did not answer. */
  status: number;
  contentType: string | null;
  /** The origin's answer (charged outcomes only). */
  body: Buffer;
  latencyMs: number;
  bytes: number;
  /** Why an uncharged outcome was not charged (origin_error, timeout, unreachable, …). */
  reason: string;
  /** A rehearsal delivery counted just now: what the checkout's daily cap has left. */
  testDeliveriesLeft?: number;
  /** A rehearsal delivery: seconds until the daily cap starts afresh. */
  testDeliveriesResetSeconds?: number;
}

/** Where relay origins are called (fulfillment, over gRPC): at most once per payment, recorded under its id. */
export interface OriginDelivery {
  deliver(req: {
    paymentId: string;
    checkoutId: string;
    accountId: string;
    origin: RelayOrigin;
    params: Record<string, string>;
    deadlineMs: number;
    testMode: boolean;
  }): Promise<DeliveryRecord>;
  /** The recorded delivery (a settled payment's, to redeliver it); undefined while it still runs inside its deadline. */
  conclude(paymentId: string): Promise<DeliveryRecord | undefined>;
  /** Checks the buyer's parameters as a delivery would (422 naming one); calls nothing. */
  check(origin: RelayOrigin, params: Record<string, string>): Promise<void>;
}

/** Below this there is no point calling the origin: the buyer is asked for a longer validity instead. */
export const ORIGIN_TIMEOUT_MIN_MS = 1_000;
/** Time kept after the origin answered beyond the settlement wait: verification's 6 s margin before validBefore and the hops, rounded up. */
const SETTLE_MARGIN_MS = 10_000;
/** Kept between the settlement wait's end and the moment the buyer's request stops waiting: the answer's way back. */
export const ANSWER_MARGIN_MS = 3_000;

/**
 * When the buyer's request stops waiting: its caller's deadline, and never
 * later than PAID_REQUEST_TIMEOUT_MS from now (a caller that set none gets that).
 */
export function answerByOf(callerDeadline: Date | undefined, now: Date): Date {
  const latest = now.getTime() + PAID_REQUEST_TIMEOUT_MS;
  return new Date(Math.min(callerDeadline?.getTime() ?? latest, latest));
}

/** When a claim's buyer stops waiting (a row written before answer_by was recorded: its last move plus the longest wait). */
function answerByOfRow(row: PaymentRow): number {
  return row.answer_by?.getTime() ?? row.updated_at.getTime() + PAID_REQUEST_TIMEOUT_MS;
}

/**
 * How long the origin may take so that a delivery still settles inside the
 * authorization's validity (docs/adr/0009-relay-delivery-deadline.md): the
 * time left before validBefore minus the settlement wait and its margin (25 s
 * with the default 15 s wait), at most 30 s; undefined under 1 s.
 */
export function originDeadlineMs(validBeforeSeconds: number, nowMs: number, settleTimeoutMs: number): number | undefined {
  const left = validBeforeSeconds * 1000 - nowMs - settleTimeoutMs - SETTLE_MARGIN_MS;
  if (left < ORIGIN_TIMEOUT_MIN_MS) return undefined;
  return Math.min(Math.floor(left), ORIGIN_TIMEOUT_MAX_MS);
}

export interface Delivered {
  /** The payment, `delivered` (or further on, when another request got there first). */
  row: PaymentRow;
  delivery: DeliveryRecord;
}

/**
 * The delivery step of a relay sale (ADR 9), shared by the live and the
 * rehearsal settlement: on a claimed payment, call the origin once, then
 * record a charged outcome as `delivered` (the settlement goes on from the
 * record) or release the claim (nothing was broadcast, nothing is owed) and
 * answer the buyer why.
 */
export class PaidOnDelivery {
  constructor(
    private readonly opts: {
      db: PaymentsDb;
      delivery: OriginDelivery;
      /** The settlement wait after delivery (kept out of the origin's time). */
      settleTimeoutMs: number;
      now: () => Date;
    },
  ) {}

  /**
   * The origin's time for a payment: what its authorization's validity leaves
   * (refused with 402, nothing kept, when too little) and what its buyer's
   * request leaves after the settlement wait and the margins, so the origin's
   * own timeout fires first (ADR 9, "Deadlines").
   */
  deadlineFor(row: PaymentRow): number {
    const now = this.opts.now().getTime();
    const byValidity = originDeadlineMs(Number(row.valid_before ?? 0n), now, this.opts.settleTimeoutMs);
    if (byValidity === undefined) throw expiresTooSoon(row.network);
    const byRequest = Math.floor(answerByOfRow(row) - now - this.opts.settleTimeoutMs - ANSWER_MARGIN_MS - ORIGIN_HOP_MARGIN_MS);
    if (byRequest < ORIGIN_TIMEOUT_MIN_MS) {
      throw new ProblemError("unavailable", {
        message: "This request left too little time to call the seller's origin and settle. Nothing was charged.",
        help: { fix: "Present the same payment again.", retry_is_safe: true },
        retryAfterSeconds: 1,
      });
    }
    return Math.min(byValidity, byRequest);
  }

  /**
   * Whether a delivered payment can still be settled and answered before its
   * buyer's request stops waiting (the settlement wait and the way back kept).
   */
  canSettleInTime(row: PaymentRow): boolean {
    return this.opts.now().getTime() + this.opts.settleTimeoutMs + ANSWER_MARGIN_MS <= answerByOfRow(row);
  }

  /**
   * Releases a relay or mcp payment that nothing broadcast (claimed or
   * delivered) once its buyer's request can no longer be answered: the buyer
   * was told it failed (or the request is gone with a crashed process), so
   * settling it now would charge for an answer the buyer never received. The
   * same payment may be presented again. Answers whether it was released.
   */
  async releaseIfUnanswered(row: PaymentRow): Promise<boolean> {
    if (row.fulfillment !== "relay" && row.fulfillment !== "mcp") return false;
    if (row.status !== "claimed" && row.status !== "delivered") return false;
    if (this.opts.now().getTime() < answerByOfRow(row) + ANSWER_MARGIN_MS) return false;
    return store.release(this.opts.db, row.id);
  }

  /** Delivers for a freshly claimed relay payment. */
  async deliver(claimed: PaymentRow, checkout: CheckoutForPayment, params: Record<string, string>): Promise<Delivered> {
    const origin = checkout.relay;
    if (!origin) throw new ProblemError("internal", "A relay payment's checkout has no origin.");
    let delivery: DeliveryRecord;
    try {
      const deadlineMs = this.deadlineFor(claimed);
      delivery = await this.opts.delivery.deliver({
        paymentId: claimed.id,
        checkoutId: checkout.id,
        accountId: checkout.accountId,
        origin,
        params,
        deadlineMs,
        testMode: claimed.test_mode,
      });
    } catch (err) {
      // No delivery to settle: refused before the origin was called (the buyer's parameters, a short validity), or
      // fulfillment failed or did not answer in time. The claim goes: an answer recorded there later belongs to this
      // claim's id only, which nothing settles any more, so the buyer's error answer stays true.
      await store.release(this.opts.db, claimed.id);
      throw err;
    }
    failpoint("after-origin-answer");
    return this.record(claimed, delivery);
  }

  /** The recorded answer of a relay payment that was delivered (a redelivery); undefined for inline. */
  async recorded(row: PaymentRow): Promise<DeliveryRecord | undefined> {
    if (row.fulfillment === "inline") return undefined;
    const delivery = await this.opts.delivery.conclude(row.id);
    if (!delivery?.charged) throw new ProblemError("internal", "A delivered payment has no charged delivery on record.");
    return delivery;
  }

  private async record(claimed: PaymentRow, delivery: DeliveryRecord): Promise<Delivered> {
    if (!delivery.charged) {
      await store.release(this.opts.db, claimed.id);
      throw notCharged(delivery);
    }
    if (!this.canSettleInTime(claimed)) {
      // The origin's answer came too late to settle before the buyer stops waiting: not charged, never settled later.
      await store.release(this.opts.db, claimed.id);
      throw notCharged({ ...delivery, reason: "timeout" });
    }
    const row = await store.advance(this.opts.db, claimed.id, ["claimed"], {
      status: "delivered",
      delivery_outcome: delivery.outcome,
      delivery_status: delivery.status,
      delivery_latency_ms: delivery.latencyMs,
      delivery_bytes: delivery.bytes,
    });
    // Another request recorded it first: carry on from where it stands.
    const current = row ?? (await store.findById(this.opts.db, claimed.id));
    if (!current) throw releasedMeanwhile();
    return { row: current, delivery };
  }
}

/** The buyer's answer to a payment whose validity leaves the origin too little time (refused before it is called). */
function expiresTooSoon(network: string): ProblemError {
  if (isStellarNetworkId(network)) {
    return paymentRejected(
      "invalid_exact_stellar_signature_expires_too_soon",
      "This authorization's signature expiration ledger comes too soon for the seller's origin to answer and the payment to settle. Sign the requirement again (the official client signs one valid for the quote's maxTimeoutSeconds). Nothing was charged.",
    );
  }
  if (isSvmNetwork(network)) {
    return paymentRejected(
      "invalid_exact_svm_payload_blockhash_expires_too_soon",
      "This transaction's blockhash expires too soon for the seller's origin to answer and the payment to settle. Sign the requirement again (a client fetches a fresh blockhash as it signs). Nothing was charged.",
    );
  }
  return paymentRejected(
    "invalid_exact_evm_payload_authorization_valid_before",
    "This authorization expires too soon for the seller's origin to answer and the payment to settle. Sign one valid for at least a minute (the quote's maxTimeoutSeconds). Nothing was charged.",
  );
}

/** The buyer's answer to a delivery that was not charged: the claim was released, nothing moved. */
export function notCharged(delivery: DeliveryRecord): ProblemError {
  if (delivery.outcome === "test_cap_reached") return rehearsalCapProblem(delivery.testDeliveriesResetSeconds ?? 1);
  return notChargedProblem(
    { reason: delivery.outcome === "abandoned" ? "abandoned" : delivery.reason, status: delivery.status },
    { retry: "the same payment can be presented again.", fix: "Present the same payment again later, or report the problem to the seller." },
  );
}

/** A duplicate found the claim released by the request that delivered (not charged). */
export function releasedMeanwhile(): ProblemError {
  return new ProblemError("conflict", {
    message: "This payment was not charged: its delivery did not succeed and the claim was released. Present it again to retry.",
    help: { fix: "Present the same payment again.", retry_is_safe: true },
    retryAfterSeconds: 1,
  });
}

/** A duplicate found the payment still being delivered by the request that claimed it: nothing is broadcast yet. */
export function stillDelivering(): ProblemError {
  return new ProblemError("conflict", {
    message: "An earlier request with this payment is still waiting for the seller's origin. Nothing is charged unless that request delivers.",
    help: { fix: "Present the same payment again in a few seconds: it is settled at most once.", retry_is_safe: true },
    retryAfterSeconds: 5,
  });
}
