import { encodeHeader } from "@c402/x402";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newSeller } from "../src/http";

/**
 * An escrow purchase (spec, Escrow; ADR 19), through the gateway as a buyer
 * without an x402 client makes it: the escrow face's 402, POST …/prepare,
 * the typed data signed with viem, the payment presented at …/pay; the goods
 * come back with the payment held in escrow (no receipt yet), and the status
 * URL says so. Both modes: the rehearsal face (a test escrow, no chain), and
 * the live face on the devchain's escrow contract.
 *
 * Needs the other slices of issue 47: the escrow checkouts' create (POST
 * /v1/escrow-checkouts) and the escrow service's Deposit and GetEscrow.
 */
describe("escrow purchase", () => {
  let chain: DevchainWallets;
  const arbiter = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    chain = await devchainWallets(6);
  });

  async function escrowCheckout(body: Record<string, unknown> = {}) {
    const s = await newSeller();
    const r = await call("POST", "/v1/escrow-checkouts", {
      key: s.key,
      body: { title: "Vintage lamp", price_usd: "2.00", payload: { tracking: "1Z999" }, escrow_preset: "standard", arbiter_evm: arbiter.address, ...body },
    });
    expect(r.status).toBe(201);
    expect(r.body.id).toMatch(/^esc_/);
    expect(r.body.url).toBe(`${baseUrl()}/e/${r.body.id}`);
    return { seller: s, checkout: r.body as { id: string; url: string; test_url: string } };
  }

  /** The buyer's deposit: prepare, sign the typed data as a wallet does (eth_signTypedData_v4), present it. */
  async function payEscrow(path: string, buyer: PrivateKeyAccount, handoff?: string) {
    const prepared = await call("POST", `${path}/prepare`, { body: { payer: buyer.address } });
    expect(prepared.status).toBe(200);
    const { typed_data: typed, payload_stub: stub, salt } = prepared.body;
    expect(typed.primaryType).toBe("ReceiveWithAuthorization");
    expect(stub.payload.salt).toBe(salt);
    const { EIP712Domain: _domain, ...types } = typed.types;
    const m = typed.message;
    const signature = await buyer.signTypedData({
      domain: typed.domain,
      types,
      primaryType: "ReceiveWithAuthorization",
      message: { ...m, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce as Hex },
    });
    const header = encodeHeader({ ...stub, payload: { ...stub.payload, signature } });
    const query = handoff ? `?h=${handoff}` : "";
    return { header, paid: await call("POST", `${path}/pay${query}`, { headers: { "payment-signature": header } }) };
  }

  it("the escrow face's 402 names the escrow requirement: payTo the contract, the escrow fee, the terms in extra.escrow", async () => {
    const { checkout } = await escrowCheckout();
    const r = await call("GET", `/e/${checkout.id}/test`);
    expect(r.status).toBe(402);
    const [requirement] = decoded(r.headers.get("payment-required")).accepts;
    // $2.00 + 1% + $0.02.
    expect(requirement).toMatchObject({ scheme: "escrow", network: "eip155:84532", amount: "2040000", extra: { rehearsal: true } });
    expect(requirement.extra.escrow).toMatchObject({ preset: "standard", arbiter: arbiter.address });
    expect(requirement.extra.escrow.if_nobody_acts).toMatch(/^If nobody acts, the payment is released to the seller/);
  });

  it("rehearses: the goods with the payment held in a test escrow, no receipt; the status and the handoff say held", async () => {
    const { checkout } = await escrowCheckout();
    const buyer = privateKeyToAccount(generatePrivateKey());
    const handoff = "escrow_handoff_0123456789";
    const { header, paid } = await payEscrow(`/e/${checkout.id}/test`, buyer, handoff);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ fulfillment: { payload: { tracking: "1Z999" } }, receipt: null, escrow: { status: "held" }, test_mode: true });
    const paymentId = paid.body.escrow.payment_id as string;
    expect(paid.body.escrow.status_url).toBe(`${baseUrl()}/e/${checkout.id}/status?payment_id=${paymentId}`);
    expect((await call("GET", `/r/${paymentId}`)).status).toBe(404);
    const status = await call("GET", `/e/${checkout.id}/status?payment_id=${paymentId}`);
    expect(status.body).toMatchObject({ state: "held", test_mode: true, next_step: expect.stringMatching(/released to the seller/) });
    expect((await call("GET", `/e/${checkout.id}/handoff/${handoff}`)).body).toMatchObject({ payment_id: paymentId, escrow_state: "held" });
    // Presented again: the same held sale, nothing deposited twice.
    const again = await call("POST", `/e/${checkout.id}/test/pay`, { headers: { "payment-signature": header } });
    expect(again.body).toMatchObject({ escrow: { payment_id: paymentId, status: "held" }, redelivered: true });
  });

  it("pays the live face on the devchain: the escrow contract holds the price plus the escrow fee", async () => {
    const { checkout } = await escrowCheckout({ test_mode: false });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 2_040_000n);
    const before = await chain.balance(buyer.address);
    const { paid } = await payEscrow(`/e/${checkout.id}`, buyer);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ receipt: null, escrow: { status: "held" }, test_mode: false });
    expect(await chain.balance(buyer.address)).toBe(before - 2_040_000n);
    const status = await call("GET", `/e/${checkout.id}/status?payment_id=${paid.body.escrow.payment_id}`);
    expect(status.body).toMatchObject({ state: "held", test_mode: false });
    // Another checkout's escrow face does not show it.
    const other = await escrowCheckout();
    expect((await call("GET", `/e/${other.checkout.id}/status?payment_id=${paid.body.escrow.payment_id}`)).status).toBe(404);
  });
});
