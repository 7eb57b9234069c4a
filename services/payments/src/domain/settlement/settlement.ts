import type { AnyPaymentPayload, ExactEvmAuthorization, PaymentRequirements } from "@c402/x402";
import type { PaymentRow } from "../../store/payments-store";
import type { SeriesRecord } from "../series";
import type { DeliveryRecord } from "./paid-on-delivery";
import type { CheckoutForPayment, Rail, SettlementKind } from "../requirements";

/**
 * Where a submitted payment stands: settled (its row is the receipt;
 * `redelivered` when it had settled before this request), held (an escrow
 * sale: the deposit is in escrow, the goods delivered, no receipt until the
 * escrow releases it, ADR 19), or pending (broadcast, the chain has not
 * answered yet: never a reason to pay again).
 */
export type SettlementOutcome =
  { kind: "settled" | "held"; row: PaymentRow; redelivered: boolean; delivery?: DeliveryRecord } | { kind: "pending"; row: PaymentRow };

/** What a payer signs for an escrow deposit (EscrowSettlement.prepareDeposit): the authorization, and the terms' salt the payment brings back. */
export interface PreparedDeposit {
  authorization: ExactEvmAuthorization;
  salt: string;
}

/** What the paid request carried beside the payment. */
export interface PurchaseCall {
  /** The nonce a waiting page polls with. */
  handoffId?: string | null;
  /** The buyer's call parameters: a relay checkout's origin gets them. */
  params?: Record<string, string>;
  /** When the buyer's request stops waiting (its caller's deadline): a relay sale settles only before then (ADR 9). */
  answerBy?: Date;
  /** A series purchase's held payment headers (POST /pay `schedule`), periods 1 … periods-1 in order. */
  heldHeaders?: readonly string[];
  /** A series purchase: the schedule id minted for it and the verified series its period 0's row keeps (ADR 20). */
  series?: { scheduleId: string; record: SeriesRecord };
}

/** The clock and chain a series is checked against on one network (ADR 20). */
export interface SeriesChain {
  /** Now in seconds by the clock the token checks windows against: the live chain's latest block, the test face's wall clock. */
  now(): Promise<bigint>;
  /** Whether an authorization's nonce is used or cancelled on chain (live only). */
  authorizationUsed?(from: `0x${string}`, nonce: `0x${string}`): Promise<boolean>;
  /** The payer's token balance (live only). */
  balanceOf?(owner: `0x${string}`): Promise<bigint>;
}

/** The facilitator's chain families (`/x402/{family}/…`): which rail a network's payments belong to. */
export type RailFamily = "base" | "solana" | "stellar";

/**
 * One way payments settle: rehearsal (simulated, every family), and one live rail per chain
 * family (EVM, Solana, Stellar), escrow deposits (EscrowSettlement, ADR 19); series later. A settlement owns a payment
 * from its authorization on: it records it under its authorization key (EVM:
 * payer and nonce; Solana: the transaction message's hash), settles it (or
 * simulates it), writes the receipt and the `payment.settled` event, and
 * answers a payment presented again with the outcome of the one recorded.
 * Payments and the facilitator pick one by the face's settlement kind and the
 * requirement's network (`settlementOf`) and know nothing of how it settles.
 * docs/adding-a-rail.md walks through adding one.
 */
export interface Settlement {
  readonly kind: SettlementKind;
  /** It sells escrow checkouts' deposits (EscrowSettlement), and only those; every other settlement sells only other checkouts. */
  readonly escrow?: boolean;
  /** The family of the networks a live settlement settles (the facilitator's `/x402/{family}`); a rehearsal settles several, and none live. */
  readonly family?: RailFamily;
  /** Whether it settles payments made on `network`. */
  settles(network: string): boolean;
  /**
   * The rails (network, token, payTo) a face of its kind issues requirements
   * for: a live settlement's networks, or the rehearsal's (ADR 5).
   */
  rails(): readonly Rail[];
  /** The addresses that sign its transactions (the facilitator's `signers`, under the family's CAIP-2 wildcard); none when nothing is sent. */
  signers(): readonly string[];
  /** Who pays with this payload, as the family writes addresses (the facilitator's `payer`); undefined when the payload does not say. */
  payerOf(payload: AnyPaymentPayload): string | undefined;
  /** The checks `submit` makes before it records anything: nothing is written and nothing is sent. */
  verify(checkout: CheckoutForPayment, payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<void>;
  /** Whether the payment's authorization is already recorded (being settled, or settled). */
  isRecorded(payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<boolean>;
  /**
   * Settles a payment for `requirement`, which the checkout issued; a payment
   * already recorded answers its outcome instead. A relay checkout's origin is
   * called first and only a charged delivery settles (PaidOnDelivery).
   */
  submit(checkout: CheckoutForPayment, payload: AnyPaymentPayload, requirement: PaymentRequirements, call?: PurchaseCall): Promise<SettlementOutcome>;
  /**
   * The transaction a payer signs for one of its requirements, where the
   * rail's buyers sign transactions the service can prepare (Solana); absent
   * where they sign typed data (EVM: payments builds it from the requirement).
   */
  prepare?(requirement: PaymentRequirements, payer: string): Promise<string>;
  /** An escrow deposit's authorization for one of its requirements (ReceiveWithAuthorization to the contract, nonce = escrow id), with a fresh salt. */
  prepareDeposit?(checkout: CheckoutForPayment, requirement: PaymentRequirements, payer: string): PreparedDeposit;
  /** Resumes payments a crash or a timeout left unfinished; answers how many it looked at. */
  sweep(): Promise<number>;
  /** A series' clock and chain on `network`, where this settlement sells series (EVM rails, ADR 20). */
  seriesChain?(network: string): SeriesChain | undefined;
  /**
   * Settles a held period of a series: `row` is its new payment row, recorded first (unique per schedule
   * and period: a row already there is answered instead, never sent twice), then settled as any payment.
   */
  chargeHeld?(row: PaymentRow): Promise<SettlementOutcome>;
  /** Sends the payer's signed USDC cancelAuthorization for a held nonce (live EVM), recorded before it is sent. */
  cancelHeld?(c: HeldCancel): Promise<{ status: "cancelled" | "pending"; txHash?: string }>;
}

/** One held nonce's cancel as the payer signed it (USDC's CancelAuthorization, v r s). */
export interface HeldCancel {
  scheduleId: string;
  period: number;
  network: string;
  authorizer: `0x${string}`;
  nonce: `0x${string}`;
  v: number;
  r: `0x${string}`;
  s: `0x${string}`;
}

/** The settlement of that kind that settles on `network` for a checkout of that sort (escrow or not), if one is configured. */
export function settlementOf(settlements: readonly Settlement[], kind: SettlementKind, network: string, escrow = false): Settlement | undefined {
  return settlements.find((s) => s.kind === kind && (s.escrow ?? false) === escrow && s.settles(network));
}
