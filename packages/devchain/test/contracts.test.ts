import { PaySplit, SplitFactory, TestUSDC } from "@c402/evm-contracts";
import { breakdown } from "@c402/money";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "@c402/x402";
import { createPublicClient, createWalletClient, getAddress, http, parseEventLogs, toHex, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { startDevchain, type RunningDevchain } from "../src";

/**
 * The contracts on the devchain: EIP-3009 on the test USDC and the
 * non-custodial split (happy path, front-run, replay, cancelled
 * authorization, wrong amounts, rounding at price boundaries, an attempt to
 * settle with other recipients).
 */
describe("contracts on the devchain", () => {
  let chain: RunningDevchain;
  let pub: ReturnType<typeof createPublicClient>;
  const facilitator = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 0 });
  const frontRunner = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 1 });
  const seller = privateKeyToAccount(generatePrivateKey()).address;
  const platform = privateKeyToAccount(generatePrivateKey()).address;
  const feeWallet = privateKeyToAccount(generatePrivateKey()).address;
  const zero = "0x0000000000000000000000000000000000000000";

  beforeAll(async () => {
    chain = await startDevchain();
    pub = createPublicClient({ transport: http(chain.url) });
  }, 90_000);
  afterAll(() => chain?.stop());

  const wallet = (account: typeof facilitator) =>
    createWalletClient({
      account,
      transport: http(chain.url),
      chain: { id: chain.chainId, name: "devchain", nativeCurrency: { name: "ETH", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [chain.url] } } },
    });
  const usdc = () => chain.usdc;
  const balance = (a: Hex) => pub.readContract({ address: usdc(), abi: TestUSDC.abi, functionName: "balanceOf", args: [a] });
  const splitArgs = (bps: number) => [usdc(), seller, bps > 0 ? platform : zero, bps, feeWallet, 0] as const;
  const splitAddress = (bps: number) =>
    pub.readContract({ address: chain.splitFactory, abi: SplitFactory.abi, functionName: "splitAddress", args: splitArgs(bps) });

  async function fundedBuyer(amount: bigint): Promise<PrivateKeyAccount> {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const hash = await wallet(facilitator).writeContract({ address: usdc(), abi: TestUSDC.abi, functionName: "mint", args: [buyer.address, amount] });
    await pub.waitForTransactionReceipt({ hash });
    return buyer;
  }

  async function authorize(buyer: PrivateKeyAccount, to: Hex, value: bigint, overrides: { validBefore?: bigint; nonce?: Hex } = {}) {
    const now = BigInt(Math.floor(Date.now() / 1000));
    const message = {
      from: buyer.address,
      to: getAddress(to),
      value,
      validAfter: 0n,
      validBefore: overrides.validBefore ?? now + 300n,
      nonce: overrides.nonce ?? toHex(crypto.getRandomValues(new Uint8Array(32))),
    };
    const signature = await buyer.signTypedData({
      domain: { name: "USDC", version: "2", chainId: chain.chainId, verifyingContract: usdc() },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: "TransferWithAuthorization",
      message,
    });
    return { ...message, signature };
  }

  async function settle(bps: number, a: Awaited<ReturnType<typeof authorize>>, args = splitArgs(bps)) {
    const hash = await wallet(facilitator).writeContract({
      address: chain.splitFactory,
      abi: SplitFactory.abi,
      functionName: "settle",
      args: [...args, a.from, a.value, a.validAfter, a.validBefore, a.nonce, a.signature],
    });
    return pub.waitForTransactionReceipt({ hash });
  }

  it("places the test USDC at the canonical Base Sepolia address with the real EIP-712 domain", async () => {
    expect(getAddress(chain.usdc)).toBe("0x036CbD53842c5426634e7929541eC2318f3dCF7e");
    expect(await pub.readContract({ address: usdc(), abi: TestUSDC.abi, functionName: "name" })).toBe("USDC");
    expect(await pub.readContract({ address: usdc(), abi: TestUSDC.abi, functionName: "version" })).toBe("2");
    expect(await pub.readContract({ address: usdc(), abi: TestUSDC.abi, functionName: "decimals" })).toBe(6);
    expect(await balance(chain.demoAccounts[0] as Hex)).toBeGreaterThan(0n);
  });

  it("settles a payment to the split address: seller, platform cut and fee paid exactly, in one transaction", async () => {
    const b = breakdown(100_000n, { platformFeeBps: 250 });
    const to = await splitAddress(250);
    const buyer = await fundedBuyer(b.total);
    const a = await authorize(buyer, to, b.total);
    const receipt = await settle(250, a);
    expect(receipt.status).toBe("success");
    expect(await balance(seller)).toBe(b.providerAmount);
    expect(await balance(platform)).toBe(b.platformAmount);
    expect(await balance(feeWallet)).toBe(b.feeAmount);
    expect(await balance(buyer.address)).toBe(0n);
    expect(await balance(to)).toBe(0n);
    const [event] = parseEventLogs({ abi: PaySplit.abi, logs: receipt.logs, eventName: "Settled" });
    expect(event?.args).toMatchObject({
      from: buyer.address,
      nonce: a.nonce,
      value: b.total,
      providerAmount: b.providerAmount,
      platformAmount: b.platformAmount,
      feeAmount: b.feeAmount,
    });
  });

  it("refuses a replay of the same payment", async () => {
    const b = breakdown(50_000n);
    const buyer = await fundedBuyer(b.total * 2n);
    const a = await authorize(buyer, await splitAddress(0), b.total);
    expect((await settle(0, a)).status).toBe("success");
    await expect(settle(0, a)).rejects.toThrow();
    expect(await balance(buyer.address)).toBe(b.total);
  });

  it("a front-run straight to the token leaves the funds in the split, which still pays the same recipients exactly once", async () => {
    const b = breakdown(300_000n);
    const to = await splitAddress(0);
    const before = { seller: await balance(seller), fee: await balance(feeWallet) };
    const buyer = await fundedBuyer(b.total);
    const a = await authorize(buyer, to, b.total);
    const { v, r, s } = parseSig(a.signature);
    const hash = await wallet(frontRunner).writeContract({
      address: usdc(),
      abi: TestUSDC.abi,
      functionName: "transferWithAuthorization",
      args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, v, r, s],
    });
    await pub.waitForTransactionReceipt({ hash });
    expect(await balance(to)).toBe(b.total);
    expect((await settle(0, a)).status).toBe("success");
    expect(await balance(seller)).toBe(before.seller + b.providerAmount);
    expect(await balance(feeWallet)).toBe(before.fee + b.feeAmount);
    expect(await balance(to)).toBe(0n);
    await expect(settle(0, a)).rejects.toThrow();
  });

  it("a cancelled authorization cannot be settled and moves nothing", async () => {
    const b = breakdown(70_000n);
    const buyer = await fundedBuyer(b.total);
    const a = await authorize(buyer, await splitAddress(0), b.total);
    const cancelSig = await buyer.signTypedData({
      domain: { name: "USDC", version: "2", chainId: chain.chainId, verifyingContract: usdc() },
      types: {
        CancelAuthorization: [
          { name: "authorizer", type: "address" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: "CancelAuthorization",
      message: { authorizer: buyer.address, nonce: a.nonce },
    });
    const hash = await wallet(facilitator).writeContract({
      address: usdc(),
      abi: TestUSDC.abi,
      functionName: "cancelAuthorization",
      args: [buyer.address, a.nonce, cancelSig],
    });
    await pub.waitForTransactionReceipt({ hash });
    await expect(settle(0, a)).rejects.toThrow();
    expect(await balance(buyer.address)).toBe(b.total);
  });

  it("refuses wrong amounts and expired authorizations", async () => {
    const b = breakdown(10_000n);
    const buyer = await fundedBuyer(b.total * 3n);
    const a = await authorize(buyer, await splitAddress(0), b.total);
    await expect(settle(0, { ...a, value: a.value + 1n })).rejects.toThrow();
    await expect(settle(0, { ...a, value: a.value - 1n })).rejects.toThrow();
    const expired = await authorize(buyer, await splitAddress(0), b.total, { validBefore: 1n });
    await expect(settle(0, expired)).rejects.toThrow();
    expect(await balance(buyer.address)).toBe(b.total * 3n);
  });

  it("cannot be settled to other recipients: the signature names the split address", async () => {
    const b = breakdown(20_000n);
    const buyer = await fundedBuyer(b.total);
    const a = await authorize(buyer, await splitAddress(0), b.total);
    const thief = privateKeyToAccount(generatePrivateKey()).address;
    await expect(settle(0, a, [usdc(), thief, zero, 0, feeWallet, 0])).rejects.toThrow();
    await expect(settle(0, a, [usdc(), seller, thief, 2000, feeWallet, 0])).rejects.toThrow();
    await expect(settle(0, a, [usdc(), seller, zero, 0, thief, 0])).rejects.toThrow();
    expect(await balance(thief)).toBe(0n);
    expect(await balance(buyer.address)).toBe(b.total);
  });

  it("splits exactly like @c402/money at every rounding boundary", async () => {
    for (const bps of [0, 1, 250, 2000]) {
      const hash = await wallet(facilitator).writeContract({
        address: chain.splitFactory,
        abi: SplitFactory.abi,
        functionName: "deploy",
        args: splitArgs(bps),
      });
      await pub.waitForTransactionReceipt({ hash });
      const address = await splitAddress(bps);
      const prices = [
        1n,
        2n,
        199n,
        200n,
        201n,
        399n,
        400n,
        401n,
        9_999n,
        10_000n,
        10_001n,
        99_999n,
        100_000n,
        1_000_000n,
        1_000_001n,
        123_456_789n,
        1_000_000_000_000n,
      ];
      for (const price of prices) {
        const b = breakdown(price, { platformFeeBps: bps });
        const [provider, platformAmount, fee] = await pub.readContract({ address, abi: PaySplit.abi, functionName: "splitAmounts", args: [b.total] });
        expect({ price, bps, provider, platformAmount, fee }).toEqual({
          price,
          bps,
          provider: b.providerAmount,
          platformAmount: b.platformAmount ?? 0n,
          fee: b.feeAmount,
        });
      }
    }
  });
});

function parseSig(signature: Hex) {
  return { r: `0x${signature.slice(2, 66)}` as Hex, s: `0x${signature.slice(66, 130)}` as Hex, v: parseInt(signature.slice(130, 132), 16) };
}
