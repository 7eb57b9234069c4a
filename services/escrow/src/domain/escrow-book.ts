import { ESCROW_ACTION, ESCROW_ACTION_SIGNER, ESCROW_STATE, escrowActionTypedData, type EscrowActionName } from "@c402/evm-contracts";
import { failpoint } from "@c402/failpoints";
import { recordSigned } from "@c402/sender-nonces";
import { ProblemError } from "@c402/problems";
import { encodePacked, getAddress, keccak256, recoverTypedDataAddress, serializeSignature, type Address, type Hex, type TransactionReceipt } from "viem";
import { REHEARSAL_NETWORK, REHEARSAL_TOKEN } from "@c402/x402";
import { escrowCalls, NonceSpentError, type EscrowChain, type EscrowLog } from "../chain/escrow-chain";
import type { GasReader } from "../chain/gas-reader";
import type { ArbiterReadinessFacts } from "../events/escrow-events";
import {
  escrowsStore,
  transactionsStore,
  type EscrowDb,
  type EscrowRow,
  type EscrowRowState,
  type EscrowTransactionRow,
  type TransactionKind,
} from "../store/escrow-store";
import {
  checkDeposit,
  depositRefused,
  storedAuthorization,
  storedTerms,
  type CheckedDeposit,
  type DepositAuthorizationText,
  type DepositTermsText,
  type EscrowContract,
} from "./deposits";
import { applyMove, clockOf, moveOfLog, moveOfTrigger } from "./escrow-moves";
import { arbiterReadiness } from "./readiness";
import { DEFAULT_ESCROW_SETTINGS } from "./settings";
import { decide, type EscrowTrigger } from "./transitions";

/** How long a prepared action's signature stays good: long enough to read and sign, short enough that a stale one expires. */
export const ACTION_SIGNATURE_SECONDS = 15 * 60;
/** How long a request waits for its transaction's receipt before answering pending (the sweep and the reader carry on). */
export const DEFAULT_CONFIRM_TIMEOUT_MS = 15_000;
/** Kept before a caller's deadline for the answer's way back. */
const ANSWER_MARGIN_MS = 1_000;

export interface EscrowBookOptions {
  /** The contract deposits and actions are signed for (test escrows too: their signatures are checked against it); undefined: no escrows. */
  contract?: EscrowContract;
  /** The chain and the relayer key (live escrows); undefined: live deposits answer unavailable. */
  chain?: EscrowChain;
  /** Reads arbiters' gas for escrow.escalated's readiness. */
  gas?: GasReader;
  now?: () => Date;
  confirmTimeoutMs?: number;
  onOutbox?: () => void;
}

export interface DepositRequest {
  paymentId: string;
  accountId: string;
  checkoutId: string;
  network: string;
  testMode: boolean;
  terms: DepositTermsText;
  authorization: DepositAuthorizationText;
  handoffId?: string;
}

export interface Outcome {
  row: EscrowRow;
  pending: boolean;
  replayed: boolean;
  txHash?: string;
}

const ACTION_TRIGGER: Record<EscrowActionName, EscrowTrigger> = { hold: "hold", approve: "approve", "request-refund": "request_refund", cancel: "cancel" };

const noSuchEscrow = () => new ProblemError("not-found", "No such escrow.");

/** An action or ruling the escrow's state does not take: the state named, the reason the rules give. */
const wrongState = (reason: string, state: string) =>
  new ProblemError("conflict", { message: reason, extensions: { reason: "escrow_state", state }, help: { fix: "Get the escrow to see what it can do now." } });

/**
 * The escrows (ADR 19): deposits, buyer and seller actions, rulings prepared for the arbiter, and
 * what the chain says happened to them. Every contract call is the relayer's, record first (the
 * escrow_transactions row, with the signed bytes and the hash, commits before anything is sent):
 * a crash anywhere is resumed from the row by the sweep, and never leads to a second transaction.
 */
export class EscrowBook {
  readonly contract: EscrowContract | undefined;
  readonly chain: EscrowChain | undefined;
  private readonly now: () => Date;
  private readonly confirmTimeoutMs: number;
  private readonly onOutbox: () => void;

