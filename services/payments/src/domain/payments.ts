import { accountActivityRow, type Actor } from "@c402/account-events";
import { HANDOFF_NONCE, isId, isCheckoutId, newId } from "@c402/ids";
import type { Breakdown } from "@c402/money";
import { ProblemError, invalid } from "@c402/problems";
import {
  isEvmNetworkId,
  isSolanaNetworkId,
  randomNonce,
  type AnyPaymentPayload,
  type ExactEvmAuthorization,
  type PaymentRequirements,
  type SettleResponse,
} from "@c402/x402";
import { getAddress, isAddress } from "viem";
import { paymentsStore as store, type LedgerFilter, type PaymentRow, type PaymentsDb } from "../store/payments-store";
import { settleResponseOf } from "./payment-wire";
import {
  assertSelling,
  isRehearsalRequirement,
  issuedRequirementsFor,
  sellingRefusal,
  priceOf,
  requirementsFor,
  settlementKindOf,
  type CheckoutForPayment,
  type Face,
  type Rail,
  type RelayOrigin,
  type SettlementKind,
} from "./requirements";
import type { DeliveryRecord, OriginDelivery } from "./settlement/paid-on-delivery";
import { settlementOf, type PurchaseCall, type Settlement } from "./settlement/settlement";
import {
  heldAuthorizations,
  heldPeriodsMissing,
  intervalSecondsOf,
  notASeries,
  scheduleSummary,
  seriesOf,
  verifyHeldPayloads,
  type ScheduleSummary,
  type SeriesTerms,
} from "./series";
import { decodePayment, evmPayloadOf, matchRequirement, paymentRejected } from "./verify-payment";

export type CheckoutSource = (checkoutId: string) => Promise<CheckoutForPayment>;

export interface PaymentsOptions {
  db: PaymentsDb;
  /** The checkout a payment is for (catalog): asked once per call. */
  checkouts: CheckoutSource;
  /**
   * How payments settle: a rehearsal settlement, and a live one per set of
   * networks (none configured: the live face of an armed checkout answers 503).
   */
  settlements: readonly Settlement[];
  /** Where relay and mcp calls are checked (fulfillment); absent: their parameters are checked only when paid. */
  originCalls?: Pick<OriginDelivery, "check">;
  /** Where a package checkout's settled payment gets its package (fulfillment); absent: package checkouts cannot be sold. */
  packages?: PackageIssuer;
  now?: () => Date;
  /** Called after a commit that wrote an outbox event. */
  onCommitted?: () => void;
}

export interface SubmitResult {
  /** held: an escrow sale's deposit is in escrow and the goods are delivered; no receipt until it is released (ADR 19). */
  status: "settled" | "held" | "pending";
  /** The payment row; a receipt once settled. */
  receipt: PaymentRow;
  redelivered: boolean;
  settleResponse: SettleResponse;
  /** The checkout paid for, as read for this payment. */
  checkout: CheckoutForPayment;
  /** A relay sale's delivery: the origin's answer (charged: the goods, or the buyer's own request error). */
  delivery?: DeliveryRecord;
  /** A package checkout's sale: the package bought (its key only on the answer that created it). */
  package?: IssuedPackage;
  /** A series purchase: the series it started (ADR 20). */
  schedule?: ScheduleSummary;
}

type SumsRow = Record<"payments" | "price_amount" | "provider_amount" | "platform_amount" | "fee_amount" | "total", string>;

/** Settled sales added up, in USDC atomic units (exact). */
export interface SalesSums {
  payments: number;
  priceAmount: bigint;
  providerAmount: bigint;
  platformAmount: bigint;
  feeAmount: bigint;
  total: bigint;
}

export interface SalesAnalytics {
  totals: SalesSums;
  days: { day: string; sums: SalesSums }[];
  checkouts: { checkoutId: string; title: string; sums: SalesSums }[];
  buyers: { distinct: number; returning: number };
}

/** A package as a purchase answers it. */
export interface IssuedPackage {
  /** Shown once: set only on the answer that created the package. */
  key?: string;
  id: string;
  callsIncluded: number;
  callsUsed: number;
  callsRemaining: number;
  expiresAt: Date | null;
  /** The package buys tool calls of an MCP server (else relay calls). */
  mcp: boolean;
}

