import type { paymentEventsV1 } from "@c402/contracts";
import { isId, newId } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import { cancelAuthorizationTypedData, EVM_NETWORKS, isEvmNetwork, type Eip712Domain } from "@c402/x402";
import { getAddress, recoverTypedDataAddress, serializeSignature, type Hex } from "viem";
import { paymentsStore as store, type PaymentRow, type PaymentsDb } from "../store/payments-store";
import { heldCancelsStore } from "../store/held-cancels-store";
import { paymentSettledMessage } from "./payment-wire";
import { seriesOf, type HeldAuthorization, type SeriesRecord } from "./series";
import { settlementOf, type Settlement } from "./settlement/settlement";

/**
 * Where a held period's charge stands (ChargeHeldPeriod, ADR 20): settled
 * (now or before), pending (sent, ask again), not yet (its window is not open
 * by the series' clock), retryable (balance short, chain unavailable: ask again
 * inside the window) or final (window closed, nonce used or cancelled on chain,
 * or its payment failed).
 */
export interface ChargeResult {
  outcome: "settled" | "pending" | "not_yet" | "retryable" | "final";
  /** The period's payment, once one is recorded. */
  row?: PaymentRow;
  reason?: string;
}

/** One of the payer's signed USDC CancelAuthorizations for a held nonce. */
export interface SignedCancel {
  nonce: string;
  v: number;
  r: string;
  s: string;
}

export interface CancelResult {
  nonce: string;
  /** 0 when the nonce is none of the series'. */
  period: number;
  /** cancelled (by this call or before), used (the period was charged), pending (sent, not yet mined) or refused (see reason). */
  status: "cancelled" | "used" | "pending" | "refused";
  txHash?: string;
  reason?: string;
}

/** What the series' settlement offers for held periods (EVM rails). */
type SeriesSettlement = Settlement & Required<Pick<Settlement, "seriesChain" | "chargeHeld">>;

/**
 * A series' later periods (ADR 20): charged with the authorizations its
 * purchase recorded (period 0's row keeps them), each through the settlement
 * that sold period 0, and cancelled on chain with the payer's signatures.
 */
export class SeriesCharges {
  constructor(private readonly opts: { db: PaymentsDb; settlements: readonly Settlement[] }) {}

  /** Period 0 of a series and what it holds; NOT_FOUND for an unknown series (or one whose purchase never settled). */
  private async seriesOf(scheduleId: string): Promise<{ row0: PaymentRow; series: SeriesRecord }> {
    const row0 = isId("schedule", scheduleId) ? await store.findSeriesPeriod(this.opts.db, scheduleId, 0) : undefined;
    const series = row0 && seriesOf(row0);
    if (!row0 || !series || row0.status !== "settled") throw new ProblemError("not-found", "No such series.");
    return { row0, series };
  }

  private settlementOf(row0: PaymentRow): SeriesSettlement {
    const s = settlementOf(this.opts.settlements, row0.test_mode ? "simulated" : "onchain", row0.network);
    if (!s?.seriesChain || !s.chargeHeld) throw new ProblemError("unavailable", "This series' network cannot settle on this deployment right now.");
    return s as SeriesSettlement;
  }

  /** Period 0's settled payment of a series, as payment.settled carries it (what starts the series). */
  async start(scheduleId: string): Promise<paymentEventsV1.PaymentSettled> {
    const { row0 } = await this.seriesOf(scheduleId);
    return paymentSettledMessage(row0, !row0.single_shot);
  }

  /** Whether a held nonce's cancel is recorded here (a test-mode series has no chain to ask). */
  private async cancelledHere(scheduleId: string, nonce: string): Promise<boolean> {
    return (await heldCancelsStore.find(this.opts.db, scheduleId, nonce))?.status === "cancelled";
  }

