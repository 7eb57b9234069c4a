import { failpoint } from "@c402/failpoints";
import { recordSigned } from "@c402/sender-nonces";
import { ProblemError } from "@c402/problems";
import { NonceSpentError, type Authorization, type EvmChain, type SettledEvent, type SplitRecipients } from "@c402/evm-chain";
import type { AnyPaymentPayload, ContractSignatureCheck, PaymentPayload, PaymentRequirements } from "@c402/x402";
import { getAddress, type Hex } from "viem";
import { paymentsStore as store, type PaymentRow } from "../../store/payments-store";
import { heldCancelsStore } from "../../store/held-cancels-store";
import { assertRedeliverable, authorizationKey, evmPresentedPayment, splitPartiesOfRow } from "../payment-row";
import { splitPartiesOf, type CheckoutForPayment, type Rail, type SplitParties } from "../requirements";
import { evmPayerOf, evmPayloadOf, paymentRejected, settlementFailed, simulationRejectReason, verifyPayment } from "../verify-payment";
import { OnchainSettlement, SETTLEABLE, type OnchainSettlementOptions } from "./onchain-settlement";
import type { HeldCancel, PurchaseCall, SeriesChain, Settlement, SettlementOutcome } from "./settlement";
import { SettlementBatches, type BatchedSettlement } from "./settlement-batches";

/** One live network: its chain adapter and who a checkout's split pays. */
export interface LiveChain {
  rail: Rail;
  chain: EvmChain;
  recipients(parties: SplitParties): SplitRecipients;
}

/** The live networks, by CAIP-2 id (`chains`), and what every rail's saga needs. */
export interface LiveEvmSettlementOptions extends OnchainSettlementOptions<LiveChain> {
  /** How long a settlement transaction may wait for payments on their way to it (default GATHER_MS). */
  gatherMs?: number;
}

/**
 * Live settlement on EVM networks: the purchase saga (ADR 8), persisted on the
 * payment row and keyed by the authorization (payer, nonce): claimed -> settling (the signed transaction
 * and its hash are stored before broadcast) -> settled (receipt and outbox
 * event in one transaction) | failed. Every resumption asks the chain first,
 * so a crash at any step never leads to a second transfer: the authorization
 * can be used once, and a settlement already on-chain is found and recorded.
 */
export class LiveEvmSettlement extends OnchainSettlement<LiveChain> implements Settlement {
  readonly family = "base" as const;
  private readonly chains: ReadonlyMap<string, LiveChain>;
  /** Each chain's settlement transactions, shared by the payments ready at once. */
  private readonly batches = new Map<LiveChain, SettlementBatches>();

  constructor(private readonly opts: LiveEvmSettlementOptions) {
    super(opts);
    this.chains = opts.chains;
    for (const live of opts.chains.values()) this.batches.set(live, new SettlementBatches(opts.db, live, SETTLEABLE, opts.gatherMs));
  }

  rails(): readonly Rail[] {
    return [...this.chains.values()].map((c) => c.rail);
  }

  /** The facilitator key of each network (one address when they share a key). */
  signers(): readonly string[] {
    return [...new Set([...this.chains.values()].map((c) => c.chain.facilitator.address))];
  }

  payerOf(payload: AnyPaymentPayload): string | undefined {
    return evmPayerOf(payload);
  }

  /** EIP-1271 checks against the chain of `network`, when this service settles there. */
  contractSignatures(network: string): ContractSignatureCheck | undefined {
    const chain = this.chains.get(network)?.chain;
    return chain ? (signer, digest, signature) => chain.isValidContractSignature(signer, digest, signature) : undefined;
  }