/** Where packages are recorded and their keys minted (fulfillment, which spends them). */
export interface PackageIssuer {
  issue(req: {
    paymentId: string;
    checkoutId: string;
    accountId: string;
    testMode: boolean;
    calls: number;
    ttlDays: number;
    settledAt: Date;
    priceAtomic: bigint;
    origin: RelayOrigin;
  }): Promise<IssuedPackage>;
}

export interface Quote {
  accepts: PaymentRequirements[];
  price: Breakdown;
  settlement: SettlementKind;
  /** The checkout quoted, as read for this quote. */
  checkout: CheckoutForPayment;
}

/**
 * What a payer signs for a requirement: an EIP-3009 authorization (EVM; an
 * escrow deposit's with the terms' `salt` the payment brings back), or a
 * transaction the service prepared (Solana).
 */
export type Prepared = {
  network: string;
  requirement: PaymentRequirements;
  /** A series' held periods (1 … periods-1), each an authorization the buyer signs beside period 0's (ADR 20). */
  schedule?: { period: number; authorization: ExactEvmAuthorization }[];
} & ({ authorization: ExactEvmAuthorization; salt?: string; transaction?: undefined } | { transaction: string; authorization?: undefined; salt?: undefined });

/**
 * The purchase flow of the payments service: quote, prepare, verify and
 * settle, and the receipts. A face's payments go to the settlement of its
 * kind (rehearsal, or live on the payment's network), which records and
 * settles them; this class knows nothing of how either settles.
 */
export class Payments {
  private readonly db: PaymentsDb;
  private readonly checkouts: CheckoutSource;
  private readonly settlements: readonly Settlement[];
  private readonly now: () => Date;
  private readonly onCommitted: () => void;
  private readonly originCalls: Pick<OriginDelivery, "check"> | undefined;
  private readonly packages: PackageIssuer | undefined;

  constructor(opts: PaymentsOptions) {
    this.originCalls = opts.originCalls;
    this.packages = opts.packages;
    this.onCommitted = opts.onCommitted ?? (() => {});
    this.db = opts.db;
    this.checkouts = opts.checkouts;
    this.settlements = opts.settlements;
    this.now = opts.now ?? (() => new Date());
  }

  /** The rails the settlements of one kind offer a checkout: what a face settling that way quotes (an escrow checkout's: only escrow deposits, ADR 19). */
  private rails(kind: SettlementKind, checkout: CheckoutForPayment): Rail[] {
    const escrow = checkout.escrow !== undefined;
    const rails = this.settlements.filter((s) => s.kind === kind && (s.escrow ?? false) === escrow).flatMap((s) => s.rails());
    // A series sells on the rails its held periods settle on: Base only (ADR 20).
    return checkout.schedule ? rails.filter((r) => r.seriesDaySeconds !== undefined) : rails;
  }

  /** The requirements a face lists for a checkout now (its 402). */
  private requirements(face: Face, checkout: CheckoutForPayment): PaymentRequirements[] {
    return requirementsFor(face, checkout, this.rails(settlementKindOf(face, checkout), checkout));
  }

  /** Everything a face issues for a checkout now, which a presented payment must match: its 402's, then /prepare's own. */
  private issued(face: Face, checkout: CheckoutForPayment): PaymentRequirements[] {
    return issuedRequirementsFor(checkout, this.rails(settlementKindOf(face, checkout), checkout));
  }

  /** The settlement of a payment of this kind on `network`, for this checkout (503 when none is configured). */
  private settlement(kind: SettlementKind, network: string, checkout: CheckoutForPayment): Settlement {
    const settlement = settlementOf(this.settlements, kind, network, checkout.escrow !== undefined);
    if (!settlement) throw new ProblemError("unavailable", "No settleable network is available on this deployment right now.");
    return settlement;
  }

  async quote(checkoutId: string, face: Face): Promise<Quote> {
    const checkout = await this.checkouts(checkoutId);
    assertSelling(face, checkout);
    return { accepts: this.requirements(face, checkout), price: priceOf(checkout), settlement: settlementKindOf(face, checkout), checkout };
  }

