import { startDevchain, type RunningDevchain } from "@c402/devchain";
import { SplitFactory, TestGasBurningWallet, TestUSDC } from "@c402/evm-contracts";
import { breakdown } from "@c402/money";
import { signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { createPublicClient, createWalletClient, http, keccak256, parseTransaction, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { EvmChain, MOST_SETTLEMENT_GAS, ZERO_ADDRESS, type Authorization, type Settlement, type SplitRecipients } from "../src";

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

  /** A funded buyer's payment of `total` to the split of `to`. */
  async function payment(total: bigint, to: SplitRecipients = recipients) {
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
      payTo: chain.splitAddress(to),
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

  const settlement = (p: { auth: Authorization; signature: Hex }): Settlement => ({ recipients, authorization: p.auth, signature: p.signature });

  /** A payment from a contract wallet whose signature check burns every unit of gas it is given. */
  async function burnerPayment(): Promise<Settlement> {
    const deployer = createWalletClient({ account: minter, transport: http(devchain.url) });
    const pub = createPublicClient({ transport: http(devchain.url) });
    const hash = await deployer.deployContract({ abi: TestGasBurningWallet.abi, bytecode: TestGasBurningWallet.bytecode, chain: null });
    const wallet = (await pub.waitForTransactionReceipt({ hash })).contractAddress as Hex;
    const total = breakdown(10_000n).total;
    await pub.waitForTransactionReceipt({
      hash: await deployer.writeContract({ address: devchain.usdc, abi: TestUSDC.abi, functionName: "mint", args: [wallet, total], chain: null }),
    });
    const authorization: Authorization = {
      from: wallet,
      to: chain.splitAddress(recipients),
      value: total,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: `0x${"ab".repeat(32)}`,
    };
    return { recipients, authorization, signature: `0x${"11".repeat(65)}` };
  }

  it("settles several payments in one transaction; one that cannot settle is skipped and the others settle", async () => {
    const b = breakdown(10_000n);
    const good = [await payment(b.total), await payment(b.total), await payment(b.total)];
    const short = await payment(b.total - 1n); // signed for less than it claims below: cannot settle
    const settlements = [
      settlement(good[0]!),
      { ...settlement(short), authorization: { ...short.auth, value: b.total } },
      settlement(good[1]!),
      settlement(good[2]!),
    ];
    const { raw, txHash } = await chain.signSettlements(settlements);
    expect(chain.settlesSeveral(raw)).toBe(true);
    expect(parseTransaction(raw).gas).toBe(chain.settlementGas(settlements));
    await chain.broadcast(raw);
    const receipt = await chain.waitForReceipt(txHash, 10_000);
    expect(receipt?.status).toBe("success");
    const split = chain.splitAddress(recipients);
    for (const p of good) {
      expect(chain.settledIn(receipt!, split, p.auth.from, p.auth.nonce)).toMatchObject({ txHash, providerAmount: b.providerAmount, feeAmount: b.feeAmount });
      expect(await chain.authorizationUsed(p.auth.from, p.auth.nonce)).toBe(true);
    }
    expect(chain.settledIn(receipt!, split, short.auth.from, short.auth.nonce)).toBeUndefined();
    expect(await chain.authorizationUsed(short.auth.from, short.auth.nonce)).toBe(false);
    expect(await chain.balanceOf(short.buyer.address)).toBe(b.total - 1n);
  });

  /** settleEach sent by another account (anyone may call it) with this much gas, past any estimate: its receipt. */
  async function settleEachWithGas(settlements: Settlement[], gas: bigint) {
    const pub = createPublicClient({ transport: http(devchain.url) });
    const fees = await pub.estimateFeesPerGas();
    const raw = await minter.signTransaction({
      chainId: devchain.chainId,
      type: "eip1559",
      to: devchain.splitFactory,
      data: chain.settleEachData(settlements),
      nonce: await pub.getTransactionCount({ address: minter.address, blockTag: "pending" }),
      gas,
      ...fees,
    });
    // The devchain mines it at once, and answers an error for a transaction that reverted.
    await pub.sendRawTransaction({ serializedTransaction: raw }).catch(() => undefined);
    return pub.getTransactionReceipt({ hash: keccak256(raw) });
  }

  it("a payment whose wallet burns all the gas it is given is skipped after its allowance and starves no other", async () => {
    const b = breakdown(10_000n);
    const before = await payment(b.total);
    const after = await payment(b.total);
    const burner = await burnerPayment();
    const { raw, txHash } = await chain.signSettlements([settlement(before), burner, settlement(after)]);
    await chain.broadcast(raw);
    const receipt = (await chain.waitForReceipt(txHash, 10_000))!;
    expect(receipt.status).toBe("success");
    const split = chain.splitAddress(recipients);
    expect(chain.settledIn(receipt, split, before.auth.from, before.auth.nonce)).toMatchObject({ providerAmount: b.providerAmount });
    expect(chain.settledIn(receipt, split, after.auth.from, after.auth.nonce)).toMatchObject({ providerAmount: b.providerAmount });
    expect(chain.settledIn(receipt, split, burner.authorization.from, burner.authorization.nonce)).toBeUndefined();
    expect(await chain.authorizationUsed(burner.authorization.from, burner.authorization.nonce)).toBe(false);
  });

  it("a transaction without the gas to give a payment its full allowance reverts whole: no payment is skipped for want of gas", async () => {
    const b = breakdown(10_000n);
    const first = await payment(b.total);
    const second = await payment(b.total);
    // Enough gas for the first payment's allowance, not for the second's.
    const receipt = await settleEachWithGas([settlement(first), settlement(second)], 600_000n);
    expect(receipt.status).toBe("reverted");
    expect(await chain.authorizationUsed(first.auth.from, first.auth.nonce)).toBe(false);
    expect(await chain.authorizationUsed(second.auth.from, second.auth.nonce)).toBe(false);
    // Our own signature gives the transaction gas for every allowance (settlementGas).
    const both = await chain.signSettlements([settlement(first), settlement(second)]);
    await chain.broadcast(both.raw);
    const settled = (await chain.waitForReceipt(both.txHash, 10_000))!;
    expect(chain.settledIn(settled, chain.splitAddress(recipients), first.auth.from, first.auth.nonce)).toBeDefined();
    expect(chain.settledIn(settled, chain.splitAddress(recipients), second.auth.from, second.auth.nonce)).toBeDefined();
  });

  it("gives a settlement transaction more gas than it uses, a split's first settlement included, and never more than the cap", async () => {
    const fresh: SplitRecipients = { ...recipients, seller: privateKeyToAccount(generatePrivateKey()).address };
    const b = breakdown(10_000n);
    const freshSettlements = [await payment(b.total, fresh), await payment(b.total, fresh)].map((p) => ({ ...settlement(p), recipients: fresh }));
    const withDeployment = chain.settlementGas(freshSettlements);
    const { raw, txHash } = await chain.signSettlements(freshSettlements);
    await chain.broadcast(raw);
    const receipt = (await chain.waitForReceipt(txHash, 10_000))!;
    expect(receipt.status).toBe("success");
    expect(receipt.gasUsed).toBeLessThan(withDeployment / 2n);
    for (const s of freshSettlements) expect(chain.settledIn(receipt, chain.splitAddress(fresh), s.authorization.from, s.authorization.nonce)).toBeDefined();
    // Once it has settled a payment, the split is known to be deployed.
    expect(chain.settlementGas(freshSettlements)).toBeLessThan(withDeployment);
    const tooMany = Array.from({ length: 40 }, () => freshSettlements[0]!);
    expect(chain.settlementGas(tooMany)).toBeGreaterThan(MOST_SETTLEMENT_GAS);
    await expect(chain.signSettlements(tooMany)).rejects.toThrow(/more gas than one transaction may have/);
  });

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
    expect(await chain.simulateSettle(recipients, auth, signature)).toEqual({ ok: true });
    const { raw, txHash } = await chain.signSettlements([{ recipients, authorization: auth, signature }]);
    expect(chain.settlesSeveral(raw)).toBe(false);
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
    const signed = await Promise.all(payments.map((p) => chain.signSettlements([settlement(p)])));
    for (const s of signed) await chain.broadcast(s.raw);
    const receipts = await Promise.all(signed.map((s) => chain.waitForReceipt(s.txHash, 10_000)));
    expect(receipts.every((r) => r?.status === "success")).toBe(true);
  });

  it("never hands out the nonce of a transaction signed but not yet sent", async () => {
    const used = await payment(breakdown(10_000n).total);
    const usedTx = await chain.signSettlements([settlement(used)]);
    await chain.broadcast(usedTx.raw);
    await chain.waitForReceipt(usedTx.txHash, 10_000);
    const held = await payment(breakdown(10_000n).total);
    const signedNotSent = await chain.signSettlements([settlement(held)]);
    const next = await payment(breakdown(10_000n).total);
    const signedNext = await chain.signSettlements([settlement(next)]);
    await chain.broadcast(signedNotSent.raw);
    await chain.broadcast(signedNext.raw);
    const receipts = await Promise.all([signedNotSent, signedNext].map((t) => chain.waitForReceipt(t.txHash, 10_000)));
    expect(receipts.map((r) => r?.status)).toEqual(["success", "success"]);
  });

  it("sends what it signed in nonce order, even when asked in reverse (a node refuses a nonce gap)", async () => {
    const payments = [];
    for (let i = 0; i < 4; i++) payments.push(await payment(breakdown(10_000n).total));
    const signed = [];
    for (const p of payments) signed.push(await chain.signSettlements([settlement(p)]));
    await Promise.all([...signed].reverse().map((t) => chain.broadcast(t.raw)));
    const receipts = await Promise.all(signed.map((t) => chain.waitForReceipt(t.txHash, 10_000)));
    expect(receipts.map((r) => r?.status)).toEqual(["success", "success", "success", "success"]);
  });
});