  constructor(
    private readonly db: EscrowDb,
    private readonly opts: EscrowBookOptions = {},
  ) {
    this.contract = opts.contract;
    this.chain = opts.chain;
    this.now = opts.now ?? (() => new Date());
    this.confirmTimeoutMs = opts.confirmTimeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
    this.onOutbox = opts.onOutbox ?? (() => undefined);
  }

  private nowSeconds(): bigint {
    return BigInt(Math.floor(this.now().getTime() / 1000));
  }

  // ------------------------------------------------------------------ deposit

  /** `answerBy`: the caller's deadline; the receipt is awaited only until shortly before it (then pending). */
  async deposit(req: DepositRequest, answerBy?: Date): Promise<Outcome> {
    const existing = await escrowsStore.find(this.db, req.paymentId);
    if (existing) return this.replayDeposit(existing);
    const contract = this.contractFor(req.network, req.testMode);
    const checked = await checkDeposit(contract, req.terms, req.authorization, this.nowSeconds());
    const row = this.newRow(req, contract, checked);
    return req.testMode ? this.holdTestDeposit(row) : this.depositLive(row, checked, answerBy);
  }

  private contractFor(network: string, testMode: boolean): EscrowContract {
    const contract = this.contract;
    if (!contract || (!testMode && !this.chain)) {
      throw new ProblemError(
        "unavailable",
        "Escrow deposits are not available: this deployment names no escrow contract and relayer (ESCROW_CONTRACT, ESCROW_RELAYER_KEY).",
      );
    }
    // A rehearsal is signed under the rehearsal domain on the testnet (ADR 5): valid on no chain, and no chain is asked.
    const at = testMode ? rehearsalContract(contract) : contract;
    if (network !== at.network) throw depositRefused(`escrow runs on ${at.network}, not ${network}`, "unsupported_network");
    return at;
  }

  private newRow(req: DepositRequest, contract: EscrowContract, d: CheckedDeposit): EscrowRow {
    const now = this.now();
    const preset = req.terms.preset ?? "custom";
    return {
      payment_id: req.paymentId,
      checkout_id: req.checkoutId,
      account_id: req.accountId,
      network: contract.network,
      contract_address: contract.address.toLowerCase(),
      escrow_id: d.escrowId.toLowerCase(),
      payer: d.terms.buyer,
      seller: d.terms.seller,
      total: d.total.toString(),
      preset,
      settle_seconds: req.terms.settleSeconds,
      hold_seconds: req.terms.holdSeconds,
      backstop_seconds: req.terms.backstopSeconds,
      arbiter: d.terms.arbiter,
      terms: storedTerms(d.terms),
      authorization: storedAuthorization(d),
      state: "depositing",
      handoff_id: req.handoffId ?? null,
      test_mode: req.testMode,
      action_nonce: 0,
      deposit_tx_hash: null,
      close_tx_hash: null,
      closed_by: null,
      failure_reason: null,
      created_at: now,
      deposited_at: null,
      on_hold_at: null,
      escalated_at: null,
      closed_at: null,
      deadline_at: null,
      updated_at: now,
    };
  }

  /** A test escrow: the signature was checked; it is held at once, no chain asked. */
  private async holdTestDeposit(row: EscrowRow): Promise<Outcome> {
    const now = this.now();
    const held = await this.db.transaction().execute(async (trx) => {
      if (!(await escrowsStore.insert(trx, row))) return undefined;
      return applyMove(trx, row, {
        from: ["depositing"],
        to: "held",
        set: { deposited_at: now, deadline_at: new Date(now.getTime() + row.settle_seconds * 1000) },
        event: "escrow.held",
        txHash: "",
      });
    });
    if (!held) return this.replayAfterRace(row);
    this.onOutbox();
    return { row: held, pending: false, replayed: false };
  }

  /** Live: refuse what the chain would refuse (read, nothing sent), record the escrow and its signed deposit, send, confirm. */
  private async depositLive(row: EscrowRow, d: CheckedDeposit, answerBy?: Date): Promise<Outcome> {
    const chain = this.chain as EscrowChain;
    const data = escrowCalls.depositWithSignature(d.terms, d.validAfter, d.validBefore, d.signature);
    const refusal = await chain.simulate(data);
    if (refusal !== undefined) throw depositRefused(refusal, "deposit_would_revert");
    const recorded = await this.recordTransaction(row.payment_id, "deposit", null, data, (trx) => escrowsStore.insert(trx, row));
    if (!recorded) return this.replayAfterRace(row);
    return this.sendAndConfirm(recorded, false, answerBy);
  }