  /**
   * What a payer signs for one of the face's requirements: on EVM the
   * EIP-3009 authorization (the EIP-712 typed data and payload stub follow
   * from the two); on Solana the transaction its settlement prepares, for the
   * listed requirement or, where the checkout carries a platform cut, the
   * prepared payment that carries it (ADR 16).
   */
  async prepare(checkoutId: string, face: Face, input: { payer: string; network?: string; params?: Record<string, string> }): Promise<Prepared> {
    const checkout = await this.checkouts(checkoutId);
    assertSelling(face, checkout);
    const kind = settlementKindOf(face, checkout);
    // Prepared requirements come first, so on their network /prepare offers the one that sells a checkout with a cut.
    const issued = this.issued(face, checkout);
    // One requirement per network.
    const preparable = issued.filter((r, i) => issued.findIndex((o) => o.network === r.network) === i && this.preparer(kind, r, checkout) !== undefined);
    const requirement = input.network === undefined ? preparable.find((r) => isEvmNetworkId(r.network)) : preparable.find((r) => r.network === input.network);
    if (!requirement) {
      const offered = preparable.length > 0 ? `must be one of ${preparable.map((r) => r.network).join(", ")}` : "no requirement of this face can be prepared";
      const solana =
        input.network !== undefined && isSolanaNetworkId(input.network) && issued.some((r) => r.network === input.network)
          ? "; this face's Solana requirement is signed as issued by an x402 SVM client, not prepared"
          : "";
      throw invalid([{ field: "network", reason: `${offered}${solana}` }]);
    }
    // A relay or mcp call's parameters are checked before anything is signed (inline goods take none: they are ignored).
    if (checkout.relay && this.originCalls) await this.originCalls.check(checkout.relay, input.params ?? {});
    // An escrow deposit's authorization is its settlement's: its nonce is the escrow id of terms with a fresh salt.
    const deposits = settlementOf(this.settlements, kind, requirement.network, checkout.escrow !== undefined);
    if (deposits?.prepareDeposit) return { network: requirement.network, requirement, ...deposits.prepareDeposit(checkout, requirement, input.payer) };
    const preparer = this.preparer(kind, requirement, checkout);
    if (preparer) return { network: requirement.network, requirement, transaction: await preparer(input.payer) };
    if (!isAddress(input.payer, { strict: false })) throw invalid([{ field: "payer", reason: "must be a 0x-prefixed EVM address" }]);
    // A series counts every window, period 0's too, on its own clock (the chain's, live): a chain whose clock
    // runs ahead of this process's (a devchain moved forward) would find a wall-clock validBefore already past.
    const series = checkout.schedule ? this.seriesRail(kind, checkout, checkout.schedule, requirement.network) : undefined;
    const now = series ? Number(await series.chain.now()) : Math.floor(this.now().getTime() / 1000);
    const authorization = {
      from: getAddress(input.payer),
      to: getAddress(requirement.payTo),
      value: requirement.amount,
      validAfter: "0",
      validBefore: String(now + requirement.maxTimeoutSeconds),
      nonce: randomNonce(),
    };
    const schedule = checkout.schedule && series ? heldAuthorizations(authorization, now, series.intervalSeconds, checkout.schedule.periods) : undefined;
    return { network: requirement.network, requirement, authorization, ...(schedule ? { schedule } : {}) };
  }

  /** A series' rail on `network`: its clock and chain, and the series interval in seconds there (ADR 20). */
  private seriesRail(kind: SettlementKind, checkout: CheckoutForPayment, terms: SeriesTerms, network: string) {
    const rail = this.rails(kind, checkout).find((r) => r.network === network);
    const chain = settlementOf(this.settlements, kind, network)?.seriesChain?.(network);
    if (rail?.seriesDaySeconds === undefined || !chain)
      throw new ProblemError("unavailable", "This series' network cannot settle on this deployment right now.");
    return { chain, intervalSeconds: intervalSecondsOf(terms, rail.seriesDaySeconds) };
  }