  /**
   * The checks `submit` makes before it records anything (signature, binding,
   * time window, then the settle call run against the chain), for the
   * facilitator's verify: nothing is written and nothing is sent.
   */
  async verify(checkout: CheckoutForPayment, presented: AnyPaymentPayload, requirement: PaymentRequirements): Promise<void> {
    const payload = evmPayloadOf(presented);
    const live = this.chain(requirement.network);
    if (await this.isRecorded(payload, requirement)) throw paymentRejected("invalid_exact_evm_nonce_already_used", "This authorization has already been used.");
    await verifyPayment(payload, requirement, Math.floor(this.opts.now().getTime() / 1000), this.contractSignatures(requirement.network));
    const simulation = await live.chain.simulateSettle(live.recipients(splitPartiesOf(checkout)), authorizationOf(payload), payload.payload.signature as Hex);
    if (!simulation.ok) throw paymentRejected(simulationRejectReason(simulation.reason), `The payment cannot settle: ${simulation.reason.replace(/_/g, " ")}.`);
  }

  /** Whether this live payment is already recorded (being settled, or settled). */
  async isRecorded(payload: AnyPaymentPayload, requirement: PaymentRequirements): Promise<boolean> {
    return (await store.findByAuthorization(this.db, authorizationKey(false, requirement, evmPayloadOf(payload)))) !== undefined;
  }

  async submit(
    checkout: CheckoutForPayment,
    presented: AnyPaymentPayload,
    requirement: PaymentRequirements,
    call: PurchaseCall = {},
  ): Promise<SettlementOutcome> {
    const payload = evmPayloadOf(presented);
    const live = this.chain(requirement.network);
    // An inline sale is on its way to a settlement transaction, which may wait a moment for it. A relay
    // sale first waits for its origin, for as long as that takes: nothing waits for it. Counted before
    // the first await, so that sales arriving together are all counted before any of them is signed
    // (counted after the look-up, a fast one could be signed alone while the others were still looking).
    const arrived = checkout.relay ? undefined : this.batchesOf(live).arriving();
    try {
      const existing = await store.findByAuthorization(this.db, authorizationKey(false, requirement, payload));
      if (existing) {
        // Already recorded: not on its way to a new transaction (a resumed one must not wait for itself).
        arrived?.();
        return await this.resume(existing, checkout.id, payload);
      }
      return await this.claimAndSettle(checkout, payload, requirement, live, call, arrived);
    } finally {
      arrived?.();
    }
  }

  private async claimAndSettle(
    checkout: CheckoutForPayment,
    payload: PaymentPayload,
    requirement: PaymentRequirements,
    live: LiveChain,
    call: PurchaseCall,
    arrived?: () => void,
  ): Promise<SettlementOutcome> {
    const signature = payload.payload.signature as Hex;
    const key = authorizationKey(false, requirement, payload);
    const nowSeconds = Math.floor(this.opts.now().getTime() / 1000);
    await verifyPayment(payload, requirement, nowSeconds, this.contractSignatures(requirement.network));
    const auth = authorizationOf(payload);
    const recipients = live.recipients(splitPartiesOf(checkout));
    const split = getAddress(requirement.payTo);
    const simulation = await live.chain.simulateSettle(recipients, auth, signature);
    // A settle that simulates cleanly has no settlement on-chain yet; one that does not may have
    // been submitted by someone else already (front-running is benign: it pays the same split).
    let onChain: SettledEvent | null = null;
    if (!simulation.ok) {
      // A duplicate claimed and broadcast since the lookup above: the node simulates against its
      // pending block, where that transaction already used the authorization. Its outcome is ours.
      const claimedMeanwhile = await store.findByAuthorization(this.db, key);
      if (claimedMeanwhile) return this.resume(claimedMeanwhile, checkout.id, payload);
      onChain = (await live.chain.findSettlement(split, auth.from, auth.nonce)) ?? null;
      if (!onChain) throw paymentRejected(simulationRejectReason(simulation.reason), `The payment cannot settle: ${simulation.reason.replace(/_/g, " ")}.`);
    }

    const claim = await this.claim(checkout, evmPresentedPayment(false, checkout, requirement, payload), call, split);
    if ("recorded" in claim) return this.resume(claim.recorded, checkout.id, payload);
    // A relay sale is delivered first (ADR 9), and never waits for others: `arrived` is undefined for it.
    return this.settleClaimed(claim.claimed, checkout, call, (row) => this.drive(row, live, onChain, false, arrived));
  }

