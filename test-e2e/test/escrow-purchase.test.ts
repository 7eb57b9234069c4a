import { encodeHeader } from "@c402/x402";
import { startWebhookReceiver } from "@c402/testkit/webhook-receiver";
import { createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { signedEscrowAction } from "../src/escrow";
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
    // A browser's x402 client reads the requirement cross-origin, as on /c/.
    expect(r.headers.get("access-control-expose-headers")).toContain("PAYMENT-REQUIRED");
    expect((await call("OPTIONS", `/e/${checkout.id}/pay`)).status).toBe(204);
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

  /** The devchain's fee wallet (its last demo account): the escrow fee goes there at release. */
  const FEE_WALLET: Hex = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720";

  /** Asks for an action's typed data, signs it with `signer` and has the service relay it; answers the submission. */
  async function act(checkoutId: string, paymentId: string, action: string, signer: PrivateKeyAccount) {
    const prepared = await call("POST", `/e/${checkoutId}/actions/${action}?payment_id=${paymentId}`);
    expect(prepared.status).toBe(200);
    expect(prepared.body).toMatchObject({ object: "escrow_action", action, signer: signer.address, gasless: true });
    const submitted = await call("POST", `/e/${checkoutId}/actions/${action}/submit?payment_id=${paymentId}`, {
      body: await signedEscrowAction(signer, prepared.body),
    });
    expect(submitted.status).toBe(200);
    return submitted.body;
  }

  /** The escrow's state once the service has followed the chain to `state` (or the last one seen). */
  async function stateOf(checkoutId: string, paymentId: string, state: string): Promise<Record<string, any>> {
    let body: Record<string, any> = {};
    for (let i = 0; i < 150; i++) {
      body = (await call("GET", `/e/${checkoutId}/status?payment_id=${paymentId}`)).body;
      if (body.state === state) return body;
      await new Promise((r) => setTimeout(r, 200));
    }
    return body;
  }

  /** A live escrow sale held on the devchain, with the parties' balances before it. */
  async function heldLiveSale() {
    const { seller, checkout } = await escrowCheckout({ test_mode: false });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 2_040_000n);
    const before = { buyer: 2_040_000n, seller: await chain.balance(seller.wallet.address), fee: await chain.balance(FEE_WALLET) };
    const { paid } = await payEscrow(`/e/${checkout.id}`, buyer);
    expect(paid.status).toBe(200);
    return { seller, checkout, buyer, before, paymentId: paid.body.escrow.payment_id as string };
  }

  describe("after the deposit, on the devchain", () => {
    it("approve: the buyer's signed approval, relayed, pays the seller and the fee exactly; the receipt appears; checkout.paid and escrow.released fire once", async () => {
      const receiver = await startWebhookReceiver();
      try {
        const sale = await heldLiveSale();
        const hook = await call("POST", "/v1/webhooks", {
          key: sale.seller.key,
          body: { url: `${receiver.url}/escrow`, events: ["checkout.paid", "escrow.held", "escrow.released"] },
        });
        expect(hook.status).toBe(201);
        const submitted = await act(sale.checkout.id, sale.paymentId, "approve", sale.buyer);
        expect(submitted).toMatchObject({ object: "escrow_submission", tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), replayed: false });
        const released = await stateOf(sale.checkout.id, sale.paymentId, "released");
        expect(released).toMatchObject({ state: "released", receipt_url: `${baseUrl()}/r/${sale.paymentId}` });
        expect(await chain.balance(sale.buyer.address)).toBe(0n);
        expect(await chain.balance(sale.seller.wallet.address)).toBe(sale.before.seller + 2_000_000n);
        expect(await chain.balance(FEE_WALLET)).toBe(sale.before.fee + 40_000n);
        // The receipt (once payments has followed the release).
        let receipt = await call("GET", `/r/${sale.paymentId}`, { headers: { accept: "application/json" } });
        for (let i = 0; i < 100 && receipt.status !== 200; i++) {
          await new Promise((r) => setTimeout(r, 200));
          receipt = await call("GET", `/r/${sale.paymentId}`, { headers: { accept: "application/json" } });
        }
        expect(receipt.status).toBe(200);
        expect(receipt.body).toMatchObject({ id: sale.paymentId, test_mode: false, total: 2_040_000, fee_amount: 40_000, provider_amount: 2_000_000 });
        // The seller's view, and its list.
        const seen = await call("GET", `/v1/escrows/${sale.paymentId}`, { key: sale.seller.key });
        expect(seen.body).toMatchObject({
          status: "released",
          closed_by: "approve",
          amount: 2_000_000,
          fee: 40_000,
          total: 2_040_000,
          buyer: sale.buyer.address,
        });
        // The webhook was registered after the deposit: escrow.released and checkout.paid, each once.
        await receiver.waitFor(2, 30_000);
        await new Promise((r) => setTimeout(r, 1_000));
        const events = receiver.received.map((d) => JSON.parse(d.rawBody) as { event: string; data: Record<string, unknown> });
        expect(events.map((e) => e.event).sort()).toEqual(["checkout.paid", "escrow.released"]);
        expect(events.find((e) => e.event === "escrow.released")!.data).toMatchObject({ payment_id: sale.paymentId, by: "approve" });
        // Released is final: no further action is prepared.
        expect((await call("POST", `/e/${sale.checkout.id}/actions/hold?payment_id=${sale.paymentId}`)).status).toBe(409);
      } finally {
        await receiver.close();
      }
    });

    it.each([
      [false, "refunded"],
      [true, "released"],
    ])("hold, then a refund request, then the arbiter's own ruling (to_seller=%s) ends %s, to the unit", async (toSeller, outcome) => {
      const sale = await heldLiveSale();
      await act(sale.checkout.id, sale.paymentId, "hold", sale.buyer);
      expect((await stateOf(sale.checkout.id, sale.paymentId, "on_hold")).state).toBe("on_hold");
      await act(sale.checkout.id, sale.paymentId, "request-refund", sale.buyer);
      expect((await stateOf(sale.checkout.id, sale.paymentId, "escalated")).state).toBe("escalated");
      const listed = await call("GET", "/v1/escrows?status=escalated", { key: sale.seller.key });
      expect(listed.body.escrows.map((e: { payment_id: string }) => e.payment_id)).toEqual([sale.paymentId]);
      const noSide = await call("POST", `/v1/escrows/${sale.paymentId}/resolve`, { key: sale.seller.key });
      expect(noSide.status).toBe(422);
      expect(noSide.body.errors.map((e: { field: string }) => e.field)).toEqual(["to_seller"]);
      // The ruling: unsigned, for the arbiter's own wallet, which pays its gas.
      const ruling = await call("POST", `/v1/escrows/${sale.paymentId}/resolve?to_seller=${toSeller}`, { key: sale.seller.key });
      expect(ruling.status).toBe(200);
      expect(ruling.body).toMatchObject({ object: "escrow_ruling", family: "evm", from_: arbiter.address, to: expect.stringMatching(/^0x/i) });
      await chain.fundGas(arbiter.address, 10n ** 16n);
      const wallet = createWalletClient({ account: arbiter, transport: http(chain.rpcUrl) });
      const hash = await wallet.sendTransaction({ to: ruling.body.to, data: ruling.body.data, chain: null });
      expect((await chain.pub.waitForTransactionReceipt({ hash })).status).toBe("success");
      expect((await stateOf(sale.checkout.id, sale.paymentId, outcome)).state).toBe(outcome);
      if (toSeller) {
        expect(await chain.balance(sale.seller.wallet.address)).toBe(sale.before.seller + 2_000_000n);
        expect(await chain.balance(FEE_WALLET)).toBe(sale.before.fee + 40_000n);
      } else {
        // A refund returns everything the buyer deposited, the fee too.
        expect(await chain.balance(sale.buyer.address)).toBe(2_040_000n);
        expect(await chain.balance(sale.seller.wallet.address)).toBe(sale.before.seller);
        expect((await call("GET", `/r/${sale.paymentId}`)).status).toBe(404);
      }
      expect((await call("GET", `/v1/escrows/${sale.paymentId}`, { key: sale.seller.key })).body).toMatchObject({ status: outcome, closed_by: "ruling" });
      // A ruling on a closed escrow is refused.
      expect((await call("POST", `/v1/escrows/${sale.paymentId}/resolve?to_seller=true`, { key: sale.seller.key })).status).toBe(409);
    });

    it("cancel: the seller's signed cancel refunds the buyer in full; an action the state no longer takes is refused", async () => {
      const sale = await heldLiveSale();
      await act(sale.checkout.id, sale.paymentId, "cancel", sale.seller.wallet);
      expect((await stateOf(sale.checkout.id, sale.paymentId, "refunded")).state).toBe("refunded");
      expect(await chain.balance(sale.buyer.address)).toBe(2_040_000n);
      expect((await call("POST", `/e/${sale.checkout.id}/actions/approve?payment_id=${sale.paymentId}`)).status).toBe(409);
    });
  });

  it("over MCP, with no credential: quote_checkout quotes an /e/ URL, pay_test_checkout deposits into a test escrow", async () => {
    const { checkout } = await escrowCheckout();
    const tool = (name: string, args: Record<string, unknown>) =>
      call("POST", "/mcp", { body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } } });
    const quote = await tool("quote_checkout", { checkout: `${checkout.url}/test` });
    expect(quote.body.result.structuredContent).toMatchObject({ checkout_id: checkout.id, face: "test", accepts: [{ scheme: "escrow", amount: "2040000" }] });
    const paid = await tool("pay_test_checkout", { checkout: checkout.url });
    const answer = paid.body.result.structuredContent;
    expect(answer).toMatchObject({
      http_status: 200,
      fulfillment: { payload: { tracking: "1Z999" } },
      receipt: null,
      escrow: { status: "held" },
      test_mode: true,
    });
    expect((await stateOf(checkout.id, answer.escrow.payment_id, "held")).test_mode).toBe(true);
    // An /e/ URL names an escrow checkout only.
    expect((await tool("pay_test_checkout", { checkout: `${baseUrl()}/e/chk_AAAAAAAAAAAAAAAAAAAAAAAA` })).body.error.code).toBe(-32602);
  });

  it("a rehearsal escrow walks the same way: approved, it releases with a test receipt, nothing on chain", async () => {
    const { checkout } = await escrowCheckout();
    const buyer = privateKeyToAccount(generatePrivateKey());
    const { paid } = await payEscrow(`/e/${checkout.id}/test`, buyer);
    const paymentId = paid.body.escrow.payment_id as string;
    const submitted = await act(checkout.id, paymentId, "approve", buyer);
    expect(submitted.tx_hash).toBeNull();
    expect((await stateOf(checkout.id, paymentId, "released")).state).toBe("released");
    let receipt = await call("GET", `/r/${paymentId}`, { headers: { accept: "application/json" } });
    for (let i = 0; i < 100 && receipt.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      receipt = await call("GET", `/r/${paymentId}`, { headers: { accept: "application/json" } });
    }
    expect(receipt.body).toMatchObject({ id: paymentId, test_mode: true, total: 2_040_000 });
  });
});