  /**
   * A series purchase's held payloads, every one verified against period 0's
   * payment before anything is recorded (payment rule 7), with the schedule id
   * the purchase records; undefined for a checkout that is no series, and for
   * a purchase already recorded (it redelivers its own series).
   */
  private async heldSeries(
    kind: SettlementKind,
    checkout: CheckoutForPayment,
    settlement: Settlement,
    payload: AnyPaymentPayload,
    requirement: PaymentRequirements,
    headers: readonly string[],
  ): Promise<PurchaseCall["series"]> {
    if (!checkout.schedule) return undefined;
    if (await settlement.isRecorded(payload, requirement)) return undefined;
    const terms = checkout.schedule;
    if (headers.length === 0) heldPeriodsMissing(terms, 0);
    const { chain, intervalSeconds } = this.seriesRail(kind, checkout, terms, requirement.network);
    const record = await verifyHeldPayloads({
      headers,
      period0: evmPayloadOf(payload),
      requirement,
      terms,
      intervalSeconds,
      checks: { now: await chain.now(), ...(chain.authorizationUsed ? { authorizationUsed: chain.authorizationUsed.bind(chain) } : {}) },
    });
    return { scheduleId: newId("schedule"), record };
  }

  /**
   * How a payer's signing material for `requirement` is prepared: by its
   * settlement (a transaction, Solana), by payments itself (EIP-3009 typed
   * data, EVM: `null`), or not at all (undefined: a rail whose settlement
   * prepares nothing, such as a Solana rehearsal's, or Stellar's).
   */
  private preparer(
    kind: SettlementKind,
    requirement: PaymentRequirements,
    checkout: CheckoutForPayment,
  ): ((payer: string) => Promise<string>) | null | undefined {
    if (isEvmNetworkId(requirement.network)) return null;
    const settlement = settlementOf(this.settlements, kind, requirement.network, checkout.escrow !== undefined);
    if (!settlement?.prepare) return undefined;
    const prepare = settlement.prepare.bind(settlement);
    return (payer) => prepare(requirement, payer);
  }

  /**
   * Settles a payment (or redelivers a settled one). `call.handoffId` is the
   * nonce a waiting page polls with; `call.params` are the buyer's call
   * parameters (a relay checkout's origin gets them).
   */
  async submit(checkoutId: string, face: Face, header: string, call: PurchaseCall = {}): Promise<SubmitResult> {
    const handoffId = call.handoffId ?? null;
    if (handoffId !== null && !HANDOFF_NONCE.test(handoffId)) {
      throw invalid([{ field: "h", reason: `the handoff nonce must match ${HANDOFF_NONCE.source}` }]);
    }
    const checkout = await this.checkouts(checkoutId);
    if (!checkout.schedule && (call.heldHeaders?.length ?? 0) > 0) notASeries();
    // A checkout that stopped selling still redelivers what it sold (spec: re-presenting a payment redelivers).
    const notSelling = sellingRefusal(face, checkout);
    if (notSelling && !(await this.isRecorded(face, checkout, header))) throw notSelling;
    const payload = decodePayment(header);
    const kind = settlementKindOf(face, checkout);
    if (kind === "onchain" && payload.accepted && isRehearsalRequirement(payload.accepted)) {
      throw paymentRejected(
        "rehearsal_payment_on_live_face",
        "This payment was made for the rehearsal face; this live face settles real funds. Present it at the /test face.",
      );
    }
    // requirementsFor answers 503 when the face settles on-chain and no live network is configured.
    const requirement = matchRequirement(payload, this.issued(face, checkout));
    const settlement = this.settlement(kind, requirement.network, checkout);
    const series = await this.heldSeries(kind, checkout, settlement, payload, requirement, call.heldHeaders ?? []);
    const outcome = await settlement.submit(checkout, payload, requirement, {
      handoffId,
      params: call.params ?? {},
      ...(call.answerBy ? { answerBy: call.answerBy } : {}),
      ...(series ? { series } : {}),
    });
    const schedule = await this.summaryOf(outcome.row);
    // An escrow sale's goods (a package too) go with its deposit; its receipt waits for the release.
    const delivered = outcome.kind === "pending" ? undefined : outcome;
    const pkg = delivered ? await this.packageOf(checkout, delivered.row, delivered.delivery) : undefined;
    return {
      status: outcome.kind,
      receipt: outcome.row,
      redelivered: delivered?.redelivered ?? false,
      settleResponse: settleResponseOf(outcome),
      checkout,
      ...(delivered?.delivery ? { delivery: delivered.delivery } : {}),
      ...(pkg ? { package: pkg } : {}),
      ...(schedule ? { schedule } : {}),
    };
  }