  /** A live series runs on the chain's clock (its latest block), and is checked against the token's nonce state and balances. */
  seriesChain(network: string): SeriesChain | undefined {
    const live = this.chains.get(network);
    if (!live || live.rail.seriesDaySeconds === undefined) return undefined;
    return {
      now: () => live.chain.latestBlockTime(),
      authorizationUsed: (from, nonce) => live.chain.authorizationUsed(from, nonce),
      balanceOf: (owner) => live.chain.balanceOf(owner),
    };
  }

  /**
   * A held period of a series (ADR 20), through the same saga as any live payment: its row recorded
   * first (one per schedule and period: the loser of a race answers the winner's outcome), then
   * signed, recorded `settling`, sent and concluded; the sweep resumes it after a crash.
   */
  async chargeHeld(row: PaymentRow): Promise<SettlementOutcome> {
    const live = this.chain(row.network);
    // Nothing is recorded for a charge that cannot settle now (balance short, nonce used): the caller answers why.
    const simulation = await live.chain.simulateSettle(live.recipients(splitPartiesOfRow(row)), authorizationOfRow(row), row.authorization.signature as Hex);
    if (!simulation.ok) {
      const recorded = await store.findSeriesPeriod(this.db, row.schedule_id ?? "", row.schedule_period ?? -1);
      if (recorded) return this.current(recorded.id);
      throw paymentRejected(simulationRejectReason(simulation.reason), `The period cannot settle now: ${simulation.reason.replace(/_/g, " ")}.`);
    }
    if (!(await store.insertIfNew(this.db, row))) {
      const recorded = await store.findSeriesPeriod(this.db, row.schedule_id ?? "", row.schedule_period ?? -1);
      if (!recorded) throw new ProblemError("internal", "The period could not be recorded.");
      return this.current(recorded.id);
    }
    failpoint("after-claim");
    return this.drive(row, live, undefined, true);
  }

  /**
   * Sends the payer's signed USDC cancelAuthorization for a held period's nonce from the facilitator key:
   * recorded (with the signed transaction) before it is sent, so a retry sends the same transaction; a nonce
   * already used or cancelled on chain answers without sending.
   */
  async cancelHeld(c: HeldCancel): Promise<{ status: "cancelled" | "pending"; txHash?: string }> {
    const live = this.chain(c.network);
    const find = () => heldCancelsStore.find(this.db, c.scheduleId, c.nonce);
    let recorded = await find();
    if (!recorded) {
      if (await live.chain.authorizationUsed(c.authorizer, c.nonce)) return { status: "cancelled" };
      recorded = await live.chain.signCancelAuthorizationReserved(c, (key, sign) =>
        recordSigned(this.db, key, sign, (trx, signed) =>
          heldCancelsStore.insertIfNew(trx, {
            schedule_id: c.scheduleId,
            nonce: c.nonce,
            period: c.period,
            network: c.network,
            tx_hash: signed.txHash,
            raw_tx: signed.raw,
            status: "sent",
            created_at: this.opts.now(),
          }),
        ),
      );
      recorded ??= await find();
      if (!recorded) throw new ProblemError("internal", "The cancel could not be recorded.");
    }
    if (recorded.status === "cancelled") return { status: "cancelled", txHash: recorded.tx_hash };
    await live.chain.broadcast(recorded.raw_tx as Hex);
    const receipt = await live.chain.waitForReceipt(recorded.tx_hash as Hex, this.opts.settleTimeoutMs);
    if (!receipt) return { status: "pending", txHash: recorded.tx_hash };
    // Reverted: the nonce was used or cancelled meanwhile; either way no held period can use it any more.
    await heldCancelsStore.markCancelled(this.db, c.scheduleId, recorded.nonce);
    return receipt.status === "success" ? { status: "cancelled", txHash: recorded.tx_hash } : { status: "cancelled" };
  }

