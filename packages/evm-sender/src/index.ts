import { keccak256, parseTransaction, type Address, type Hex, type LocalAccount } from "viem";

/**
 * Signs and sends EVM transactions from one key: settlement today; escrow,
 * schedules and spending wallets later. A transaction is signed before it is
 * sent, and its hash is known then, so a caller can record the hash first and
 * resolve a crash after broadcast from the chain (ADR 8).
 *
 * Nonces: `sign` counts them in this process (one queue per sender, so
 * several senders, or processes, on one key would hand out the same nonce);
 * `signReserved` takes each from a count the caller keeps where every process
 * signing with the key shares it (ADR 11). Either way, what was signed here
 * goes out in nonce order.
 */

/** The JSON-RPC calls a sender makes; viem's PublicClient has them. */
export interface SenderRpc {
  estimateGas(args: { account: Address; to: Address; data: Hex }): Promise<bigint>;
  estimateFeesPerGas(): Promise<FeeEstimate>;
  getTransactionCount(args: { address: Address; blockTag: "pending" }): Promise<number>;
  sendRawTransaction(args: { serializedTransaction: Hex }): Promise<Hex>;
  getTransaction(args: { hash: Hex }): Promise<unknown>;
}

export interface FeeEstimate {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface TransactionSenderOptions {
  rpc: SenderRpc;
  /** The key that signs and pays gas. */
  account: LocalAccount;
  chainId: number;
  /** How long a fee estimate is reused (default 1 s): every transaction would otherwise ask twice more. */
  feeCacheMs?: number;
  /** How long a signed transaction waits for the one before it (same key) to be sent (default 2 s). */
  sendOrderWaitMs?: number;
}

/** A call to sign: `gas` is the limit the caller settled on, used as it is; without it, the node's estimate and 20% more. */
export interface Call {
  to: Address;
  data: Hex;
  gas?: bigint;
}

export interface SignedTransaction {
  raw: Hex;
  txHash: Hex;
}

/**
 * What `signReserved` asks of the caller's shared count of `address`'s nonces:
 * take the next one under a lock every signer of the key respects (from
 * `chainCount` when the count has none yet, and at least that when `behind`:
 * the chain passed the count, the key was used elsewhere), run `sign` with it,
 * and count the nonce as used only in the commit that records what was signed
 * (so no nonce is left unused by a crash). Its answer is the caller's (say, the
 * row it recorded), or undefined when it recorded nothing.
 */
export type NonceReservation<T> = (
  key: { address: Address; chainId: number; behind: boolean; chainCount: () => Promise<number> },
  sign: (nonce: number) => Promise<SignedTransaction>,
) => Promise<T>;

/** A call with its gas and fees settled, ready to be signed with any nonce. */
interface PreparedCall {
  to: Address;
  data: Hex;
  gas: bigint;
  fees: FeeEstimate;
}

const DEFAULT_FEE_CACHE_MS = 1_000;
/** How often a transaction the node found ahead of its predecessor (another process's, not sent yet) is offered again. */
const NONCE_TOO_HIGH_RETRY_MS = 25;
const DEFAULT_SEND_ORDER_WAIT_MS = 2_000;

export class TransactionSender {
  private nextNonce?: number;
  /** The node said a nonce of ours was too low: the next reservation starts from the chain's count. */
  private behind = false;
  private nonceQueue: Promise<unknown> = Promise.resolve();
  private feeCache?: { until: number; estimate: Promise<FeeEstimate> };
  /** Per nonce signed here: settles once that transaction was sent (or given up on). */
  private readonly sendSlots = new Map<number, { sent: Promise<void>; release: () => void }>();

  constructor(private readonly opts: TransactionSenderOptions) {}

  get address(): Address {
    return this.opts.account.address;
  }

  /**
   * Signs a call (EIP-1559; its gas, or 20% over the estimate) with the next nonce of
   * this key as counted in this process, without sending it. Gas and fees are
   * estimated before joining the queue, so the queue holds only the nonce and
   * the signature.
   */
  async sign(call: Call): Promise<SignedTransaction> {
    const prepared = await this.prepare(call);
    const run = this.nonceQueue.then(async () => {
      if (this.nextNonce === undefined) this.nextNonce = await this.chainCount();
      const signed = await this.signAt(prepared, this.nextNonce);
      this.nextNonce += 1;
      return signed;
    });
    // A failed preparation (say, the estimate reverts) consumed no nonce: keep counting, and never
    // re-read the pending count here, which would not yet include transactions signed but not sent.
    this.nonceQueue = run.catch(() => undefined);
    return run;
  }

  /**
   * Signs a call as `sign` does, with a nonce `reserve` takes from the count
   * every process signing with this key shares, and answers what `reserve`
   * answers. A preparation that fails (the estimate reverts) reserves nothing.
   */
  async signReserved<T>(call: Call, reserve: NonceReservation<T>): Promise<T> {
    const prepared = await this.prepare(call);
    const behind = this.behind;
    const answer = await reserve({ address: this.address, chainId: this.opts.chainId, behind, chainCount: () => this.chainCount() }, (nonce) =>
      this.signAt(prepared, nonce),
    );
    if (behind) this.behind = false;
    return answer;
  }

