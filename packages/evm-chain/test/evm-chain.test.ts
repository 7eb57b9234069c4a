import { startDevchain, type RunningDevchain } from "@c402/devchain";
import { SplitFactory, TestUSDC } from "@c402/evm-contracts";
import { breakdown } from "@c402/money";
import { signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { EvmChain, ZERO_ADDRESS, type Authorization, type SplitRecipients } from "../src";

describe("EvmChain on the devchain", () => {
  let devchain: RunningDevchain;
  let chain: EvmChain;
  // Not the facilitator's account: its nonces belong to EvmChain.
  const minter = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 3 });
  const recipients: SplitRecipients = {
    seller: privateKeyToAccount(generatePrivateKey()).address,
    platform: ZERO_ADDRESS,
    platformBps: 0,
    feeWallet: privateKeyToAccount(generatePrivateKey()).address,
    feeRule: 0,
  };

  beforeAll(async () => {
    devchain = await startDevchain();
    chain = new EvmChain({
      network: devchain.network,
      rpcUrl: devchain.url,
      usdc: devchain.usdc,
      splitFactory: devchain.splitFactory,
      facilitatorKey: `0x${Buffer.from(mnemonicToAccount(devchain.mnemonic, { addressIndex: 0 }).getHdKey().privateKey!).toString("hex")}` as Hex,
    });
  }, 90_000);
  afterAll(() => devchain?.stop());

  async function payment(total: bigint) {
    const buyer = privateKeyToAccount(generatePrivateKey());
    const wallet = createWalletClient({ account: minter, transport: http(devchain.url) });
    const pub = createPublicClient({ transport: http(devchain.url) });
    await pub.waitForTransactionReceipt({
      hash: await wallet.writeContract({ address: devchain.usdc, abi: TestUSDC.abi, functionName: "mint", args: [buyer.address, total], chain: null }),
    });
    const requirement: PaymentRequirements = {
      scheme: "exact",
      network: devchain.network,
      asset: devchain.usdc,
      amount: total.toString(),
      payTo: chain.splitAddress(recipients),
      maxTimeoutSeconds: 300,
      extra: { name: "USDC", version: "2" },
    };
    const p = await signExactEvmPayment(buyer, requirement);
    const a = p.payload.authorization;
    const auth: Authorization = {
      from: a.from as Hex,
      to: a.to as Hex,
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce as Hex,
    };
    return { buyer, auth, signature: p.payload.signature as Hex };
  }

  it("computes the split address offline exactly as the factory does", async () => {
    const pub = createPublicClient({ transport: http(devchain.url) });
    const onChain = await pub.readContract({
      address: devchain.splitFactory,
      abi: SplitFactory.abi,
      functionName: "splitAddress",
      args: [devchain.usdc, recipients.seller, recipients.platform, 0, recipients.feeWallet, 0],
    });
    expect(chain.splitAddress(recipients)).toBe(onChain);
  });

  it("simulates, signs (hash known before sending), broadcasts and reads the settlement", async () => {
    const b = breakdown(100_000n);
    const { auth, signature } = await payment(b.total);
    expect(await chain.simulateSettle(recipients, auth, signature)).toEqual({ ok: true, gas: expect.any(BigInt) });
    const { raw, txHash } = await chain.signSettle(recipients, auth, signature);
    await chain.broadcast(raw);
    await chain.broadcast(raw); // re-sending the same transaction is harmless
    const receipt = await chain.waitForReceipt(txHash, 10_000);
    expect(receipt?.transactionHash).toBe(txHash);
    const settled = chain.settledIn(receipt!, chain.splitAddress(recipients), auth.from, auth.nonce);
    expect(settled).toMatchObject({ providerAmount: b.providerAmount, platformAmount: 0n, feeAmount: b.feeAmount });
    expect(await chain.authorizationUsed(auth.from, auth.nonce)).toBe(true);
    expect(await chain.findSettlement(chain.splitAddress(recipients), auth.from, auth.nonce)).toMatchObject({ txHash });
    expect(await chain.simulateSettle(recipients, auth, signature)).toMatchObject({ ok: false });
  });

  it("reports a short balance in simulation and signs nonces in order under concurrency", async () => {
    const { auth, signature } = await payment(1_000n);
    expect(await chain.simulateSettle(recipients, { ...auth, value: 200_000n }, signature)).toMatchObject({ ok: false });
    const payments = [];
    for (let i = 0; i < 5; i++) payments.push(await payment(breakdown(10_000n).total));
    const signed = await Promise.all(payments.map((p) => chain.signSettle(recipients, p.auth, p.signature)));
    for (const s of signed) await chain.broadcast(s.raw);
    const receipts = await Promise.all(signed.map((s) => chain.waitForReceipt(s.txHash, 10_000)));
    expect(receipts.every((r) => r?.status === "success")).toBe(true);
  });

  it("a failed preparation consumes no nonce and never hands out the nonce of a transaction signed but not yet sent", async () => {
    const used = await payment(breakdown(10_000n).total);
    const usedTx = await chain.signSettle(recipients, used.auth, used.signature);
    await chain.broadcast(usedTx.raw);
    await chain.waitForReceipt(usedTx.txHash, 10_000);
    const held = await payment(breakdown(10_000n).total);
    const signedNotSent = await chain.signSettle(recipients, held.auth, held.signature);
    // The estimate of an already-used authorization reverts before any nonce is taken.
    await expect(chain.signSettle(recipients, used.auth, used.signature)).rejects.toThrow();
    const next = await payment(breakdown(10_000n).total);
    const signedNext = await chain.signSettle(recipients, next.auth, next.signature);
    await chain.broadcast(signedNotSent.raw);
    await chain.broadcast(signedNext.raw);
    const receipts = await Promise.all([signedNotSent, signedNext].map((t) => chain.waitForReceipt(t.txHash, 10_000)));
    expect(receipts.map((r) => r?.status)).toEqual(["success", "success"]);
  });

  it("sends what it signed in nonce order, even when asked in reverse (a node refuses a nonce gap)", async () => {
    const payments = [];
    for (let i = 0; i < 4; i++) payments.push(await payment(breakdown(10_000n).total));
    const signed = [];
    for (const p of payments) signed.push(await chain.signSettle(recipients, p.auth, p.signature));
    await Promise.all([...signed].reverse().map((t) => chain.broadcast(t.raw)));
    const receipts = await Promise.all(signed.map((t) => chain.waitForReceipt(t.txHash, 10_000)));
    expect(receipts.map((r) => r?.status)).toEqual(["success", "success", "success", "success"]);
  });
});