  private batchesOf(live: LiveChain): SettlementBatches {
    const batches = this.batches.get(live);
    if (!batches) throw new ProblemError("unavailable", "This network cannot settle right now.");
    return batches;
  }

  /**
   * Sign (hash recorded first), broadcast, wait; pending when the receipt does not come in time.
   * `onChain` is what the caller just learned about an earlier settlement (null: none), so a fresh
   * payment skips the log search a resumed one needs. The transaction may settle other payments
   * too (see SettlementBatches); `alone`: one of its own.
   */
  private async drive(claimed: PaymentRow, live: LiveChain, onChain?: SettledEvent | null, alone = false, arrived?: () => void): Promise<SettlementOutcome> {
    const auth = authorizationOfRow(claimed);
    const split = claimed.split_address as Hex;
    const signature = claimed.authorization.signature as Hex;
    const recipients = live.recipients(splitPartiesOfRow(claimed));
    const already = onChain === undefined ? await live.chain.findSettlement(split, auth.from, auth.nonce) : onChain;
    if (already) return { kind: "settled", row: await this.record(claimed, already), redelivered: false };
    let batched: BatchedSettlement;
    try {
      // Every replica signs with the facilitator key: the nonce comes from the count they share,
      // and is counted in the commit that records the signed transaction (ADR 11).
      const settling = this.batchesOf(live).settle(claimed, { recipients, authorization: auth, signature }, alone);
      arrived?.();
      batched = await settling;
    } catch (err) {
      // Nothing was signed (the chain or the database failed): if the settle call cannot succeed any
      // more (funds moved away, authorization cancelled), the payment fails cleanly; else it stays
      // claimed for the sweep.
      const simulation = await live.chain.simulateSettle(recipients, auth, signature).catch(() => undefined);
      if (simulation && !simulation.ok) {
        // Someone may have settled it since our check before the claim.
        const settledMeanwhile = await live.chain.findSettlement(split, auth.from, auth.nonce);
        if (settledMeanwhile) return { kind: "settled", row: await this.record(claimed, settledMeanwhile), redelivered: false };
        await store.advance(this.db, claimed.id, ["claimed", "delivered"], { status: "failed", failure_reason: simulation.reason });
        throw settlementFailed(
          simulationRejectReason(simulation.reason),
          `The payment cannot settle: ${simulation.reason.replace(/_/g, " ")}. Nothing was charged.`,
          claimed,
        );
      }
      throw err;
    }
    const settling = batched.settling;
    if (!settling) return this.current(claimed.id);
    try {
      await batched.sent;
    } catch {
      // Unknown whether it reached the chain: the sweep rebroadcasts the same transaction.
      return { kind: "pending", row: settling };
    }
    const receipt = await live.chain.waitForReceipt(settling.tx_hash as Hex, this.opts.settleTimeoutMs);
    if (!receipt) return { kind: "pending", row: settling };
    failpoint("after-receipt");
    return this.conclude(settling, live, receipt);
  }

  private async conclude(row: PaymentRow, live: LiveChain, receipt: NonNullable<Awaited<ReturnType<EvmChain["receipt"]>>>): Promise<SettlementOutcome> {
    const from = getAddress(row.payer);
    const nonce = row.nonce as Hex;
    const split = row.split_address as Hex;
    const settled = live.chain.settledIn(receipt, split, from, nonce) ?? (await live.chain.findSettlement(split, from, nonce));
    if (settled) return { kind: "settled", row: await this.record(row, settled), redelivered: false };
    if (receipt.status === "reverted" && row.raw_tx && live.chain.settlesSeveral(row.raw_tx as Hex) && !(await live.chain.authorizationUsed(from, nonce))) {
      // The whole transaction reverted (a payment in it ran out of gas: see the factory's settleEach),
      // not this payment's settlement: it is settled again, in a transaction of its own.
      return this.drive(row, live, null, true);
    }
    await store.advance(this.db, row.id, SETTLEABLE, { status: "failed", failure_reason: "settlement_failed" });
    throw settlementFailed("settlement_failed", "The settlement transaction failed; nothing was charged and no goods were delivered.", row);
  }

