import { keccak256, parseTransaction, type Address, type Hex, type LocalAccount } from "viem";

/**
 * Signs and sends EVM transactions from one key: settlement today; escrow,
 * schedules and spending wallets later. One nonce queue per sender (so per key
 * in this process: several senders on one key would hand out the same nonce),
 * and what it signed goes out in nonce order. A transaction is signed before
 * it is sent, and its hash is known then, so a caller can record the hash
 * first and resolve a crash after broadcast from the chain (ADR 8).
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

/** A call to sign: `gas` is an estimate the caller already has (a dry run), reused instead of asking again. */
export interface Call {
  to: Address;
  data: Hex;
  gas?: bigint;
}

export interface SignedTransaction {
  raw: Hex;
  txHash: Hex;
}

const DEFAULT_FEE_CACHE_MS = 1_000;
const DEFAULT_SEND_ORDER_WAIT_MS = 2_000;

export class TransactionSender {
  private nextNonce?: number;
  private nonceQueue: Promise<unknown> = Promise.resolve();
  private feeCache?: { until: number; estimate: Promise<FeeEstimate> };
  /** Per nonce signed here: settles once that transaction was sent (or given up on). */
  private readonly sendSlots = new Map<number, { sent: Promise<void>; release: () => void }>();

  constructor(private readonly opts: TransactionSenderOptions) {}

  get address(): Address {
    return this.opts.account.address;
  }

  /**
   * Signs a call (EIP-1559, 20% over the gas estimate) with the next nonce of
   * this key, without sending it. Gas and fees are estimated before joining
   * the queue, so the queue holds only the nonce and the signature.
   */
  async sign(call: Call): Promise<SignedTransaction> {
    const { rpc, account, chainId } = this.opts;
    const [gas, fees] = await Promise.all([call.gas ?? rpc.estimateGas({ account: account.address, to: call.to, data: call.data }), this.fees()]);
    const run = this.nonceQueue.then(async () => {
      if (this.nextNonce === undefined) this.nextNonce = await rpc.getTransactionCount({ address: account.address, blockTag: "pending" });
      const raw = await account.signTransaction({
        chainId,
        type: "eip1559",
        to: call.to,
        data: call.data,
        nonce: this.nextNonce,
        gas: (gas * 12n) / 10n,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      this.openSlot(this.nextNonce);
      this.nextNonce += 1;
      return { raw, txHash: keccak256(raw) };
    });
    // A failed preparation (say, the estimate reverts) consumed no nonce: keep counting, and never
    // re-read the pending count here, which would not yet include transactions signed but not sent.
    this.nonceQueue = run.catch(() => undefined);
    return run;
  }

  /**
   * Sends a signed transaction. Transactions this sender signed go out in
   * nonce order (a node may refuse a nonce above the next one it expects, and
   * callers store each hash before sending, concurrently): each waits for the
   * one before it to be sent, for at most `sendOrderWaitMs`. Sending the same
   * transaction again is not an error.
   */
  async broadcast(raw: Hex): Promise<void> {
    const nonce = parseTransaction(raw).nonce;
    const previous = nonce === undefined ? undefined : this.sendSlots.get(nonce - 1);
    if (previous) await previous.sent;
    try {
      await this.send(raw);
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
    let release!: () => void;
    const sent = new Promise<void>((resolve) => (release = resolve));
    this.sendSlots.set(nonce, { sent, release });
    // A transaction signed but never sent (a crash of its request) must not hold the next one forever.
    setTimeout(() => this.releaseSlot(nonce), this.opts.sendOrderWaitMs ?? DEFAULT_SEND_ORDER_WAIT_MS).unref();
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
      if (/nonce too low/i.test(err instanceof Error ? err.message : String(err))) this.nextNonce = undefined;
      throw err;
    }
  }
}