  /** The series a purchase started, as payments knows it now (a re-presented purchase: the same series). */
  private async summaryOf(row: PaymentRow): Promise<ScheduleSummary | undefined> {
    const series = seriesOf(row);
    if (!series || row.schedule_id === null) return undefined;
    return scheduleSummary(row.schedule_id, series, await store.settledPeriods(this.db, row.schedule_id));
  }

  /**
   * The package a settled payment of a package checkout bought, recorded by
   * fulfillment on the first answer (which alone carries its key): a
   * redelivery, or a payment the sweep settled, answers it from there.
   */
  private async packageOf(checkout: CheckoutForPayment, row: PaymentRow, delivery: DeliveryRecord | undefined): Promise<IssuedPackage | undefined> {
    if (!checkout.package || !checkout.relay || !delivery?.charged) return undefined;
    if (!this.packages) throw new ProblemError("unavailable", "Packages cannot be issued on this deployment right now.");
    return this.packages.issue({
      paymentId: row.id,
      checkoutId: checkout.id,
      accountId: checkout.accountId,
      testMode: row.test_mode,
      calls: checkout.package.calls,
      ttlDays: checkout.package.ttlDays,
      settledAt: row.settled_at ?? this.now(),
      priceAtomic: row.price_atomic,
      origin: checkout.relay,
    });
  }

  /** Whether `header` is a payment this face already recorded (false for anything that is not). */
  private async isRecorded(face: Face, checkout: CheckoutForPayment, header: string): Promise<boolean> {
    try {
      const payload = decodePayment(header);
      const requirement = matchRequirement(payload, this.issued(face, checkout));
      return await this.settlement(settlementKindOf(face, checkout), requirement.network, checkout).isRecorded(payload, requirement);
    } catch (err) {
      if (err instanceof ProblemError) return false;
      throw err;
    }
  }

  /**
   * A settled payment, or one still settling (no receipt yet); failed
   * payments have none, nor do escrow sales until their escrow is released
   * (held), or ever (refunded): GET /e/{id}/status tells where those stand.
   */
  async receipt(paymentId: string): Promise<PaymentRow> {
    const row = isId("payment", paymentId) ? await store.findById(this.db, paymentId) : undefined;
    if (!row || row.status === "failed" || row.status === "held" || row.status === "refunded") throw new ProblemError("not-found", "No such receipt.");
    return row;
  }

  async receiptIdByTx(txHash: string): Promise<string> {
    const row = /^0x[0-9a-fA-F]{64}$/.test(txHash) ? await store.findSettledByTx(this.db, txHash.toLowerCase()) : undefined;
    if (!row) throw new ProblemError("not-found", "No receipt for this transaction.");
    return row.id;
  }

  /** The settled (or escrow-held) payment that arrived with a handoff nonce; a wrong nonce looks exactly like no payment yet. */
  async handoff(checkoutId: string, handoffId: string): Promise<PaymentRow> {
    const known = isCheckoutId(checkoutId) || isId("escrowCheckout", checkoutId);
    const row = HANDOFF_NONCE.test(handoffId) && known ? await store.findSettledByHandoff(this.db, checkoutId, handoffId) : undefined;
    if (!row) throw new ProblemError("not-found", "No settled payment carries this handoff nonce (yet).");
    return row;
  }

  /** One page of the account's ledger: its settled receipts of one mode, newest first, filtered. */
  async ledger(accountId: string, filter: LedgerFilter, page: { size: number; after?: { settledAt: Date; id: string } }): Promise<PaymentRow[]> {
    if (!Number.isInteger(page.size) || page.size < 1 || page.size > 1000) throw invalid([{ field: "page_size", reason: "must be from 1 to 1000" }]);
    if (filter.from && filter.to && filter.from.getTime() >= filter.to.getTime()) throw invalid([{ field: "to", reason: "must be after from" }]);
    return store.ledger(this.db, accountId, filter, page);
  }

