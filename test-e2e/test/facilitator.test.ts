import { TestUSDC } from "@c402/evm-contracts";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { DEVCHAIN_USDC, devchainWallets, type DevchainWallets } from "../src/devchain";
import { call, callFrom, decoded, newCheckout, newSeller, otherLoopbackAddress } from "../src/http";

/**
 * The x402 facilitator endpoints on the devchain. They verify and settle only
 * what this service issued: a requirement of an open live checkout's face,
 * settled as that checkout's sale through its split. Anything else is refused
 * without a transaction, so the service's gas cannot be spent as a relayer.
 */
describe("facilitator /x402/base", () => {
  let chain: DevchainWallets;
  /** The demo account devchainWallets(7) mints from; the direct-to-token simulation below calls as it. */
  const funder = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 7 });

  beforeAll(async () => {
    chain = await devchainWallets(7);
  });

  const facilitatorNonce = async () => {
    const signer = (await call("GET", "/x402/base/supported")).body.signers["eip155:*"][0] as Hex;
    return chain.pub.getTransactionCount({ address: signer });
  };
  /** The requirement a checkout's face issues now, as a buyer reads it from PAYMENT-REQUIRED. */
  async function issuedRequirement(path: string): Promise<PaymentRequirements> {
    const quote = await call("GET", path);
    expect(quote.status).toBe(402);
    return decoded(quote.headers.get("payment-required")).accepts[0] as PaymentRequirements;
  }

  it("lists the settleable kinds and its signer", async () => {
    const r = await call("GET", "/x402/base/supported");
    expect(r.status).toBe(200);
    expect(r.body.kinds).toEqual([{ x402Version: 2, scheme: "exact", network: "eip155:84532" }]);
    expect(r.body.signers["eip155:*"]).toHaveLength(1);
    // Solana settles on the local devnet (its kinds: test-e2e/test/solana-payments.test.ts).
    expect((await call("GET", "/x402/solana/supported")).body.kinds.map((k: { network: string }) => k.network)).toEqual([
      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    ]);
    expect((await call("GET", "/x402/tron/supported")).status).toBe(404);
  });

  it("refuses a valid authorization to an address no checkout names: verify and settle refused, no transaction, balances unchanged", async () => {
    const buyer = await chain.fundedBuyer();
    const payTo = privateKeyToAccount(generatePrivateKey()).address;
    const requirement: PaymentRequirements = {
      scheme: "exact",
      network: "eip155:84532",
      asset: DEVCHAIN_USDC,
      amount: "250000",
      payTo,
      maxTimeoutSeconds: 120,
      extra: { name: "USDC", version: "2" },
    };
    const payload = await signExactEvmPayment(buyer, requirement);
    const txsBefore = await facilitatorNonce();
    for (const extra of [
      { name: "USDC", version: "2" },
      { name: "USDC", version: "2", checkoutId: "chk_000000000000000000000000" },
    ]) {
      const body = { network: "eip155:84532", requirement: { ...requirement, extra }, payload: { ...payload, accepted: { ...requirement, extra } } };
      const verified = await call("POST", "/x402/base/verify", { body });
      expect(verified.status).toBe(200);
      expect(verified.body).toMatchObject({ isValid: false, invalidReason: "invalid_payment_requirements", payer: buyer.address });
      const settled = await call("POST", "/x402/base/settle", { body });
      expect(settled.status).toBe(200);
      expect(settled.body).toMatchObject({ success: false, errorReason: "invalid_payment_requirements", transaction: "" });
    }
    expect(await chain.balance(payTo)).toBe(0n);
    expect(await chain.balance(buyer.address)).toBe(1_000_000n);
    expect(await facilitatorNonce()).toBe(txsBefore);
  });

  it("refuses a requirement naming a real live checkout but another payTo or amount (compared with what the face quotes)", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { test_mode: false });
    const issued = await issuedRequirement(`/c/${checkout.id}`);
    const buyer = await chain.fundedBuyer();
    const attacker = privateKeyToAccount(generatePrivateKey()).address;
    const txsBefore = await facilitatorNonce();
    for (const forged of [
      { ...issued, payTo: attacker },
      { ...issued, amount: "1" },
      { ...issued, extra: { ...issued.extra, name: "Other" } },
    ]) {
      const payload = await signExactEvmPayment(buyer, forged);
      const body = { network: "eip155:84532", requirement: forged, payload };
      expect((await call("POST", "/x402/base/verify", { body })).body).toMatchObject({ isValid: false, invalidReason: "invalid_payment_requirements" });
      expect((await call("POST", "/x402/base/settle", { body })).body).toMatchObject({ success: false, errorReason: "invalid_payment_requirements" });
    }
    expect(await chain.balance(attacker)).toBe(0n);
    expect(await chain.balance(buyer.address)).toBe(1_000_000n);
    expect(await facilitatorNonce()).toBe(txsBefore);
  });

  it("refuses the requirement of an unarmed checkout's face and of a rehearsal face", async () => {
    const seller = await newSeller();
    const unarmed = await newCheckout(seller.key);
    const buyer = await chain.fundedBuyer();
    for (const path of [`/c/${unarmed.id}`, `/c/${unarmed.id}/test`]) {
      const requirement = await issuedRequirement(path);
      const payload = await signExactEvmPayment(buyer, requirement);
      const body = { network: "eip155:84532", requirement, payload };
      expect((await call("POST", "/x402/base/settle", { body })).body).toMatchObject({ success: false, errorReason: "invalid_payment_requirements" });
    }
    expect(await chain.balance(buyer.address)).toBe(1_000_000n);
  });

  it("verifies and settles a genuine requirement as the checkout's sale: split paid, receipt recorded, a repeat settles nothing new", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { test_mode: false });
    const requirement = await issuedRequirement(`/c/${checkout.id}`);
    expect(requirement.extra.checkoutId).toBe(checkout.id);
    const buyer = await chain.fundedBuyer();
    const payload = await signExactEvmPayment(buyer, requirement);
    const body = { network: "eip155:84532", requirement, payload };

    expect((await call("POST", "/x402/base/verify", { body })).body).toEqual({ isValid: true, payer: buyer.address });
    const settled = await call("POST", "/x402/base/settle", { body });
    expect(settled.body).toMatchObject({
      success: true,
      network: "eip155:84532",
      payer: buyer.address,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(await chain.balance(buyer.address)).toBe(1_000_000n - 110_500n);
    expect(await chain.balance(seller.wallet.address)).toBe(100_000n);

    const receipt = await call("GET", `/r/by-tx/${settled.body.transaction}`); // fetch follows the redirect to the receipt
    expect(receipt.status).toBe(200);
    expect(receipt.body).toMatchObject({ checkout_id: checkout.id, test_mode: false, total: 110500, payer: buyer.address, tx_hash: settled.body.transaction });

    // The single-shot checkout sold; once its face says so, the same payment still redelivers, at the face and here.
    const deadline = Date.now() + 15_000;
    while ((await call("GET", `/c/${checkout.id}`)).status !== 410) {
      if (Date.now() > deadline) throw new Error("the checkout never became paid");
      await new Promise((r) => setTimeout(r, 200));
    }
    const txsAfter = await facilitatorNonce();
    const atFace = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": encodeHeader(payload) } });
    expect(atFace.status).toBe(200);
    expect(atFace.body).toMatchObject({ redelivered: true, receipt: { tx_hash: settled.body.transaction } });
    const again = await call("POST", "/x402/base/settle", { body });
    expect(again.body).toMatchObject({ success: true, transaction: settled.body.transaction });
    expect((await call("POST", "/x402/base/verify", { body })).body).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_nonce_already_used" });
    expect(await facilitatorNonce()).toBe(txsAfter);
    expect(await chain.balance(buyer.address)).toBe(1_000_000n - 110_500n);
    // The single-shot checkout sold: another payment for its requirement is refused (no second sale).
    const later = await signExactEvmPayment(await chain.fundedBuyer(), requirement);
    expect((await call("POST", "/x402/base/settle", { body: { ...body, payload: later } })).body).toMatchObject({ success: false });
  });

  it("a rehearsal payment can never move money: refused by the facilitator and by the live face, on-chain balance unchanged", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { test_mode: false, reusable: true });
    const live = await issuedRequirement(`/c/${checkout.id}`);
    const rehearsal = await issuedRequirement(`/c/${checkout.id}/test`);
    expect(rehearsal.extra).toMatchObject({ rehearsal: true });
    expect(rehearsal.extra.name).not.toBe(live.extra.name);
    const buyer = await chain.fundedBuyer();
    const payload = await signExactEvmPayment(buyer, rehearsal);
    const txsBefore = await facilitatorNonce();

    // Replayed to the facilitator, as issued and dressed up as the live requirement.
    for (const requirement of [rehearsal, live]) {
      const body = { network: "eip155:84532", requirement, payload: { ...payload, accepted: requirement } };
      expect((await call("POST", "/x402/base/verify", { body })).body).toMatchObject({ isValid: false });
      expect((await call("POST", "/x402/base/settle", { body })).body).toMatchObject({ success: false, transaction: "" });
    }
    // Presented at the live face, as signed and relabelled with the live requirement (it pays another address, under another domain).
    for (const accepted of [rehearsal, live]) {
      const r = await call("GET", `/c/${checkout.id}`, { headers: { "PAYMENT-SIGNATURE": encodeHeader({ ...payload, accepted }) } });
      expect(r.status).toBe(402);
      expect(r.body.reason).toMatch(/^(rehearsal_payment_on_live_face|invalid_exact_evm_recipient_mismatch|invalid_exact_evm_signature)$/);
    }
    // And straight to the token: the rehearsal domain is no token's, so the authorization is not a transfer anywhere.
    const a = payload.payload.authorization;
    const direct = chain.pub.simulateContract({
      address: DEVCHAIN_USDC,
      abi: TestUSDC.abi,
      functionName: "transferWithAuthorization",
      args: [a.from as Hex, a.to as Hex, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce as Hex, payload.payload.signature as Hex],
      account: funder,
    });
    await expect(direct).rejects.toThrow();
    expect(await chain.balance(buyer.address)).toBe(1_000_000n);
    expect(await facilitatorNonce()).toBe(txsBefore);
    // The rehearsal face still accepts it, simulated.
    const rehearsed = await call("GET", `/c/${checkout.id}/test`, { headers: { "PAYMENT-SIGNATURE": encodeHeader(payload) } });
    expect(rehearsed.status).toBe(200);
    expect(rehearsed.body.receipt.test_mode).toBe(true);
    expect(await chain.balance(buyer.address)).toBe(1_000_000n);
  });

  it("answers malformed payments with a reason (HTTP 200), and bad requests with 422", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { test_mode: false });
    const requirement = await issuedRequirement(`/c/${checkout.id}`);
    const poorBuyer = privateKeyToAccount(generatePrivateKey());
    const payload = await signExactEvmPayment(poorBuyer, requirement);
    const poor = await call("POST", "/x402/base/verify", { body: { network: "eip155:84532", requirement, payload } });
    expect(poor.body).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_insufficient_balance" });
    const otherNet = await call("POST", "/x402/base/verify", { body: { network: "eip155:8453", requirement, payload } });
    expect(otherNet.body).toMatchObject({ isValid: false, invalidReason: "invalid_network" });
    for (const patch of [{ asset: "USDC" }, { payTo: "nobody" }, { amount: (1n << 256n).toString() }]) {
      const r = await call("POST", "/x402/base/verify", { body: { network: "eip155:84532", requirement: { ...requirement, ...patch }, payload } });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ isValid: false, invalidReason: "invalid_payload" });
    }
    const overflow = { ...payload, payload: { ...payload.payload, authorization: { ...payload.payload.authorization, validBefore: (1n << 256n).toString() } } };
    expect((await call("POST", "/x402/base/settle", { body: { network: "eip155:84532", requirement, payload: overflow } })).body).toMatchObject({
      success: false,
      errorReason: "invalid_payload",
    });
    const bad = await call("POST", "/x402/base/verify", { body: { network: "mainnet", requirement } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: "network" }), { field: "payload", reason: "is required" }]));
  });

  it("limits verify and settle per payer (30 a minute) and per client address (120 a minute) with 429 and Retry-After", async () => {
    const requirement = { scheme: "exact", network: "eip155:84532", asset: DEVCHAIN_USDC, amount: "1", payTo: DEVCHAIN_USDC, maxTimeoutSeconds: 60, extra: {} };
    const bodyFor = async (signer: PrivateKeyAccount) => ({ network: "eip155:84532", requirement, payload: await signExactEvmPayment(signer, requirement) });
    const payer = privateKeyToAccount(generatePrivateKey());
    const samePayer = await bodyFor(payer);
    // Addresses of their own: per-address counts (kept in Redis in distributed mode) start empty.
    const [first, second, flooding] = [otherLoopbackAddress(), otherLoopbackAddress(), otherLoopbackAddress()];
    const answers = [];
    for (let i = 0; i < 31; i++) answers.push(await callFrom(first, "POST", "/x402/base/verify", { body: samePayer }));
    expect(answers.slice(0, 30).map((r) => r.status)).toEqual(Array(30).fill(200));
    const limited = answers[30]!;
    expect(limited.status).toBe(429);
    expect(limited.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // The same payer is limited from any address; another payer is not.
    expect((await callFrom(second, "POST", "/x402/base/settle", { body: samePayer })).status).toBe(429);
    expect((await callFrom(second, "POST", "/x402/base/verify", { body: await bodyFor(privateKeyToAccount(generatePrivateKey())) })).status).toBe(200);

    const statuses = [];
    for (let i = 0; i < 121; i++) {
      statuses.push((await callFrom(flooding, "POST", "/x402/base/verify", { body: { network: "eip155:84532", requirement, payload: {} } })).status);
    }
    expect(statuses.slice(0, 120).every((s) => s === 200)).toBe(true);
    expect(statuses[120]).toBe(429);
  });
});
