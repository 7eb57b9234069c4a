import {
  C402Escrow,
  ESCROW_ACTION,
  escrowActionTypedData,
  escrowDepositTypedData,
  escrowTotal,
  TestUSDC,
  ZERO_ADDRESS,
  type EscrowActionName,
  type EscrowTerms,
} from "@c402/evm-contracts";
import {
  BaseError,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  encodeFunctionData,
  http,
  parseSignature,
  toHex,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { devchainKey, startDevchain, type RunningDevchain } from "../../src";

/** secp256k1's group order: s and n - s are both valid for ecrecover, only the low one for OpenZeppelin's ECDSA. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

export const HOUR = 3_600n;
export const DAY = 86_400n;

/** Gas for a transaction sent without an estimate (so one that reverts is mined, at the timestamp it was given). */
const FIXED_GAS = 1_000_000n;

export type Sig = { v: number; r: Hex; s: Hex };

export function splitSig(signature: Hex): Sig {
  const { r, s, v, yParity } = parseSignature(signature);
  return { r, s, v: Number(v ?? BigInt(yParity + 27)) };
}

/** The same signature with s replaced by n - s and v flipped: ecrecover still yields the signer. */
export function highS(sig: Sig): Sig {
  return { r: sig.r, s: toHex(SECP256K1_N - BigInt(sig.s), { size: 32 }), v: sig.v === 27 ? 28 : 27 };
}

/**
 * The outcome of a transaction mined whether or not it reverts: its receipt when it succeeded; the
 * contract's error (name and args, or `reason` for a string revert) when it reverted. The devchain
 * mines a reverting transaction too, and answers its submission with the revert.
 */
export interface Mined {
  status: "success" | "reverted";
  receipt?: TransactionReceipt;
  error?: { name: string; args: readonly unknown[] };
}

/** The devchain, its escrow and helpers to drive it from many wallets at chosen instants. */
export class EscrowRig {
  readonly pub: PublicClient;
  readonly relayer: PrivateKeyAccount;

  private constructor(readonly chain: RunningDevchain) {
    this.pub = createPublicClient({ transport: http(chain.url), pollingInterval: 50 }) as PublicClient;
    this.relayer = privateKeyToAccount(devchainKey(chain.mnemonic, 0));
  }

  static async start(): Promise<EscrowRig> {
    return new EscrowRig(await startDevchain({ port: 0 }));
  }

  stop(): Promise<void> {
    return this.chain.stop();
  }

  get escrow(): Address {
    return this.chain.escrow;
  }

  get usdc(): Address {
    return this.chain.usdc;
  }

  rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return this.pub.request({ method: method as never, params: params as never }) as Promise<T>;
  }

  wallet(account: PrivateKeyAccount) {
    return createWalletClient({
      account,
      transport: http(this.chain.url),
      chain: {
        id: this.chain.chainId,
        name: "devchain",
        nativeCurrency: { name: "ETH", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [this.chain.url] } },
      },
    });
  }

  /** A fresh wallet with 100 ETH for gas and no USDC. */
  async party(): Promise<PrivateKeyAccount> {
    const account = privateKeyToAccount(generatePrivateKey());
    await this.rpc("hardhat_setBalance", [account.address, toHex(100n * 10n ** 18n)]);
    return account;
  }

  /** A fresh address nobody will ever act from (a payee only). */
  payee(): Address {
    return privateKeyToAccount(generatePrivateKey()).address;
  }

  async mint(to: Address, amount: bigint, token: Address = this.usdc): Promise<void> {
    const hash = await this.wallet(this.relayer).writeContract({ address: token, abi: TestUSDC.abi, functionName: "mint", args: [to, amount] });
    await this.receipt(hash);
  }

  balance(of: Address, token: Address = this.usdc): Promise<bigint> {
    return this.pub.readContract({ address: token, abi: TestUSDC.abi, functionName: "balanceOf", args: [of] });
  }

  async balances<K extends string>(of: Record<K, Address>, token: Address = this.usdc): Promise<Record<K, bigint>> {
    const keys = Object.keys(of) as K[];
    const values = await Promise.all(keys.map((k) => this.balance(of[k], token)));
    return Object.fromEntries(keys.map((k, i) => [k, values[i]!])) as Record<K, bigint>;
  }

  async receipt(hash: Hex): Promise<TransactionReceipt> {
    return this.pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  }

  /** The latest block's timestamp. */
  async now(): Promise<bigint> {
    return (await this.pub.getBlock({ blockTag: "latest" })).timestamp;
  }

  /** The next block (the next transaction's, with automine) gets exactly this timestamp. */
  async setNextTimestamp(ts: bigint): Promise<void> {
    await this.rpc("evm_setNextBlockTimestamp", [toHex(ts)]);
  }

  /** Moves chain time forward by `seconds` with an empty block. */
  async warp(seconds: bigint): Promise<void> {
    await this.rpc("evm_increaseTime", [toHex(seconds)]);
    await this.rpc("evm_mine");
  }

  escrowView(id: Hex, escrow: Address = this.escrow) {
    return this.pub.readContract({ address: escrow, abi: C402Escrow.abi, functionName: "escrows", args: [id] });
  }

  async state(id: Hex, escrow: Address = this.escrow): Promise<number> {
    return (await this.escrowView(id, escrow)).state;
  }

  nonce(id: Hex, escrow: Address = this.escrow): Promise<bigint> {
    return this.pub.readContract({ address: escrow, abi: C402Escrow.abi, functionName: "nonces", args: [id] });
  }

  timedExit(id: Hex, escrow: Address = this.escrow) {
    return this.pub.readContract({ address: escrow, abi: C402Escrow.abi, functionName: "timedExit", args: [id] });
  }

  /** Terms with fresh parties (the buyer and the arbiter funded with gas) and the given overrides. */
  async terms(
    overrides: Partial<EscrowTerms> = {},
  ): Promise<{ terms: EscrowTerms; buyer: PrivateKeyAccount; seller: PrivateKeyAccount; arbiter: PrivateKeyAccount }> {
    const [buyer, seller, arbiter] = await Promise.all([this.party(), this.party(), this.party()]);
    const terms: EscrowTerms = {
      buyer: buyer.address,
      seller: seller.address,
      platform: this.payee(),
      feeTo: this.payee(),
      arbiter: arbiter.address,
      amount: 1_000_000n,
      platformAmount: 25_000n,
      fee: 30_000n,
      settleWindow: 7n * DAY,
      holdWindow: 3n * DAY,
      backstopWindow: 14n * DAY,
      preset: 1,
      salt: toHex(crypto.getRandomValues(new Uint8Array(32))),
      ...overrides,
    };
    return { terms, buyer, seller, arbiter };
  }

  /** The buyer's deposit authorization (ReceiveWithAuthorization of the total to the escrow, nonce = escrow id). */
  async authorize(
    signer: PrivateKeyAccount,
    terms: EscrowTerms,
    opts: { validAfter?: bigint; validBefore?: bigint; escrow?: Address; token?: Address; chainId?: number } = {},
  ): Promise<{ validAfter: bigint; validBefore: bigint; signature: Hex; sig: Sig }> {
    const validAfter = opts.validAfter ?? 0n;
    const validBefore = opts.validBefore ?? (await this.now()) + 365n * DAY;
    const typed = escrowDepositTypedData({
      chainId: opts.chainId ?? this.chain.chainId,
      escrow: opts.escrow ?? this.escrow,
      token: { address: opts.token ?? this.usdc, name: this.chain.usdcName, version: this.chain.usdcVersion },
      terms,
      validAfter,
      validBefore,
    });
    const signature = await signer.signTypedData(typed);
    return { validAfter, validBefore, signature, sig: splitSig(signature) };
  }

  /** Mints the buyer the terms' total, authorizes and deposits (relayed); returns the escrow id and the receipt. */
  async open(
    overrides: Partial<EscrowTerms> = {},
  ): Promise<{ id: Hex; terms: EscrowTerms; buyer: PrivateKeyAccount; seller: PrivateKeyAccount; arbiter: PrivateKeyAccount; receipt: TransactionReceipt }> {
    const parties = await this.terms(overrides);
    await this.mint(parties.terms.buyer, escrowTotal(parties.terms));
    const auth = await this.authorize(parties.buyer, parties.terms);
    const receipt = await this.deposit(parties.terms, auth);
    if (receipt.status !== "success") throw new Error("deposit failed");
    const id = await this.pub.readContract({ address: this.escrow, abi: C402Escrow.abi, functionName: "escrowId", args: [parties.terms] });
    return { id, ...parties, receipt };
  }

  async deposit(
    terms: EscrowTerms,
    auth: { validAfter: bigint; validBefore: bigint; sig: Sig },
    from: PrivateKeyAccount = this.relayer,
    escrow: Address = this.escrow,
  ) {
    const hash = await this.wallet(from).writeContract({
      address: escrow,
      abi: C402Escrow.abi,
      functionName: "deposit",
      args: [terms, auth.validAfter, auth.validBefore, auth.sig.v, auth.sig.r, auth.sig.s],
    });
    return this.receipt(hash);
  }

  /** An EscrowAction signature (domain and nonce overridable, to forge wrong ones). */
  async signAction(
    signer: PrivateKeyAccount,
    id: Hex,
    action: EscrowActionName,
    opts: { nonce?: bigint; deadline?: bigint; chainId?: number; escrow?: Address } = {},
  ): Promise<{ deadline: bigint; sig: Sig }> {
    const escrow = opts.escrow ?? this.escrow;
    const nonce = opts.nonce ?? (await this.nonce(id, escrow));
    const deadline = opts.deadline ?? (await this.now()) + DAY;
    const typed = escrowActionTypedData({ chainId: opts.chainId ?? this.chain.chainId, escrow, escrowId: id, action, nonce, deadline });
    return { deadline, sig: splitSig(await signer.signTypedData(typed)) };
  }

  /** `submitAction` by the relayer, with an estimate first (a revert throws with the decoded error). */
  async submit(id: Hex, action: EscrowActionName | number, signed: { deadline: bigint; sig: Sig }, escrow: Address = this.escrow) {
    const actionId = typeof action === "number" ? action : ESCROW_ACTION[action];
    const hash = await this.wallet(this.relayer).writeContract({
      address: escrow,
      abi: C402Escrow.abi,
      functionName: "submitAction",
      args: [id, actionId, signed.deadline, signed.sig.v, signed.sig.r, signed.sig.s],
    });
    return this.receipt(hash);
  }

  /** Calls the escrow from `from` (estimated first: a revert throws with the decoded error). */
  async call(from: PrivateKeyAccount, functionName: EscrowFunction, args: readonly unknown[], escrow: Address = this.escrow): Promise<TransactionReceipt> {
    const hash = await this.wallet(from).writeContract({ address: escrow, abi: C402Escrow.abi, functionName, args } as never);
    return this.receipt(hash);
  }

  /**
   * Sends a call to the escrow, mined in a block with exactly timestamp `at` (when given) and
   * without an estimate, so that it is mined even when it reverts.
   */
  async mine(from: PrivateKeyAccount, functionName: EscrowFunction, args: readonly unknown[], opts: { at?: bigint; escrow?: Address } = {}): Promise<Mined> {
    if (opts.at !== undefined) await this.setNextTimestamp(opts.at);
    const data = encodeFunctionData({ abi: C402Escrow.abi, functionName, args } as never);
    let hash: Hex;
    try {
      hash = await this.wallet(from).sendTransaction({ to: opts.escrow ?? this.escrow, data, gas: FIXED_GAS });
    } catch (err) {
      const details = err instanceof BaseError ? err.details : String(err);
      if (!details.includes("VM Exception while processing transaction")) throw err;
      const returned = /return data: (0x[0-9a-fA-F]*)/.exec(details)?.[1] as Hex | undefined;
      const reason = /reverted with reason string '(.*)'/.exec(details)?.[1];
      return { status: "reverted", error: returned ? decodeError(returned) : reason !== undefined ? { name: "Error", args: [reason] } : undefined };
    }
    const receipt = await this.receipt(hash);
    return { status: receipt.status, receipt };
  }
}

function decodeError(data: Hex, abi: Abi = C402Escrow.abi as Abi): { name: string; args: readonly unknown[] } {
  try {
    const decoded = decodeErrorResult({ abi, data });
    return { name: decoded.errorName, args: decoded.args ?? [] };
  } catch {
    return { name: `unknown error ${data}`, args: [] };
  }
}

export type EscrowFunction =
  "hold" | "approve" | "requestRefund" | "cancel" | "rule" | "release" | "refund" | "submitAction" | "deposit" | "depositWithSignature" | "initialize";

export { ZERO_ADDRESS };