  /** A concurrent deposit of the same payment recorded first: its outcome is this one's; the same terms under another payment are refused. */
  private async replayAfterRace(row: EscrowRow): Promise<Outcome> {
    const first = await escrowsStore.find(this.db, row.payment_id);
    if (!first) throw depositRefused("this authorization was already used for another payment", "authorization_used");
    return this.replayDeposit(first);
  }

  private async replayDeposit(row: EscrowRow): Promise<Outcome> {
    if (row.state === "failed") throw depositRefused(row.failure_reason ?? "the chain refused it", "deposit_failed");
    if (row.state !== "depositing") return { row, pending: false, replayed: true };
    const tx = await transactionsStore.depositOf(this.db, row.payment_id);
    if (!tx || !this.chain) return { row, pending: true, replayed: true };
    const outcome = await this.confirm(tx, Math.min(this.confirmTimeoutMs, 2_000));
    if (outcome.row.state === "failed") throw depositRefused(outcome.row.failure_reason ?? "the chain refused it", "deposit_failed");
    return { ...outcome, replayed: true };
  }

  // ------------------------------------------------------------------ reads

  async get(paymentId: string, accountId?: string): Promise<EscrowRow> {
    const row = await escrowsStore.find(this.db, paymentId);
    if (!row || (accountId !== undefined && row.account_id !== accountId)) throw noSuchEscrow();
    return row;
  }

  list(accountId: string, opts: { state?: EscrowRowState; size: number; startingAfter?: string }) {
    return escrowsStore.page(this.db, accountId, opts);
  }

  // ------------------------------------------------------------------ actions

  private async openEscrow(paymentId: string, checkoutId: string): Promise<EscrowRow> {
    const row = await escrowsStore.find(this.db, paymentId);
    if (!row || row.checkout_id !== checkoutId) throw noSuchEscrow();
    return row;
  }

  /** Now, by the clock the escrow's windows run on: the chain's (its latest block) for a live escrow, the service's for a test one. */
  private async clockNow(row: EscrowRow): Promise<Date> {
    if (row.test_mode || !this.chain) return this.now();
    return new Date(Number((await this.chain.head()).timestamp) * 1000);
  }

  private async refuseUnlessAllowed(row: EscrowRow, trigger: EscrowTrigger): Promise<void> {
    if (row.state === "depositing") throw wrongState("The escrow's deposit is not confirmed yet: retry shortly.", row.state);
    if (row.state === "failed") throw wrongState("The escrow's deposit failed: there is nothing to act on.", row.state);
    const decision = decide(clockOf(row), trigger, await this.clockNow(row));
    if (!decision.ok) throw wrongState(decision.reason, row.state);
  }

  /** The escrow's current action nonce: the contract's for a live escrow, the row's for a test one. */
  private async actionNonce(row: EscrowRow): Promise<bigint> {
    if (row.test_mode) return BigInt(row.action_nonce);
    if (!this.chain) throw new ProblemError("unavailable", "Escrow actions are not available right now.");
    return this.chain.nonces(row.escrow_id as Hex);
  }

  private typedData(row: EscrowRow, action: EscrowActionName, nonce: bigint, deadline: bigint) {
    const contract = this.contract;
    if (!contract) throw new ProblemError("unavailable", "Escrow actions are not available right now.");
    return escrowActionTypedData({ chainId: contract.chainId, escrow: contract.address, escrowId: row.escrow_id as Hex, action, nonce, deadline });
  }

  async prepareAction(paymentId: string, checkoutId: string, action: EscrowActionName) {
    const row = await this.openEscrow(paymentId, checkoutId);
    await this.refuseUnlessAllowed(row, ACTION_TRIGGER[action]);
    const deadline = BigInt(Math.floor((await this.clockNow(row)).getTime() / 1000)) + BigInt(ACTION_SIGNATURE_SECONDS);
    const typed = this.typedData(row, action, await this.actionNonce(row), deadline);
    const signer = ESCROW_ACTION_SIGNER[action] === "seller" ? row.seller : row.payer;
    const zero = `0x${"0".repeat(64)}` as Hex;
    return {
      row,
      signer,
      typedData: typed,
      deadline,
      // The self-broadcast form: the wallet's own v, r, s replace the zero placeholders.
      transaction: { to: row.contract_address, data: escrowCalls.submitAction(row.escrow_id as Hex, ESCROW_ACTION[action], deadline, 0, zero, zero) },
    };
  }

