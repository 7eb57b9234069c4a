import { C402Escrow, escrowDepositTypedData, escrowTotal, TestUSDC, type EscrowActionName, type EscrowTerms } from "@c402/evm-contracts";
import { devchainKey, ESCROW_RELAYER_INDEX, type RunningDevchain } from "@c402/devchain";
import { createPublicClient, createWalletClient, http, parseSignature, toHex, type Address, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { DepositRequest } from "../../src/domain/escrow-book";
import type { EscrowContract } from "../../src/domain/deposits";

export const HOUR = 3_600n;
export const DAY = 86_400n;

/** Drives the devchain around an escrow service: parties, USDC, signatures, time. */
export class ChainRig {
  readonly pub: PublicClient;
  readonly contract: EscrowContract;

  constructor(readonly chain: RunningDevchain) {
    this.pub = createPublicClient({ transport: http(chain.url), pollingInterval: 50 }) as PublicClient;
    this.contract = {
      network: chain.network,
      chainId: chain.chainId,
      address: chain.escrow,
      token: { address: chain.usdc, name: chain.usdcName, version: chain.usdcVersion },
    };
  }

  get relayerKey(): Hex {
    return devchainKey(this.chain.mnemonic, ESCROW_RELAYER_INDEX);
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

  rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return this.pub.request({ method: method as never, params: params as never }) as Promise<T>;
  }

  async party(): Promise<PrivateKeyAccount> {
    const account = privateKeyToAccount(generatePrivateKey());
    await this.rpc("hardhat_setBalance", [account.address, toHex(10n ** 19n)]);
    return account;
  }

  private mints: Promise<unknown> = Promise.resolve();

  /** Mints test USDC from the deployer, one at a time (the devchain refuses a queued nonce while automining). */
  mint(to: Address, amount: bigint): Promise<void> {
    const minter = privateKeyToAccount(devchainKey(this.chain.mnemonic, 0));
    const run = this.mints.then(async () => {
      const hash = await this.wallet(minter).writeContract({ address: this.chain.usdc, abi: TestUSDC.abi, functionName: "mint", args: [to, amount] });
      await this.pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    });
    this.mints = run.catch(() => undefined);
    return run;
  }

  balance(of: Address): Promise<bigint> {
    return this.pub.readContract({ address: this.chain.usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [of] });
  }

  async balances(t: EscrowTerms) {
    const [buyer, seller, platform, feeTo, contract] = (await Promise.all(
      [t.buyer, t.seller, t.platform, t.feeTo, this.chain.escrow].map((a) => this.balance(a)),
    )) as [bigint, bigint, bigint, bigint, bigint];
    return { buyer, seller, platform, feeTo, contract };
  }

  async now(): Promise<bigint> {
    return (await this.pub.getBlock({ blockTag: "latest" })).timestamp;
  }

  /** Moves chain time forward by `seconds` with an empty block. */
  async warp(seconds: bigint): Promise<void> {
    await this.rpc("evm_increaseTime", [toHex(seconds)]);
    await this.rpc("evm_mine");
  }

  state(id: Hex): Promise<number> {
    return this.pub.readContract({ address: this.chain.escrow, abi: C402Escrow.abi, functionName: "escrows", args: [id] }).then((e) => e.state);
  }

  /** Fresh parties (funded with gas; the buyer with the total in USDC) and terms with the given windows. */
  async parties(overrides: Partial<EscrowTerms> = {}) {
    const [buyer, seller, arbiter] = await Promise.all([this.party(), this.party(), this.party()]);
    const terms: EscrowTerms = {
      buyer: buyer.address,
      seller: seller.address,
      platform: privateKeyToAccount(generatePrivateKey()).address,
      feeTo: privateKeyToAccount(generatePrivateKey()).address,
      arbiter: arbiter.address,
      amount: 1_000_000n,
      platformAmount: 25_000n,
      fee: 30_000n,
      settleWindow: 3n * DAY,
      holdWindow: 7n * DAY,
      backstopWindow: 30n * DAY,
      preset: 1,
      salt: toHex(crypto.getRandomValues(new Uint8Array(32))),
      ...overrides,
    };
    await this.mint(terms.buyer, escrowTotal(terms));
    return { terms, buyer, seller, arbiter };
  }

  /** The Deposit request payments would make for these terms, signed by the buyer. */
  async depositRequest(paymentId: string, terms: EscrowTerms, buyer: PrivateKeyAccount, opts: { testMode?: boolean; accountId?: string } = {}) {
    const validBefore = (await this.now()) + 365n * DAY;
    const typed = escrowDepositTypedData({
      chainId: this.contract.chainId,
      escrow: this.contract.address,
      token: this.contract.token,
      terms,
      validAfter: 0n,
      validBefore,
    });
    const signature = await buyer.signTypedData(typed);
    const request: DepositRequest = {
      paymentId,
      accountId: opts.accountId ?? "acct_escrow_test",
      checkoutId: `esc_${paymentId.slice(-24).padStart(24, "0")}`,
      network: this.contract.network,
      testMode: opts.testMode ?? false,
      terms: {
        buyer: terms.buyer,
        seller: terms.seller,
        platform: terms.platform,
        feeTo: terms.feeTo,
        arbiter: terms.arbiter,
        amount: terms.amount.toString(),
        platformAmount: terms.platformAmount.toString(),
        fee: terms.fee.toString(),
        preset: "standard",
        settleSeconds: Number(terms.settleWindow),
        holdSeconds: Number(terms.holdWindow),
        backstopSeconds: Number(terms.backstopWindow),
        salt: terms.salt,
      },
      authorization: { validAfter: "0", validBefore: validBefore.toString(), nonce: typed.message.nonce, signature },
    };
    return request;
  }

  /** Sends a prepared (unsigned) transaction from a wallet: an arbiter's ruling, a buyer's own action. */
  async send(from: PrivateKeyAccount, tx: { to: string; data: string }) {
    const hash = await this.wallet(from).sendTransaction({ to: tx.to as Address, data: tx.data as Hex });
    return this.pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  }

  async callEscrow(from: PrivateKeyAccount, functionName: "hold" | "approve" | "requestRefund" | "cancel", id: Hex) {
    const hash = await this.wallet(from).writeContract({ address: this.chain.escrow, abi: C402Escrow.abi, functionName, args: [id] });
    return this.pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  }
}

/** Signs a prepared action's typed data (PrepareAction's typed_data_json) and splits the signature as SubmitAction takes it. */
export async function signPrepared(signer: PrivateKeyAccount, typedDataJson: string): Promise<{ v: number; r: Hex; s: Hex; deadline: bigint }> {
  const typed = JSON.parse(typedDataJson) as {
    domain: Record<string, unknown>;
    types: Record<string, unknown>;
    primaryType: string;
    message: Record<string, string | number>;
  };
  const message = { ...typed.message, nonce: BigInt(typed.message.nonce as string), deadline: BigInt(typed.message.deadline as string) };
  const signature = await signer.signTypedData({ domain: typed.domain, types: typed.types, primaryType: typed.primaryType, message } as never);
  const { r, s, v, yParity } = parseSignature(signature);
  return { r, s, v: Number(v ?? BigInt(yParity + 27)), deadline: message.deadline };
}

export type { EscrowActionName };