  async charge(scheduleId: string, period: number): Promise<ChargeResult> {
    const { row0, series } = await this.seriesOf(scheduleId);
    const held = series.held.find((h) => h.period === period);
    if (!held) throw new ProblemError("not-found", `This series has no period ${period}.`);
    const existing = await store.findSeriesPeriod(this.opts.db, scheduleId, period);
    if (existing && !(await store.releaseShortPeriod(this.opts.db, existing.id))) return resultOf(existing);
    const settlement = this.settlementOf(row0);
    const chain = settlement.seriesChain(row0.network);
    if (!chain) throw new ProblemError("unavailable", "This series' network cannot settle on this deployment right now.");
    const a = held.authorization;
    const payer = getAddress(a.from);
    try {
      const now = await chain.now();
      // EIP-3009: valid strictly after validAfter and strictly before validBefore.
      if (now <= BigInt(a.validAfter)) return { outcome: "not_yet", reason: "window_not_open" };
      if (now >= BigInt(a.validBefore)) return { outcome: "final", reason: "window_closed" };
      const usedOrCancelled = chain.authorizationUsed ? await chain.authorizationUsed(payer, a.nonce as Hex) : await this.cancelledHere(scheduleId, a.nonce);
      if (usedOrCancelled) return { outcome: "final", reason: "authorization_used_or_cancelled" };
      if (chain.balanceOf && (await chain.balanceOf(payer)) < BigInt(a.value)) return { outcome: "retryable", reason: "insufficient_funds" };
    } catch (err) {
      if (err instanceof ProblemError) throw err;
      return { outcome: "retryable", reason: "chain_unavailable" };
    }
    try {
      const outcome = await settlement.chargeHeld(heldPeriodRow(row0, held));
      return resultOf(outcome.row);
    } catch (err) {
      // Recorded but not settled (the chain failed before or after sending): the sweep resumes it.
      const recorded = await store.findSeriesPeriod(this.opts.db, scheduleId, period);
      if (recorded && recorded.status !== "failed")
        return recorded.tx_hash ? resultOf(recorded) : { outcome: "retryable", row: recorded, reason: "chain_unavailable" };
      // The balance went short between the check and the signing: nothing was sent; retried inside the window.
      if (recorded && (await store.releaseShortPeriod(this.opts.db, recorded.id))) return { outcome: "retryable", reason: "insufficient_funds" };
      if (recorded) return resultOf(recorded);
      // Refused before anything was recorded (the settle call, run against the chain, would fail).
      const reason = err instanceof ProblemError ? err.extensions.reason : undefined;
      if (reason === "invalid_exact_evm_insufficient_balance") return { outcome: "retryable", reason: "insufficient_funds" };
      if (reason === "invalid_exact_evm_nonce_already_used") return { outcome: "final", reason: "authorization_used_or_cancelled" };
      if (err instanceof ProblemError && reason === undefined) throw err;
      return { outcome: "retryable", reason: typeof reason === "string" ? reason : "chain_unavailable" };
    }
  }