  /**
   * Relays a signed action: checked (the state allows it, the signature recovers to the party at
   * the escrow's current nonce, its deadline not passed), recorded, sent, confirmed. The same signed
   * action again answers the first one's outcome.
   */
  async submitAction(req: {
    paymentId: string;
    checkoutId: string;
    action: EscrowActionName;
    deadline: bigint;
    v: number;
    r: string;
    s: string;
  }): Promise<Outcome> {
    const row = await this.openEscrow(req.paymentId, req.checkoutId);
    const txId = `act_${keccak256(encodePacked(["string", "string", "uint64", "uint8", "string", "string"], [row.payment_id, req.action, req.deadline, req.v, req.r.toLowerCase(), req.s.toLowerCase()])).slice(2, 42)}`;
    const earlier = await transactionsStore.find(this.db, txId);
    if (earlier) return { ...(await this.confirm(earlier, Math.min(this.confirmTimeoutMs, 2_000))), replayed: true };
    await this.refuseUnlessAllowed(row, ACTION_TRIGGER[req.action]);
    if (req.deadline < BigInt(Math.floor((await this.clockNow(row)).getTime() / 1000)))
      throw wrongState("The signature's deadline has passed: prepare the action again and sign it.", row.state);
    const signature = signatureOf(req.v, req.r, req.s);
    const nonce = await this.actionNonce(row);
    let signer: Address;
    try {
      signer = await recoverTypedDataAddress({ ...this.typedData(row, req.action, nonce, req.deadline), signature });
    } catch {
      throw new ProblemError("invalid-request", { message: "The signature cannot be read.", errors: [{ field: "signature", reason: "not a signature" }] });
    }
    const party = ESCROW_ACTION_SIGNER[req.action];
    if (signer.toLowerCase() !== (party === "seller" ? row.seller : row.payer).toLowerCase()) {
      throw wrongState(`The signature is not the ${party}'s for this action at the escrow's current nonce: prepare the action again and sign it.`, row.state);
    }
    return row.test_mode ? this.actOnTestEscrow(row, req.action, txId) : this.actLive(row, req, txId);
  }

  /** A test escrow: the rules applied in the database, the action recorded (for replays) as a confirmed transaction of no chain. */
  private async actOnTestEscrow(row: EscrowRow, action: EscrowActionName, txId: string): Promise<Outcome> {
    const decision = decide(clockOf(row), ACTION_TRIGGER[action], this.now());
    if (!decision.ok) throw wrongState(decision.reason, row.state);
    const readiness = decision.to === "escalated" ? await this.readinessOf(row) : undefined;
    const moved = await this.db.transaction().execute(async (trx) => {
      const now = this.now();
      const inserted = await transactionsStore.insert(trx, {
        id: txId,
        payment_id: row.payment_id,
        kind: "action",
        action,
        raw_tx: "",
        tx_hash: "",
        nonce: String(row.action_nonce),
        status: "confirmed",
        failure_reason: null,
        created_at: now,
        updated_at: now,
      });
      if (!inserted) return undefined;
      const move = moveOfTrigger(row, ACTION_TRIGGER[action], decision.to, now);
      const applied = await applyMove(trx, row, { ...move, set: { ...move.set, action_nonce: row.action_nonce + 1 } }, readiness);
      // Another action moved it meanwhile: nothing recorded, the signature's nonce is stale.
      if (!applied) throw wrongState("The escrow changed meanwhile: get it and prepare the action again.", row.state);
      return applied;
    });
    if (!moved) return { row: await this.get(row.payment_id), pending: false, replayed: true };
    this.onOutbox();
    return { row: moved, pending: false, replayed: false };
  }

