import { Keypair, rpc } from "@stellar/stellar-sdk";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme } from "@x402/stellar/exact/client";
import { baseUrl, call, newCheckout, newSeller } from "../src/http";
import { STELLAR_TESTNET, TESTNET_USDC } from "../src/stellar";

/**
 * The Stellar purchase of test-e2e/test/stellar-payments.test.ts against the public testnet instead of the
 * stand-in: what only a real network proves (fees, footprints, the real asset contract). It needs the internet,
 * so it never runs here; the README gives the command. Skipped unless the buyer and seller are given:
 *   STELLAR_TESTNET_BUYER_SECRET  an S… account holding testnet USDC (Circle's faucet) and XLM (Friendbot)
 *   STELLAR_TESTNET_SELLER        a G… account with a USDC trustline
 * and the target is the distributed runner settling on testnet (STELLAR_NETWORK=stellar:testnet,
 * STELLAR_RPC_URL, STELLAR_FACILITATOR_SECRET of a funded account).
 */
const buyerSecret = process.env.STELLAR_TESTNET_BUYER_SECRET;
const sellerWallet = process.env.STELLAR_TESTNET_SELLER;
const rpcUrl = process.env.STELLAR_RPC_URL ?? "https://soroban-testnet.stellar.org";
const smoke = buyerSecret && sellerWallet ? describe : describe.skip;

smoke("Stellar testnet smoke: the official @x402/stellar client pays a live face on stellar:testnet", () => {
  it("pays $0.01 in one round trip; the receipt's transaction succeeded on the network", async () => {
    const seller = await newSeller();
    expect((await call("PUT", "/v1/account/wallets", { key: seller.key, body: { stellar: sellerWallet } })).status).toBe(200);
    const checkout = await newCheckout(seller.key, { title: "Testnet smoke", price_usd: "0.01", payload: { ok: true }, test_mode: false });
    const buyer = Keypair.fromSecret(buyerSecret as string);
    const client = new x402Client()
      .register("stellar:*", new ExactStellarScheme(createEd25519Signer(buyer.secret(), STELLAR_TESTNET), { url: rpcUrl }))
      .setSpendControls({ allowedAssets: [{ network: STELLAR_TESTNET, asset: TESTNET_USDC, maxAmountPerPayment: "1000000" }] });
    const res = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/c/${checkout.id}`, { headers: { accept: "application/json" } });
    const text = await res.text();
    expect([res.status, res.status === 200 ? "" : text]).toEqual([200, ""]);
    const body = JSON.parse(text) as { receipt: Record<string, unknown> };
    expect(body.receipt).toMatchObject({ test_mode: false, network: STELLAR_TESTNET, total: 10_000, pay_to: sellerWallet, payer: buyer.publicKey() });
    const settle = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE") as string);
    const landed = await new rpc.Server(rpcUrl).getTransaction(settle.transaction);
    expect(landed.status).toBe("SUCCESS");
  });
});
