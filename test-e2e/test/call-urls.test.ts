import { randomBytes } from "node:crypto";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * Call URLs under a seller's handle: /u/<slug> is the seller's public page
 * (JSON for clients, the page for browsers) naming each relay or mcp offer's
 * call URL, and /r/<slug>/<checkout_id> (and /test) is that checkout's face.
 * Beside them receipts keep /r/<payment_id>, /r/<payment_id>/download and
 * /r/by-tx/<hash>: a slug never holds `_`, a payment id always does.
 */

const uniqueSlug = () => `calls-${randomBytes(4).toString("hex")}`;

describe("call URLs under a seller's handle", () => {
  let origin: FakeOrigin;
  let seller: Awaited<ReturnType<typeof newSeller>>;
  let slug: string;

  beforeAll(async () => {
    origin = await startFakeOrigin();
    seller = await newSeller();
    slug = uniqueSlug();
    expect((await call("PATCH", "/auth/me", { key: seller.key, body: { slug } })).status).toBe(200);
  });
  afterAll(() => origin.close());

  const relay = (extra: Record<string, unknown> = {}) =>
    newCheckout(seller.key, { title: "Echo API", price_usd: "0.10", payload: undefined, origin_url: `${origin.url}/echo`, reusable: true, ...extra });

  it("a slug can never look like a payment id or another path of /r/ (422)", async () => {
    for (const bad of ["pay_abc", "by-tx", "Pay-1"]) {
      const r = await call("PATCH", "/auth/me", { key: seller.key, body: { slug: bad } });
      expect([bad, r.status, r.body.errors?.[0]?.field]).toEqual([bad, 422, "slug"]);
    }
  });

  it("/r/<slug>/<id>/test is the rehearsal face of the seller's relay checkout: 402, then the goods and a receipt still at /r/<payment_id>", async () => {
    const c = await relay();
    const path = `/r/${slug}/${c.id}/test?city=Paris`;
    const unpaid = await call("GET", path);
    expect(unpaid.status).toBe(402);
    const required = decoded(unpaid.headers.get("payment-required"));
    const payment = encodeHeader(
      await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0] as PaymentRequirements, { resourceUrl: required.resource.url }),
    );
    const paid = await call("GET", path, { headers: { "PAYMENT-SIGNATURE": payment } });
    expect(paid.status).toBe(200);
    expect(paid.body.fulfillment.payload.query).toEqual({ city: "Paris" });
    const receiptId = paid.body.receipt.id as string;
    // Receipts keep their paths beside call URLs.
    expect((await call("GET", `/r/${receiptId}`)).body.id).toBe(receiptId);
    expect((await call("GET", `/r/${receiptId}/download`)).status).toBe(200);
    expect((await call("GET", `/r/by-tx/${paid.body.receipt.tx_hash}`)).status).toBe(200);
  });

  it("a package key spends on the call URL's live face as on /c/<id>", async () => {
    const c = await relay({ price_usd: "1.00", max_deliveries: 3 });
    const quote = await call("GET", `/c/${c.id}/test`);
    const required = decoded(quote.headers.get("payment-required"));
    const payment = encodeHeader(await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0] as PaymentRequirements));
    const bought = await call("GET", `/r/${slug}/${c.id}/test`, { headers: { "PAYMENT-SIGNATURE": payment } });
    const spent = await call("GET", `/r/${slug}/${c.id}?q=1`, { headers: { Authorization: `Bearer ${bought.body.package_key as string}` } });
    expect([spent.status, spent.body.calls_remaining]).toEqual([200, 1]);
  });

  it("/u/<slug> names each relay offer's call URL (JSON for clients, the page for browsers)", async () => {
    const c = await relay({ test_mode: false });
    const inline = await newCheckout(seller.key, { title: "Inline goods", test_mode: false });
    const page = await call("GET", `/u/${slug}`);
    expect(page.status).toBe(200);
    expect(page.body.links.profile).toBe(`${baseUrl()}/u/${slug}`);
    const offers = page.body.offers as { id: string; call_url: string | null }[];
    expect(offers.find((o) => o.id === c.id)?.call_url).toBe(`${baseUrl()}/r/${slug}/${c.id}`);
    expect(offers.find((o) => o.id === inline.id)?.call_url).toBeNull();
    const html = await call("GET", `/u/${slug}`, { headers: { accept: "text/html" } });
    expect(html.headers.get("content-type")).toContain("text/html");
    expect(html.text).toContain("Echo API");
    expect((await call("GET", "/u/nobody-has-this-slug")).status).toBe(404);
  });

  it("answers 404 under another seller's handle, for a checkout that sells no calls, and under a slug the seller gave up", async () => {
    const c = await relay();
    const inline = await newCheckout(seller.key, { title: "Inline goods" });
    const other = await newSeller();
    const otherSlug = uniqueSlug();
    expect((await call("PATCH", "/auth/me", { key: other.key, body: { slug: otherSlug } })).status).toBe(200);
    expect((await call("GET", `/r/${otherSlug}/${c.id}`)).status).toBe(404);
    expect((await call("GET", `/r/${slug}/${inline.id}`)).status).toBe(404);
    expect((await call("GET", `/r/no-such-seller-x/${c.id}`)).status).toBe(404);

    const mover = await newSeller();
    const [before, after] = [uniqueSlug(), uniqueSlug()];
    expect((await call("PATCH", "/auth/me", { key: mover.key, body: { slug: before } })).status).toBe(200);
    const moved = await newCheckout(mover.key, { title: "Moved", payload: undefined, origin_url: `${origin.url}/echo` });
    expect((await call("PATCH", "/auth/me", { key: mover.key, body: { slug: after } })).status).toBe(200);
    expect((await call("GET", `/r/${before}/${moved.id}`)).status).toBe(404);
    expect((await call("GET", `/r/${after}/${moved.id}`)).status).toBe(402);
  });
});