  private async actLive(row: EscrowRow, req: { action: EscrowActionName; deadline: bigint; v: number; r: string; s: string }, txId: string): Promise<Outcome> {
    const chain = this.chain as EscrowChain;
    const data = escrowCalls.submitAction(row.escrow_id as Hex, ESCROW_ACTION[req.action], req.deadline, req.v, req.r as Hex, req.s as Hex);
    const refusal = await chain.simulate(data);
    if (refusal !== undefined) throw wrongState(`The escrow contract refuses this action (${refusal}).`, row.state);
    const recorded = await this.recordTransaction(row.payment_id, "action", req.action, data, async () => true, txId);
    if (!recorded) {
      const first = await transactionsStore.find(this.db, txId);
      if (!first) throw new ProblemError("conflict", "This action is being submitted: retry shortly.");
      return { ...(await this.confirm(first, Math.min(this.confirmTimeoutMs, 2_000))), replayed: true };
    }
    return this.sendAndConfirm(recorded, false);
  }

  /** The unsigned ruling for the escalated escrow's arbiter wallet (the service holds no arbiter key). */
  async prepareRuling(paymentId: string, accountId: string, toSeller: boolean) {
    const row = await this.get(paymentId, accountId);
    await this.refuseUnlessAllowed(row, toSeller ? "rule_to_seller" : "rule_to_buyer");
    return { row, transaction: { from: row.arbiter, to: row.contract_address, data: escrowCalls.rule(row.escrow_id as Hex, toSeller) } };
  }

  // ------------------------------------------------------------------ the saga

  /**
   * Signs `data` from the relayer with the shared nonce count and records the transaction (and,
   * with `withRecord`, the caller's own row) in one commit; undefined when the record was there
   * already (a concurrent duplicate: nothing signed is kept, the nonce is not counted).
   */
  async recordTransaction(
    paymentId: string,
    kind: TransactionKind,
    action: string | null,
    data: Hex,
    withRecord: (trx: EscrowDb) => Promise<boolean>,
    id: string = `${kind}_${paymentId}_${Date.now().toString(36)}`,
    db: EscrowDb = this.db,
  ): Promise<EscrowTransactionRow | undefined> {
    const chain = this.chain as EscrowChain;
    const recorded = await chain.signReserved(data, (key, sign) =>
      recordSigned(db, key, sign, async (trx, signed, nonce) => {
        if (!(await withRecord(trx))) return undefined;
        const now = new Date();
        const row: EscrowTransactionRow = {
          id,
          payment_id: paymentId,
          kind,
          action,
          raw_tx: signed.raw,
          tx_hash: signed.txHash.toLowerCase(),
          nonce: String(nonce),
          status: "signed",
          failure_reason: null,
          created_at: now,
          updated_at: now,
        };
        return (await transactionsStore.insert(trx, row)) ? row : undefined;
      }),
    );
    if (recorded) failpoint("after-sign");
    return recorded;
  }

  /** Sends a recorded transaction (the same bytes, whatever the retries) and waits for its receipt. */
  async sendAndConfirm(tx: EscrowTransactionRow, resumed: boolean, answerBy?: Date): Promise<Outcome> {
    const chain = this.chain as EscrowChain;
    try {
      await chain.broadcast(tx.raw_tx as Hex);
    } catch (err) {
      if (err instanceof NonceSpentError) return this.nonceSpent(tx);
      // Unknown whether it reached the chain: the sweep sends the same bytes again.
      return { row: await this.get(tx.payment_id), pending: true, replayed: resumed, txHash: tx.tx_hash };
    }
    await transactionsStore.mark(this.db, tx.id, ["signed"], { status: "sent" });
    failpoint("after-broadcast");
    return this.confirm(tx, this.waitFor(answerBy));
  }

  /** How long to wait for a receipt: the configured wait, cut to end a second before the caller's deadline. */
  private waitFor(answerBy: Date | undefined): number {
    if (!answerBy) return this.confirmTimeoutMs;
    return Math.max(0, Math.min(this.confirmTimeoutMs, answerBy.getTime() - Date.now() - ANSWER_MARGIN_MS));
  }

  /** Waits up to `timeoutMs` for the transaction's receipt and applies it; pending while there is none. */
  async confirm(tx: EscrowTransactionRow, timeoutMs: number): Promise<Outcome> {
    if (tx.status === "signed" || tx.status === "sent") {
      const receipt = this.chain && tx.tx_hash ? await this.chain.waitForReceipt(tx.tx_hash as Hex, timeoutMs) : null;
      if (receipt) {
        failpoint("after-receipt");
        await this.conclude(tx, receipt);
      }
    }
    const after = (await transactionsStore.find(this.db, tx.id)) ?? tx;
    return {
      row: await this.get(tx.payment_id),
      pending: after.status === "signed" || after.status === "sent",
      replayed: false,
      ...(tx.tx_hash ? { txHash: tx.tx_hash } : {}),
    };
  }

