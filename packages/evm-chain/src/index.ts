import { PaySplit, SplitFactory, TestUSDC } from "@c402/evm-contracts";
import { TransactionSender, type NonceReservation, type SignedTransaction } from "@c402/evm-sender";
import {
  createPublicClient,
  decodeFunctionData,
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
export { NonceSpentError, type NonceReservation } from "@c402/evm-sender";

/**
 * The EVM side of settlement: where a checkout's money goes (the split
 * address of its recipient set), what the chain says about an authorization,
 * and the settle transaction itself, signed by the facilitator (gas) key
 * through its nonce queue (`@c402/evm-sender`). Nothing here knows whether
 * the chain is the local devchain or Base.
 */

/** How many split addresses are remembered (their addresses, and which are deployed). */
const SPLIT_ADDRESS_MEMORY = 10_000;

/**
 * The gas a settlement transaction is given, from what the factory's
 * `settleEach` spends rather than from an estimate: it gives each payment a
 * fixed allowance (SETTLE_GAS_PER_PAYMENT) or reverts whole, so an estimate
 * would search for the same bound by running the call a dozen times. Each
 * figure is well above what it covers; too little would only revert the
 * transaction, and its payments would be settled again (see LiveEvmSettlement).
 */
const SETTLEMENT_GAS = {
  /** The transaction itself and the loop around the payments. */
  transaction: 80_000n,
  /** One payment: its allowance (the factory's SETTLE_GAS_PER_PAYMENT) with the 1/64 a call keeps back and the
   * factory's check above it, plus the payment's calldata, the split's address and the call (about 40,000). */
  payment: (500_000n * 64n) / 63n + 10_000n + 100_000n,
  /** A split deployed by its first settlement (about 650,000: its code is 3 KB). */
  splitDeployment: 1_000_000n,
};

/**
 * The most gas one settlement transaction may be given: below the per-transaction cap some networks
 * enforce (2^24, EIP-7825) and far below any block's limit.
 */
export const MOST_SETTLEMENT_GAS = 15_000_000n;

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

/** One payment to settle: who its split pays, and the buyer's signed authorization. */
export interface Settlement {
  recipients: SplitRecipients;
  authorization: Authorization;
  signature: Hex;
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

/** A dry run of a call against the chain's current state. */
export type SimulationResult = { ok: true } | { ok: false; reason: string };

/** A wait for one transaction's receipt, shared until `until` (epoch ms). */
interface ReceiptWait {
  until: number;
  receipt: Promise<TransactionReceipt | undefined>;
}

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
  /** The facilitator key's signer: its own nonce queue for `signSettlements`, a shared count for `signSettlementsReserved`. */
  private readonly sender: TransactionSender;
  private readonly splitAddresses = new Map<string, Address>();
  /** Splits known to be deployed (one that has settled a payment has code, for good). */
  private readonly deployedSplits = new Set<Address>();
  /** Receipt waits under way, by transaction hash: the payments settled by one transaction share one. */
  private readonly receiptWaits = new Map<Hex, ReceiptWait>();

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
    this.sender = new TransactionSender({ rpc: this.client, account: this.facilitator, chainId: this.chainId });
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

  /** The calldata of the factory's `settleEach` of these payments: each settles, or is skipped, on its own. */
  settleEachData(settlements: readonly Settlement[]): Hex {
    return encodeFunctionData({
      abi: SplitFactory.abi,
      functionName: "settleEach",
      args: [
        this.config.usdc,
        settlements.map(({ recipients: r, authorization: a, signature }) => ({
          seller: getAddress(r.seller),
          platform: getAddress(r.platform),
          platformBps: r.platformBps,
          feeWallet: getAddress(r.feeWallet),
          feeRule: r.feeRule,
          from: a.from,
          value: a.value,
          validAfter: a.validAfter,
          validBefore: a.validBefore,
          nonce: a.nonce,
          signature,
        })),
      ],
    });
  }

  /**
   * The gas a transaction settling these payments is given (SETTLEMENT_GAS):
   * a split not known to be deployed counts its deployment.
   */
  settlementGas(settlements: readonly Settlement[]): bigint {
    const splits = new Set(settlements.map((s) => this.splitAddress(s.recipients)));
    const deployments = [...splits].filter((split) => !this.deployedSplits.has(split)).length;
    return SETTLEMENT_GAS.transaction + SETTLEMENT_GAS.payment * BigInt(settlements.length) + SETTLEMENT_GAS.splitDeployment * BigInt(deployments);
  }

  /** Whether a transaction signed here settles more than one payment (a `settleEach` of several). */
  settlesSeveral(raw: Hex): boolean {
    const data = parseTransaction(raw).data;
    if (!data) return false;
    try {
      const call = decodeFunctionData({ abi: SplitFactory.abi, data });
      return call.functionName === "settleEach" && call.args[1].length > 1;
    } catch {
      return false;
    }
  }

  /** Runs one payment's settle call against the current chain state without sending it. */
  async simulateSettle(r: SplitRecipients, a: Authorization, signature: Hex): Promise<SimulationResult> {
    return this.simulate(this.config.splitFactory, this.settleData(r, a, signature));
  }

  private async simulate(to: Address, data: Hex): Promise<SimulationResult> {
    try {
      // eth_call: one execution, no gas figure needed (a transaction's gas is computed: settlementGas).
      await this.client.call({ account: this.facilitator.address, to, data });
      return { ok: true };
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
   * Signs one transaction that settles these payments (the factory's
   * `settleEach`, given `settlementGas`), with the facilitator key, and
   * returns it with its hash before anything is sent: the caller records the
   * hash first, so a crash after broadcast can be resolved from the chain.
   */
  async signSettlements(settlements: readonly Settlement[]): Promise<SignedTransaction> {
    return this.sender.sign(this.settleEachCall(settlements));
  }

  private settleEachCall(settlements: readonly Settlement[]) {
    const gas = this.settlementGas(settlements);
    if (gas > MOST_SETTLEMENT_GAS) throw new Error(`${settlements.length} payments need more gas than one transaction may have`);
    return { to: this.config.splitFactory, data: this.settleEachData(settlements), gas };
  }

  /**
   * Signs as `signSettlements` does, with a nonce `reserve` takes from the
   * count every process signing with this key shares (the replicas of a
   * service), and answers what `reserve` answers.
   */
  async signSettlementsReserved<T>(settlements: readonly Settlement[], reserve: NonceReservation<T>): Promise<T> {
    return this.sender.signReserved(this.settleEachCall(settlements), reserve);
  }

  /** Sends a transaction signed here, in nonce order; sending the same one again is not an error. */
  broadcast(raw: Hex): Promise<void> {
    return this.sender.broadcast(raw);
  }

  /**
   * The receipt once mined with the configured confirmations, or undefined on
   * timeout. Concurrent waits for one transaction (the payments it settles)
   * share the chain's answers: each joins a wait that lasts at least as long
   * as its own, and stops at its own timeout.
   */
  async waitForReceipt(txHash: Hex, timeoutMs: number): Promise<TransactionReceipt | undefined> {
    const key = txHash.toLowerCase() as Hex;
    const until = Date.now() + timeoutMs;
    let wait = this.receiptWaits.get(key);
    if (!wait || wait.until < until) {
      const started: ReceiptWait = {
        until,
        receipt: this.client
          .waitForTransactionReceipt({ hash: txHash, timeout: timeoutMs, confirmations: this.config.confirmations ?? 1, pollingInterval: 100 })
          .catch(() => undefined)
          .finally(() => {
            if (this.receiptWaits.get(key) === started) this.receiptWaits.delete(key);
          }),
      };
      this.receiptWaits.set(key, started);
      wait = started;
    }
    if (wait.until === until) return wait.receipt;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
    try {
      return await Promise.race([wait.receipt, timedOut]);
    } finally {
      clearTimeout(timer);
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
    this.rememberDeployed(getAddress(split));
    return {
      txHash: receipt.transactionHash,
      blockNumber: receipt.blockNumber,
      providerAmount: settled.args.providerAmount,
      platformAmount: settled.args.platformAmount,
      feeAmount: settled.args.feeAmount,
    };
  }

  private rememberDeployed(split: Address): void {
    if (this.deployedSplits.size >= SPLIT_ADDRESS_MEMORY) this.deployedSplits.clear();
    this.deployedSplits.add(split);
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

  /** The latest block's timestamp (seconds): the clock EIP-3009 windows are checked against. */
  async latestBlockTime(): Promise<bigint> {
    return (await this.client.getBlock({ blockTag: "latest" })).timestamp;
  }

  /**
   * Signs USDC's `cancelAuthorization(authorizer, nonce, v, r, s)` (the
   * authorizer's EIP-712 CancelAuthorization signature) with the facilitator
   * key and a nonce `reserve` takes from the shared count, as
   * `signSettlementsReserved` does: the caller records it before it is sent.
   */
  async signCancelAuthorizationReserved<T>(c: { authorizer: Address; nonce: Hex; v: number; r: Hex; s: Hex }, reserve: NonceReservation<T>): Promise<T> {
    const data = encodeFunctionData({ abi: TestUSDC.abi, functionName: "cancelAuthorization", args: [c.authorizer, c.nonce, c.v, c.r, c.s] });
    return this.sender.signReserved({ to: this.config.usdc, data }, reserve);
  }

  async ping(): Promise<void> {
    await this.client.getChainId();
  }
}