  /**
   * The account's settled sales of one mode since `since`, summed exactly:
   * the window's totals, per UTC day (oldest first), per checkout (largest
   * first, at most 100), and its distinct and returning buyers (by subject).
   */
  async salesAnalytics(accountId: string, since: Date, testMode: boolean): Promise<SalesAnalytics> {
    const [all, days, checkouts, buyers] = await Promise.all([
      store.salesSums(this.db, accountId, since, testMode, "all"),
      store.salesSums(this.db, accountId, since, testMode, "day"),
      store.salesSums(this.db, accountId, since, testMode, "checkout"),
      store.buyers(this.db, accountId, since, testMode),
    ]);
    const sums = (r: SumsRow): SalesSums => ({
      payments: Number(r.payments),
      priceAmount: BigInt(r.price_amount),
      providerAmount: BigInt(r.provider_amount),
      platformAmount: BigInt(r.platform_amount),
      feeAmount: BigInt(r.fee_amount),
      total: BigInt(r.total),
    });
    const none = { payments: "0", price_amount: "0", provider_amount: "0", platform_amount: "0", fee_amount: "0", total: "0" };
    return {
      totals: sums(all[0] ?? none),
      days: days.map((r) => ({ day: r.key, sums: sums(r) })),
      checkouts: checkouts.map((r) => ({ checkoutId: r.key, title: r.title, sums: sums(r) })),
      buyers,
    };
  }

  /** One page of the account's webhook sales still to fulfil, newest first. */
  async awaitingFulfilment(accountId: string, page: { size: number; after?: { settledAt: Date; id: string } }): Promise<PaymentRow[]> {
    if (!Number.isInteger(page.size) || page.size < 1 || page.size > 1000) throw invalid([{ field: "page_size", reason: "must be from 1 to 1000" }]);
    return store.awaitingFulfilment(this.db, accountId, page);
  }

  /**
   * Closes out a webhook sale of the account (POST /v1/receipts/{id}/fulfilled)
   * with its account event; a second call answers it unchanged. 404 for another
   * account's or an unknown receipt; 409 for a sale that was delivered with its
   * payment (inline, relay, mcp) or has not settled.
   */
  async markFulfilled(accountId: string, paymentId: string, actor: Actor): Promise<{ row: PaymentRow; alreadyFulfilled: boolean }> {
    const row = isId("payment", paymentId) ? await store.findById(this.db, paymentId) : undefined;
    if (!row || row.account_id !== accountId || row.status === "failed") throw new ProblemError("not-found", "No such receipt.");
    if (row.fulfillment !== "webhook") {
      throw new ProblemError("conflict", {
        message: `This sale was delivered with its payment (${row.fulfillment}); only webhook sales are closed out by the seller.`,
        help: { retry_is_safe: false, fix: "Nothing to do: the buyer got the goods in the paid response." },
      });
    }
    if (row.status !== "settled") throw new ProblemError("conflict", { message: "This payment has not settled yet.", retryAfterSeconds: 5 });
    if (row.fulfilled_at) return { row, alreadyFulfilled: true };
    const at = this.now();
    const event = accountActivityRow({
      accountId,
      action: "receipt.fulfilled",
      objectId: row.id,
      detail: { checkout_id: row.checkout_id },
      actor,
      testMode: row.test_mode,
      at,
    });
    const marked = await store.markFulfilled(this.db, accountId, row.id, at, event);
    if (!marked) return { row: (await store.findById(this.db, row.id)) ?? row, alreadyFulfilled: true };
    this.onCommitted();
    return { row: marked, alreadyFulfilled: false };
  }

  /** Resumes unfinished payments of every settlement (run periodically by the service). */
  async sweep(): Promise<number> {
    let swept = 0;
    for (const settlement of this.settlements) swept += await settlement.sweep();
    return swept;
  }
}
