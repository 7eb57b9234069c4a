import type { DeliveryOutcomeName } from "@c402/contracts";
import { failpoint } from "@c402/failpoints";
import { notChargedProblem, ProblemError, rehearsalCapProblem } from "@c402/problems";
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
  /** The recorded delivery; undefined while it still runs inside its deadline; one never started is recorded abandoned. */
  conclude(paymentId: string): Promise<DeliveryRecord | undefined>;
  /** Checks the buyer's parameters as a delivery would (422 naming one); calls nothing. */
  check(origin: RelayOrigin, params: Record<string, string>): Promise<void>;
}

/** The longest an origin may take, whatever the authorization allows. */
export const ORIGIN_TIMEOUT_MAX_MS = 30_000;
/** Below this there is no point calling the origin: the buyer is asked for a longer validity instead. */
export const ORIGIN_TIMEOUT_MIN_MS = 1_000;
/** Time kept after the origin answered beyond the settlement wait: verification's 6 s margin before validBefore and the hops, rounded up. */
const SETTLE_MARGIN_MS = 10_000;

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

  /** The origin's time for a payment; refused (nothing recorded is kept) when its authorization leaves too little. */
  deadlineFor(row: PaymentRow): number {
    const deadline = originDeadlineMs(Number(row.valid_before ?? 0n), this.opts.now().getTime(), this.opts.settleTimeoutMs);
    if (deadline === undefined) {
      throw paymentRejected(
        "invalid_exact_evm_payload_authorization_valid_before",
        "This authorization expires too soon for the seller's origin to answer and the payment to settle. Sign one valid for at least a minute (the quote's maxTimeoutSeconds). Nothing was charged.",
      );
    }
    return deadline;
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
      // Refused before the origin was called (the buyer's parameters, a short validity): the claim goes.
      if (err instanceof ProblemError && (err.slug === "invalid-request" || err.slug === "payment-required")) await store.release(this.opts.db, claimed.id);
      throw err;
    }
    failpoint("after-origin-answer");
    return this.record(claimed, delivery);
  }

  /**
   * A claimed relay payment resumed (by the sweep, or a duplicate request):
   * its delivery as recorded, carried on; undefined while it still runs.
   */
  async resume(claimed: PaymentRow): Promise<Delivered | undefined> {
    const delivery = await this.opts.delivery.conclude(claimed.id);
    return delivery && this.record(claimed, delivery);
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