  private async prepare(call: Call): Promise<PreparedCall> {
    const { rpc, account } = this.opts;
    const estimate = async () => ((await rpc.estimateGas({ account: account.address, to: call.to, data: call.data })) * 12n) / 10n;
    const [gas, fees] = await Promise.all([call.gas ?? estimate(), this.fees()]);
    return { to: call.to, data: call.data, gas, fees };
  }

  private async signAt(prepared: PreparedCall, nonce: number): Promise<SignedTransaction> {
    const raw = await this.opts.account.signTransaction({
      chainId: this.opts.chainId,
      type: "eip1559",
      to: prepared.to,
      data: prepared.data,
      nonce,
      gas: prepared.gas,
      maxFeePerGas: prepared.fees.maxFeePerGas,
      maxPriorityFeePerGas: prepared.fees.maxPriorityFeePerGas,
    });
    this.openSlot(nonce);
    return { raw, txHash: keccak256(raw) };
  }

  private chainCount(): Promise<number> {
    return this.opts.rpc.getTransactionCount({ address: this.opts.account.address, blockTag: "pending" });
  }

  /**
   * Sends a signed transaction. Transactions this sender signed go out in
   * nonce order (a node may refuse a nonce above the next one it expects, and
   * callers store each hash before sending, concurrently): each waits for the
   * one before it to be sent, for at most `sendOrderWaitMs`; and one the node
   * finds ahead of its predecessor (signed by another process that has not sent
   * it yet; a node that cannot queue it says "nonce too high") is offered
   * again for as long. Sending the same transaction again is not an error.
   */
  async broadcast(raw: Hex): Promise<void> {
    const nonce = parseTransaction(raw).nonce;
    const previous = nonce === undefined ? undefined : this.sendSlots.get(nonce - 1);
    if (previous) await previous.sent;
    try {
      const giveUpAt = Date.now() + (this.opts.sendOrderWaitMs ?? DEFAULT_SEND_ORDER_WAIT_MS);
      for (;;) {
        try {
          await this.send(raw);
          return;
        } catch (err) {
          if (!/nonce too high/i.test(messageOf(err)) || Date.now() >= giveUpAt) throw err;
          await new Promise((r) => setTimeout(r, NONCE_TOO_HIGH_RETRY_MS));
        }
      }
    } finally {
      if (nonce !== undefined) this.releaseSlot(nonce);
    }
  }

  /** Fee estimates, shared for `feeCacheMs`. */
  private fees(): Promise<FeeEstimate> {
    const now = Date.now();
    if (!this.feeCache || this.feeCache.until <= now) {
      const estimate = this.opts.rpc.estimateFeesPerGas();
      this.feeCache = { until: now + (this.opts.feeCacheMs ?? DEFAULT_FEE_CACHE_MS), estimate };
      estimate.catch(() => {
        if (this.feeCache?.estimate === estimate) this.feeCache = undefined;
      });
    }
    return this.feeCache.estimate;
  }

  private openSlot(nonce: number): void {
    this.releaseSlot(nonce); // a reservation rolled back: the nonce was signed again
    let release!: () => void;
    const sent = new Promise<void>((resolve) => (release = resolve));
    const slot = { sent, release };
    this.sendSlots.set(nonce, slot);
    // A transaction signed but never sent (a crash of its request) must not hold the next one forever.
    setTimeout(() => {
      if (this.sendSlots.get(nonce) === slot) this.releaseSlot(nonce);
    }, this.opts.sendOrderWaitMs ?? DEFAULT_SEND_ORDER_WAIT_MS).unref();
  }

  private releaseSlot(nonce: number): void {
    this.sendSlots.get(nonce)?.release();
    this.sendSlots.delete(nonce);
  }

  private async send(raw: Hex): Promise<void> {
    try {
      await this.opts.rpc.sendRawTransaction({ serializedTransaction: raw });
    } catch (err) {
      // Sending the same signed transaction again (a retry, a resumed saga) is not an error.
      const known = await this.opts.rpc.getTransaction({ hash: keccak256(raw) }).catch(() => undefined);
      if (known) return;
      // Only a nonce the chain has already passed (the key used elsewhere) means our count is wrong.
      // Otherwise the nonce stays taken: the caller's sweep rebroadcasts this same transaction.
      if (/nonce too low/i.test(messageOf(err))) {
        this.nextNonce = undefined;
        this.behind = true;
        throw new NonceSpentError(parseTransaction(raw).nonce, err);
      }
      throw err;
    }
  }
}

/**
 * The chain passed this transaction's nonce with another transaction (the key
 * was used elsewhere) and the node does not know this one: it can never be
 * mined. Whoever recorded it must sign its work again, with a fresh nonce.
 */
export class NonceSpentError extends Error {
  constructor(
    readonly nonce: number | undefined,
    cause: unknown,
  ) {
    super(`nonce ${nonce ?? "?"} was used by another transaction: this one can never be mined`, { cause });
    this.name = "NonceSpentError";
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
