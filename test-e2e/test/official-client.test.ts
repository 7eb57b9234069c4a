import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { baseUrl, newCheckout, newSeller } from "../src/http";

describe("the official @x402/fetch 2.27 client, unmodified", () => {
  it("pays a rehearsal face and reads PAYMENT-RESPONSE", async () => {
    const s = await newSeller();
    const c = await newCheckout(s.key, { title: "Interop", price_usd: "0.25", payload: { ok: true } });
    const account = privateKeyToAccount(generatePrivateKey());
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: account });
    const pay = wrapFetchWithPayment(fetch, client);
    const res = await pay(`${baseUrl()}/c/${c.id}/test`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { fulfillment: { payload: unknown }; receipt: { payer: string; total: number } };
    expect(body.fulfillment.payload).toEqual({ ok: true });
    expect(body.receipt.payer).toBe(account.address);
    expect(body.receipt.total).toBe(250_000 + 1_250 + 10_000);
    const settle = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE") as string);
    expect(settle).toMatchObject({ success: true, network: "eip155:84532", payer: account.address });
  });
});