  /** Records the settlement the chain holds: its transaction and the split as it moved. */
  private record(row: PaymentRow, settled: SettledEvent): Promise<PaymentRow> {
    return this.finalize(row, {
      tx_hash: settled.txHash,
      provider_amount: settled.providerAmount,
      platform_amount: row.platform_amount === null && settled.platformAmount === 0n ? null : settled.platformAmount,
      fee_amount: settled.feeAmount,
    });
  }

  private resume(existing: PaymentRow, checkoutId: string, payload: PaymentPayload): Promise<SettlementOutcome> {
    assertRedeliverable(existing, checkoutId, payload);
    return this.redeliver(existing);
  }

  protected async outcomeOfSent(row: PaymentRow, timeoutMs: number): Promise<SettlementOutcome> {
    const live = this.chain(row.network);
    const receipt = await live.chain.waitForReceipt(row.tx_hash as Hex, timeoutMs);
    return receipt ? this.conclude(row, live, receipt) : { kind: "pending", row };
  }

  /**
   * Resumes live payments left unfinished by a crash or a timeout, using the
   * chain as the truth: a mined transaction is concluded; a used authorization
   * is looked up (and a front-run payment split); an unused one is
   * rebroadcast while valid (signed again when another transaction took its
   * nonce), or failed once it expired.
   */
  protected async sweepOne(row: PaymentRow): Promise<void> {
    const live = this.chains.get(row.network);
    if (!live) return;
    if (row.tx_hash) {
      const receipt = await live.chain.receipt(row.tx_hash as Hex);
      if (receipt) {
        await this.conclude(row, live, receipt).catch(() => undefined);
        return;
      }
    }
    const from = getAddress(row.payer);
    const nonce = row.nonce as Hex;
    if (await live.chain.authorizationUsed(from, nonce)) {
      const found = await live.chain.findSettlement(row.split_address as Hex, from, nonce);
      if (found) await this.record(row, found);
      else await this.drive(row, live); // front-run into the split: split it now
      return;
    }
    const nowSeconds = BigInt(Math.floor(this.opts.now().getTime() / 1000));
    if (row.valid_before !== null && BigInt(row.valid_before) <= nowSeconds) {
      await store.advance(this.db, row.id, SETTLEABLE, { status: "failed", failure_reason: "authorization_expired" });
      return;
    }
    if (row.raw_tx && row.tx_hash) {
      try {
        await live.chain.broadcast(row.raw_tx as Hex);
      } catch (err) {
        if (!(err instanceof NonceSpentError)) throw err;
        // Another transaction took this one's nonce: it can never be mined, and the authorization is
        // still unused (checked above). Sign the settlement again with a nonce of our count; the
        // authorization's own nonce makes a second transfer impossible whatever happens to the first.
        await this.drive(row, live);
        return;
      }
      await store.advance(this.db, row.id, ["settling"], {});
      const receipt = await live.chain.waitForReceipt(row.tx_hash as Hex, this.opts.settleTimeoutMs);
      if (receipt) await this.conclude(row, live, receipt).catch(() => undefined);
    } else {
      await this.drive(row, live);
    }
  }
}

/** An EIP-3009 authorization as the buyer signed it (the payload's, or the one a row recorded), for the chain. */
function chainAuthorization(a: Record<keyof Authorization, unknown>): Authorization {
  return {
    from: getAddress(String(a.from)),
    to: getAddress(String(a.to)),
    value: BigInt(String(a.value)),
    validAfter: BigInt(String(a.validAfter)),
    validBefore: BigInt(String(a.validBefore)),
    nonce: String(a.nonce) as Hex,
  };
}

const authorizationOf = (payload: Pick<PaymentPayload, "payload">): Authorization => chainAuthorization(payload.payload.authorization);
const authorizationOfRow = (row: PaymentRow): Authorization => chainAuthorization(row.authorization);