  /** A mined transaction: its logs applied (as the reader would), the transaction confirmed; a reverted one failed (and its deposit). */
  async conclude(tx: EscrowTransactionRow, receipt: TransactionReceipt): Promise<void> {
    const chain = this.chain as EscrowChain;
    if (receipt.status === "success") {
      await this.applyLogs(chain.logsOf(receipt), receipt.blockNumber);
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await transactionsStore.mark(trx, tx.id, ["signed", "sent"], { status: "failed", failure_reason: "reverted" });
      if (tx.kind === "deposit") {
        await escrowsStore.advance(trx, tx.payment_id, ["depositing"], { state: "failed", failure_reason: "the escrow contract refused the deposit" });
      }
    });
  }

  /** Another transaction took this one's nonce (the key used elsewhere): it can never be mined. */
  private async nonceSpent(tx: EscrowTransactionRow): Promise<Outcome> {
    await this.db.transaction().execute(async (trx) => {
      await transactionsStore.mark(trx, tx.id, ["signed", "sent"], { status: "failed", failure_reason: "nonce_spent" });
      if (tx.kind === "deposit" && (await (this.chain as EscrowChain).state((await this.get(tx.payment_id)).escrow_id as Hex)) === ESCROW_STATE.none) {
        await escrowsStore.advance(trx, tx.payment_id, ["depositing"], { state: "failed", failure_reason: "the deposit could not be sent" });
      }
    });
    return { row: await this.get(tx.payment_id), pending: false, replayed: false, txHash: tx.tx_hash };
  }

  /**
   * Applies contract logs in chain order, each to its escrow (locked) with its event, and confirms
   * the service's own transactions among them: the reader's batch and a receipt's logs alike. A
   * log of an escrow this service does not know, or already applied, changes nothing.
   */
  async applyLogs(logs: readonly EscrowLog[], fallbackBlock?: bigint, extra?: (trx: EscrowDb) => Promise<void>): Promise<number> {
    const chain = this.chain as EscrowChain;
    const times = new Map<bigint, bigint>();
    const blockTime = async (n: bigint) => {
      if (!times.has(n)) times.set(n, await chain.blockTime(n));
      return times.get(n) as bigint;
    };
    // Read before the transaction: an escalation's readiness (the arbiter's gas) and the blocks' times.
    const readiness = new Map<string, ArbiterReadinessFacts>();
    for (const log of logs) {
      await blockTime(log.blockNumber ?? (fallbackBlock as bigint));
      if (log.eventName === "Escalated") readiness.set(log.args.escrowId.toLowerCase(), await this.readinessOfArbiter(log.args.arbiter));
    }
    let moved = 0;
    await this.db.transaction().execute(async (trx) => {
      for (const log of logs) {
        const id = "escrowId" in log.args ? (log.args.escrowId as Hex) : undefined;
        if (!id) continue;
        const row = await escrowsStore.lockByEscrowId(trx, chain.contract, id);
        if (!row) continue;
        const move = moveOfLog(log, row, times.get(log.blockNumber ?? (fallbackBlock as bigint)) as bigint);
        if (move && (await applyMove(trx, row, move, readiness.get(id.toLowerCase())))) moved += 1;
        const own = await transactionsStore.byHash(trx, log.transactionHash);
        if (own) await transactionsStore.mark(trx, own.id, ["signed", "sent", "failed"], { status: "confirmed", failure_reason: null });
      }
      await extra?.(trx);
    });
    if (moved > 0) this.onOutbox();
    return moved;
  }

  private readinessOf(row: EscrowRow): Promise<ArbiterReadinessFacts> {
    return this.readinessOfArbiter(row.arbiter);
  }

  /** The escrow's arbiter's readiness, as escrow.escalated carries it (the readiness domain's, for this one arbiter). */
  private async readinessOfArbiter(arbiter: string): Promise<ArbiterReadinessFacts> {
    const r = await arbiterReadiness({ ...DEFAULT_ESCROW_SETTINGS, arbiterEvm: arbiter, arbiterSvm: null }, this.opts.gas);
    // An EVM arbiter is named, so the readiness has its EVM side.
    const evm = r.evm as NonNullable<typeof r.evm>;
    return { arbiter, family: "evm", gasBalance: evm.gasBalance, rulingsAffordable: evm.rulingsAffordable, note: evm.note };
  }

  // ------------------------------------------------------------------ the sweep's steps

  /** Resumes a transaction left signed or sent: concluded when mined, else the same bytes sent again. */
  async resume(tx: EscrowTransactionRow): Promise<void> {
    const chain = this.chain;
    if (!chain || !tx.raw_tx) return;
    const receipt = await chain.receipt(tx.tx_hash as Hex);
    if (receipt) return this.conclude(tx, receipt);
    await this.sendAndConfirm(tx, true);
  }

  /**
   * Claims due escrows (FOR UPDATE SKIP LOCKED: one sweeper per escrow across replicas) and takes
   * each one's timed exit: a live one is recorded (release or refund, signed) in the claim's commit
   * and then sent; a test one moves in the database. Answers how many were acted on.
   */
  async sweepTimedExits(testMode: boolean, limit = 20): Promise<number> {
    if (!testMode && !this.chain) return 0;
    const before = testMode ? this.now() : new Date(Number((await (this.chain as EscrowChain).head()).timestamp) * 1000);
    const recorded: EscrowTransactionRow[] = [];
    let acted = 0;
    await this.db.transaction().execute(async (trx) => {
      const due = await escrowsStore.claimDue(trx, testMode, before, limit);
      for (const row of due) {
        if (testMode) {
          const exit = decideTimedExit(row, before);
          if (!exit) continue;
          const move = moveOfTrigger(row, exit.trigger, exit.to, before);
          if (await applyMove(trx, row, move)) acted += 1;
          continue;
        }
        const chain = this.chain as EscrowChain;
        const exit = await chain.timedExit(row.escrow_id as Hex);
        if (!exit.due || exit.exit === 0) continue;
        const kind = exit.exit === 1 ? "release" : "refund";
        const data = kind === "release" ? escrowCalls.release(row.escrow_id as Hex) : escrowCalls.refund(row.escrow_id as Hex);
        const tx = await this.recordTransaction(row.payment_id, kind, null, data, async () => true, undefined, trx);
        if (tx) recorded.push(tx);
      }
    });
    if (testMode && acted > 0) this.onOutbox();
    for (const tx of recorded) {
      await this.sendAndConfirm(tx, false).catch(() => undefined);
      acted += 1;
    }
    return acted;
  }
}