  /**
   * Cancels held authorizations with the payer's signatures: every nonce must
   * be a held period of this series and every signature the payer's, all
   * checked before anything is sent (one refused: nothing is sent). A period
   * already charged answers `used`.
   */
  async cancel(scheduleId: string, cancels: readonly SignedCancel[]): Promise<CancelResult[]> {
    const { row0, series } = await this.seriesOf(scheduleId);
    const payer = getAddress(row0.payer);
    const domain = tokenDomainOfRow(row0, series);
    const checked: { cancel: SignedCancel; held?: HeldAuthorization; result?: CancelResult }[] = [];
    for (const c of cancels) {
      const held = series.held.find((h) => h.authorization.nonce.toLowerCase() === c.nonce.toLowerCase());
      if (!held) {
        checked.push({ cancel: c, result: { nonce: c.nonce, period: 0, status: "refused", reason: "not_a_held_nonce" } });
        continue;
      }
      const signer = await recoverCancelSigner(domain, payer, held.authorization.nonce, c);
      if (signer !== payer) {
        checked.push({ cancel: c, held, result: { nonce: c.nonce, period: held.period, status: "refused", reason: "invalid_signature" } });
        continue;
      }
      const charged = await store.findSeriesPeriod(this.opts.db, scheduleId, held.period);
      if (charged && charged.status !== "failed") {
        checked.push({
          cancel: c,
          held,
          result: { nonce: c.nonce, period: held.period, status: "used", ...(charged.tx_hash ? { txHash: charged.tx_hash } : {}) },
        });
        continue;
      }
      checked.push({ cancel: c, held });
    }
    if (checked.some((c) => c.result?.status === "refused")) {
      return checked.map((c) => c.result ?? { nonce: c.cancel.nonce, period: c.held?.period ?? 0, status: "refused", reason: "not_sent_another_was_refused" });
    }
    const results: CancelResult[] = [];
    for (const c of checked) {
      if (c.result || !c.held) {
        if (c.result) results.push(c.result);
        continue;
      }
      // A test-mode series' authorizations are valid on no chain: checked and recorded (its charge is then final), nothing sent.
      if (row0.test_mode) {
        await heldCancelsStore.insertIfNew(this.opts.db, {
          schedule_id: scheduleId,
          nonce: c.held.authorization.nonce,
          period: c.held.period,
          network: row0.network,
          tx_hash: "",
          raw_tx: "",
          status: "cancelled",
          created_at: new Date(),
        });
        results.push({ nonce: c.cancel.nonce, period: c.held.period, status: "cancelled" });
        continue;
      }
      const live = this.settlementOf(row0);
      if (!live.cancelHeld) throw new ProblemError("unavailable", "This series' network cannot cancel on this deployment right now.");
      const sent = await live.cancelHeld({
        scheduleId,
        period: c.held.period,
        network: row0.network,
        authorizer: payer,
        nonce: c.held.authorization.nonce as Hex,
        v: c.cancel.v,
        r: c.cancel.r as Hex,
        s: c.cancel.s as Hex,
      });
      results.push({ nonce: c.cancel.nonce, period: c.held.period, ...sent });
    }
    return results;
  }
}

/** A period's charge as its recorded payment stands. */
function resultOf(row: PaymentRow): ChargeResult {
  if (row.status === "settled") return { outcome: "settled", row };
  if (row.status === "failed") return { outcome: "final", row, reason: row.failure_reason ?? "settlement_failed" };
  return { outcome: "pending", row };
}

/**
 * The payment row of a held period: period 0's sale (its checkout, split,
 * amounts, buyer and seller) paid with the period's own authorization, as
 * claimed (a test-mode series' rehearsal settles it at once).
 */
export function heldPeriodRow(row0: PaymentRow, held: HeldAuthorization): PaymentRow {
  const now = new Date();
  return {
    ...row0,
    id: newId("payment"),
    nonce: held.authorization.nonce.toLowerCase(),
    authorization: { ...held.authorization, signature: held.signature },
    valid_before: BigInt(held.authorization.validBefore),
    status: "claimed",
    tx_hash: null,
    raw_tx: null,
    settled_at: null,
    failure_reason: null,
    handoff_id: null,
    answer_by: null,
    // A period is no new sale of the checkout: it never closes a single-shot one.
    single_shot: false,
    delivery_outcome: row0.fulfillment === "webhook" ? "awaiting_fulfilment" : "delivered",
    delivery_status: null,
    delivery_latency_ms: null,
    delivery_bytes: null,
    fulfilled_at: null,
    schedule_period: held.period,
    series: null,
    updated_at: now,
  };
}

/** The EIP-712 domain of the token a series is paid in (the rehearsal domain for a test-mode one). */
function tokenDomainOfRow(row0: PaymentRow, series: SeriesRecord): Eip712Domain {
  const chainId = isEvmNetwork(row0.network) ? EVM_NETWORKS[row0.network].chainId : Number(row0.network.split(":")[1]);
  return { name: series.token.name, version: series.token.version, chainId, verifyingContract: getAddress(row0.asset) };
}

async function recoverCancelSigner(domain: Eip712Domain, payer: string, nonce: string, c: SignedCancel): Promise<string | undefined> {
  try {
    const typed = cancelAuthorizationTypedData(domain, payer, nonce);
    return await recoverTypedDataAddress({ ...typed, signature: serializeSignature({ r: c.r as Hex, s: c.s as Hex, v: BigInt(c.v) }) } as never);
  } catch {
    return undefined;
  }
}
