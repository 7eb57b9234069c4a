import { PaySplit, SplitFactory, TestUSDC } from "@c402/evm-contracts";
import {
  createPublicClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  keccak256,
  parseAbi,
  parseEventLogs,
  parseTransaction,
  TransactionReceiptNotFoundError,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { jsonRpcTransport } from "./json-rpc-transport";

export { RPC_CALL_CHANNEL, jsonRpcTransport } from "./json-rpc-transport";

/**
 * The EVM side of settlement: where a checkout's money goes (the split
 * address of its recipient set), what the chain says about an authorization,
 * and the settle transaction itself, signed by the facilitator (gas) key.
 * Nothing here knows whether the chain is the local devchain or Base.
 */

/** How long a fee estimate is reused, and how many split addresses are remembered. */
const FEE_CACHE_MS = 1_000;
/** How long a signed transaction waits for the one before it (same key) to be sent. */
const SEND_ORDER_WAIT_MS = 2_000;
const SPLIT_ADDRESS_MEMORY = 10_000;

const ERC1271_ABI = parseAbi(["function isValidSignature(bytes32 digest, bytes signature) view returns (bytes4)"]);
const ERC1271_MAGIC_VALUE = "0x1626ba7e";

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000" as const;

export interface SplitRecipients {
  seller: Address;
  /** Zero address when the checkout has no platform cut. */
  platform: Address;
  platformBps: number;
  feeWallet: Address;
  /** 0 = standard fee, 1 = escrow fee. */
  feeRule: 0 | 1;
}

export interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

export interface EvmChainConfig {
  /** CAIP-2 id, e.g. eip155:84532. */
  network: string;
  rpcUrl: string;
  usdc: Address;
  splitFactory: Address;
  facilitatorKey: Hex;
  /** Blocks on top of the settle transaction's block before it counts. */
  confirmations?: number;
  /** How long one JSON-RPC call may take before it counts as failed (default 10 s). */
  rpcTimeoutMs?: number;
}

export interface SettledEvent {
  txHash: Hex;
  blockNumber: bigint;
  providerAmount: bigint;
  platformAmount: bigint;
  feeAmount: bigint;
}

/** A dry run of a call: on success, the gas it needs (the estimate doubles as the simulation). */
export type SimulationResult = { ok: true; gas: bigint } | { ok: false; reason: string };

const AUTHORIZATION_USED = {
  type: "event",
  name: "AuthorizationUsed",
  inputs: [
    { name: "authorizer", type: "address", indexed: true },
    { name: "nonce", type: "bytes32", indexed: true },
  ],
} as const;

export class EvmChain {
  readonly network: string;
  readonly chainId: number;
  readonly facilitator: PrivateKeyAccount;
  private readonly client: PublicClient;
  private readonly chain: Chain;
  private nextNonce?: number;
  private nonceQueue: Promise<unknown> = Promise.resolve();
  private feeCache?: { until: number; estimate: Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> };
  private readonly splitAddresses = new Map<string, Address>();
  /** Per nonce signed here: settles once that transaction was sent (or given up on). */
  private readonly sendSlots = new Map<number, { sent: Promise<void>; release: () => void }>();

  constructor(private readonly config: EvmChainConfig) {
    this.network = config.network;
    this.chainId = Number(config.network.split(":")[1]);
    this.chain = {
      id: this.chainId,
      name: config.network,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [config.rpcUrl] } },
    };
    this.client = createPublicClient({
      chain: this.chain,
      transport: jsonRpcTransport(config.rpcUrl, { timeoutMs: config.rpcTimeoutMs ?? 10_000 }),
    }) as PublicClient;
    this.facilitator = privateKeyToAccount(config.facilitatorKey);
  }

  get usdc(): Address {
    return this.config.usdc;
  }

  private splitArgs(r: SplitRecipients) {
    return [this.config.usdc, getAddress(r.seller), getAddress(r.platform), r.platformBps, getAddress(r.feeWallet), r.feeRule] as const;
  }

  /** The CREATE2 address of the split for these recipients (computed offline, remembered; deployed on first settle). */
  splitAddress(r: SplitRecipients): Address {
    const args = this.splitArgs(r);
    const key = args.join("|");
    const known = this.splitAddresses.get(key);
    if (known) return known;
    const address = this.computeSplitAddress(args);
    if (this.splitAddresses.size >= SPLIT_ADDRESS_MEMORY) this.splitAddresses.clear();
    this.splitAddresses.set(key, address);
    return address;
  }

  private computeSplitAddress(args: ReturnType<EvmChain["splitArgs"]>): Address {
    const encoded = encodeAbiParameters(
      [{ type: "address" }, { type: "address" }, { type: "address" }, { type: "uint16" }, { type: "address" }, { type: "uint8" }],
      args,
    );
    return getContractAddress({
      opcode: "CREATE2",
      from: this.config.splitFactory,
      salt: keccak256(encoded),
      bytecode: `${PaySplit.bytecode}${encoded.slice(2)}` as Hex,
    });
  }

  private settleData(r: SplitRecipients, a: Authorization, signature: Hex): Hex {
    return encodeFunctionData({
      abi: SplitFactory.abi,
      functionName: "settle",
      args: [...this.splitArgs(r), a.from, a.value, a.validAfter, a.validBefore, a.nonce, signature],
    });
  }

  /** Runs the settle call against the current chain state without sending it. */
  async simulateSettle(r: SplitRecipients, a: Authorization, signature: Hex): Promise<SimulationResult> {
    return this.simulate(this.config.splitFactory, this.settleData(r, a, signature));
  }

  private async simulate(to: Address, data: Hex): Promise<SimulationResult> {
    try {
      // eth_estimateGas executes the call like eth_call and reverts the same way; its figure then
      // serves the signature, so a settlement runs the call on the node once before sending.
      return { ok: true, gas: await this.client.estimateGas({ account: this.facilitator.address, to, data }) };
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      return {
        ok: false,
        reason: /insufficient balance|transfer amount exceeds balance/i.test(text)
          ? "insufficient_funds"
          : /used or canceled/i.test(text)
            ? "nonce_used"
            : "simulation_failed",
      };
    }
  }

  /**
   * EIP-1271: whether the contract wallet at `signer` approves `signature` over
   * `digest` now. False for an address without code (an EOA, or a wallet not
   * deployed yet, which could not authorize a transfer anyway).
   */
  async isValidContractSignature(signer: Address, digest: Hex, signature: Hex): Promise<boolean> {
    try {
      const code = await this.client.getCode({ address: signer });
      if (!code || code === "0x") return false;
      const magic = await this.client.readContract({ address: signer, abi: ERC1271_ABI, functionName: "isValidSignature", args: [digest, signature] });
      return magic === ERC1271_MAGIC_VALUE;
    } catch {
      return false;
    }
  }

  async authorizationUsed(from: Address, nonce: Hex): Promise<boolean> {
    return this.client.readContract({ address: this.config.usdc, abi: TestUSDC.abi, functionName: "authorizationState", args: [from, nonce] });
  }

  async balanceOf(address: Address): Promise<bigint> {
    return this.client.readContract({ address: this.config.usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [address] });
  }

  /**
   * Signs the settle transaction with the facilitator key and returns it with
   * its hash, before anything is sent: the caller records the hash first, so
   * a crash after broadcast can be resolved from the chain.
   */
  signSettle(r: SplitRecipients, a: Authorization, signature: Hex, gas?: bigint): Promise<{ raw: Hex; txHash: Hex }> {
    return this.signCall(this.config.splitFactory, this.settleData(r, a, signature), gas);
  }

  /** Fee estimates, shared for a second: every settlement would otherwise ask twice more. */
  private fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const now = Date.now();
    if (!this.feeCache || this.feeCache.until <= now) {
      const estimate = this.client.estimateFeesPerGas();
      this.feeCache = { until: now + FEE_CACHE_MS, estimate };
      estimate.catch(() => {
        if (this.feeCache?.estimate === estimate) this.feeCache = undefined;
      });
    }
    return this.feeCache.estimate;
  }

  /**
   * Signs a call with the facilitator key; one nonce queue per adapter (per key
   * in this process). Gas and fees are estimated before joining the queue, so
   * the queue holds only the nonce and the signature.
   */
  private async signCall(to: Address, data: Hex, estimated?: bigint): Promise<{ raw: Hex; txHash: Hex }> {
    const [gas, fees] = await Promise.all([estimated ?? this.client.estimateGas({ account: this.facilitator.address, to, data }), this.fees()]);
    const run = this.nonceQueue.then(async () => {
      if (this.nextNonce === undefined) this.nextNonce = await this.client.getTransactionCount({ address: this.facilitator.address, blockTag: "pending" });
      const raw = await this.facilitator.signTransaction({
        chainId: this.chainId,
        type: "eip1559",
        to,
        data,
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
   * Sends a signed transaction. Transactions this process signed go out in
   * nonce order (a node may refuse a nonce above the next one it expects, and
   * the callers store each hash before sending, concurrently): each waits for
   * the one before it to be sent, for at most SEND_ORDER_WAIT_MS.
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

  private openSlot(nonce: number): void {
    let release!: () => void;
    const sent = new Promise<void>((resolve) => (release = resolve));
    this.sendSlots.set(nonce, { sent, release });
    // A transaction signed but never sent (a crash of its request) must not hold the next one forever.
    setTimeout(() => this.releaseSlot(nonce), SEND_ORDER_WAIT_MS).unref();
  }

  private releaseSlot(nonce: number): void {
    this.sendSlots.get(nonce)?.release();
    this.sendSlots.delete(nonce);
  }

  private async send(raw: Hex): Promise<void> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
    } catch (err) {
      // Sending the same signed transaction again (a retry, a resumed saga) is not an error.
      const known = await this.client.getTransaction({ hash: keccak256(raw) }).catch(() => undefined);
      if (known) return;
      // Only a nonce the chain has already passed (the key used elsewhere) means our count is wrong.
      // Otherwise the nonce stays taken: the sweep rebroadcasts this same transaction.
      if (/nonce too low/i.test(err instanceof Error ? err.message : String(err))) this.nextNonce = undefined;
      throw err;
    }
  }

  /** The receipt once mined with the configured confirmations, or undefined on timeout. */
  async waitForReceipt(txHash: Hex, timeoutMs: number): Promise<TransactionReceipt | undefined> {
    try {
      return await this.client.waitForTransactionReceipt({
        hash: txHash,
        timeout: timeoutMs,
        confirmations: this.config.confirmations ?? 1,
        pollingInterval: 100,
      });
    } catch {
      return undefined;
    }
  }

  /**
   * The receipt, or undefined when the chain has none (not mined). A failed
   * request throws: "could not ask" must never be read as "not there", or a
   * sweep would settle again something the chain already has.
   */
  async receipt(txHash: Hex): Promise<TransactionReceipt | undefined> {
    try {
      return await this.client.getTransactionReceipt({ hash: txHash });
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return undefined;
      throw err;
    }
  }

  /**
   * Reads a settle receipt: the split's Settled event for (from, nonce) and the
   * token's AuthorizationUsed for it (a Settled event alone is not proof: see ADR 7).
   */
  settledIn(receipt: TransactionReceipt, split: Address, from: Address, nonce: Hex): SettledEvent | undefined {
    if (receipt.status !== "success") return undefined;
    const settled = parseEventLogs({ abi: PaySplit.abi, logs: receipt.logs, eventName: "Settled" }).find(
      (l) => getAddress(l.address) === getAddress(split) && getAddress(l.args.from) === getAddress(from) && l.args.nonce.toLowerCase() === nonce.toLowerCase(),
    );
    if (!settled) return undefined;
    return {
      txHash: receipt.transactionHash,
      blockNumber: receipt.blockNumber,
      providerAmount: settled.args.providerAmount,
      platformAmount: settled.args.platformAmount,
      feeAmount: settled.args.feeAmount,
    };
  }

  /** Finds an earlier settlement of (from, nonce) on the chain, whoever sent it. */
  async findSettlement(split: Address, from: Address, nonce: Hex, fromBlock = 0n): Promise<SettledEvent | undefined> {
    const logs = await this.client.getLogs({
      address: split,
      event: PaySplit.abi.find((x) => x.type === "event" && x.name === "Settled") as (typeof PaySplit.abi)[number] & { type: "event" },
      args: { from, nonce },
      fromBlock,
    } as never);
    for (const log of logs as { transactionHash: Hex }[]) {
      const receipt = await this.receipt(log.transactionHash);
      const found = receipt && this.settledIn(receipt, split, from, nonce);
      if (found) {
        const used = await this.client.getLogs({ address: this.config.usdc, event: AUTHORIZATION_USED, args: { authorizer: from, nonce }, fromBlock });
        if (used.length > 0) return found;
      }
    }
    return undefined;
  }

  async ping(): Promise<void> {
    await this.client.getChainId();
  }
}