/** The timed exit a test escrow's rules give at `now`, if one is due. */
function decideTimedExit(row: EscrowRow, now: Date): { trigger: EscrowTrigger; to: "released" | "refunded" } | undefined {
  for (const trigger of ["settle_window_end", "hold_window_end", "backstop_end"] as const) {
    const d = decide(clockOf(row), trigger, now);
    if (d.ok) return { trigger, to: d.to as "released" | "refunded" };
  }
  return undefined;
}

function signatureOf(v: number, r: string, s: string): Hex {
  if (!/^0x[0-9a-fA-F]{64}$/.test(r) || !/^0x[0-9a-fA-F]{64}$/.test(s) || (v !== 27 && v !== 28 && v !== 0 && v !== 1)) {
    throw new ProblemError("invalid-request", {
      message: "The signature is not v (27 or 28), r and s (32 bytes of hex each).",
      errors: [{ field: "signature", reason: "malformed" }],
    });
  }
  return serializeSignature({ r: r as Hex, s: s as Hex, yParity: v % 27 === 0 ? 0 : 1 });
}

/** The contract a rehearsal deposit names: the same address, on the rehearsal network, with the rehearsal token's domain. */
function rehearsalContract(contract: EscrowContract): EscrowContract {
  return {
    network: REHEARSAL_NETWORK,
    chainId: Number(REHEARSAL_NETWORK.split(":")[1]),
    address: contract.address,
    token: { ...REHEARSAL_TOKEN, address: getAddress(REHEARSAL_TOKEN.address) },
  };
}
