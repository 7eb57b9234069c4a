import { Resvg } from "@resvg/resvg-js";
import jsQR from "jsqr";
import { payPage, type PayPageInput } from "../../src/pages/pay-page";
import type { PayPageData } from "../../src/pages/page-data";

const input = (over: Partial<PayPageInput> = {}): PayPageInput => ({
  kind: "checkout",
  checkoutId: "chk_0123456789abcdef01234567",
  face: "live",
  faceUrl: "https://pay.example/c/chk_0123456789abcdef01234567",
  title: "Weather for Paris",
  offer: { description: "Today's forecast", price_usd: "0.100000", fee_usd: "0.010500", total_usd: "0.110500", calls_included: null },
  accepts: [
    { network: "eip155:84532", payTo: "0x1111111111111111111111111111111111111111" },
    { network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", payTo: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" },
    { network: "stellar:testnet", payTo: "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H" },
  ],
  simulated: false,
  liveUrl: null,
  walletButton: false,
  frameOrigins: [],
  params: {},
  handoffIn: undefined,
  series: false,
  ...over,
});

/** The JSON data block the page's script reads. */
function dataOf(html: string): PayPageData {
  const m = /<script type="application\/json" id="svc-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m?.[1]) throw new Error("no data block");
  return JSON.parse(m[1]) as PayPageData;
}

describe("the pay page", () => {
  it("shows without script the offer, the price with its fee, every recipient, a QR code and the agent's instructions", async () => {
    const { html } = await payPage(input());
    expect(html).toContain("<h1>Weather for Paris</h1>");
    expect(html).toContain("Today's forecast".replace("'", "&#39;"));
    expect(html).toContain("<strong>0.110500 USDC</strong> (fee included)");
    expect(html).toContain("0.100000 USD to the seller + 0.010500 USD fee");
    for (const a of input().accepts) expect(html).toContain(a.payTo);
    expect(html).toContain("Base Sepolia");
    expect(html).toContain("Solana devnet");
    expect(html).toMatch(/<div class="svc-qr-code" role="img" aria-label="[^"]+"><svg /);
    expect(html).toContain("Pay with an x402 client at <code>https://pay.example/c/chk_0123456789abcdef01234567</code>");
    expect(html).not.toContain("Rehearsal:");
  });

  it("runs no inline script: one data block (never executed) and this origin's bundle; the policy allows nothing else", async () => {
    const { html, headers } = await payPage(input());
    const scripts = html.match(/<script[^>]*>/g) ?? [];
    expect(scripts).toEqual([
      '<script type="application/json" id="svc-data">',
      expect.stringMatching(/^<script src="\/static\/pay\.js\?v=[0-9a-f]{12}" defer>$/),
    ]);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/style="/);
    expect(Object.fromEntries(headers)).toEqual({
      "Content-Security-Policy":
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      "Referrer-Policy": "no-referrer",
      "X-Content-Type-Options": "nosniff",
      "X-Frame-Options": "DENY",
    });
  });

  it("escapes what sellers and buyers wrote, in the markup and in the data block", async () => {
    const evil = `</script><script>alert(1)</script><img src=x onerror=alert(2)>`;
    const { html } = await payPage(input({ title: evil, offer: { ...input().offer, description: evil }, params: { q: evil } }));
    expect(html).not.toContain("<script>alert(1)");
    expect(html).not.toContain("<img src=x");
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(dataOf(html).params).toEqual({ q: evil });
  });

  it("tells its script where to prepare and pay (with the call parameters and the handoff nonce it was opened with) and which wallets can pay", async () => {
    const { html } = await payPage(
      input({ face: "test", faceUrl: "https://pay.example/c/chk_0123456789abcdef01234567/test", params: { city: "Paris" }, handoffIn: "abcdefghijklmnop" }),
    );
    const data = dataOf(html);
    expect(data).toMatchObject({
      v: 1,
      kind: "checkout",
      face: "test",
      prepare_url: "/c/chk_0123456789abcdef01234567/test/prepare",
      pay_url: "/c/chk_0123456789abcdef01234567/test/pay?city=Paris&h=abcdefghijklmnop",
      params: { city: "Paris" },
      wallet_button: false,
      frame_origins: [],
    });
    // Stellar has no browser wallet standard here: it is shown, not offered to wallets.
    expect(data.networks).toEqual([
      {
        network: "eip155:84532",
        family: "evm",
        chain_id: 84532,
        wallet_chain: null,
        label: "Base Sepolia",
        pay_to: "0x1111111111111111111111111111111111111111",
      },
      {
        network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
        family: "solana",
        chain_id: null,
        wallet_chain: "solana:devnet",
        label: "Solana devnet",
        pay_to: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      },
    ]);
    // Its own nonce: the QR carries it, the script polls the handoff with it.
    expect(data.handoff?.nonce).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(data.handoff?.poll_url).toBe(`/c/chk_0123456789abcdef01234567/handoff/${data.handoff?.nonce}`);
    expect((await payPage(input())).html).not.toContain(data.handoff?.nonce as string);
  });

  it("its QR code opens the same call on a phone, naming the page's handoff nonce", async () => {
    const { html } = await payPage(input({ params: { city: "Paris" } }));
    const svg = (/<svg[\s\S]*<\/svg>/.exec(html) as RegExpExecArray)[0];
    const image = new Resvg(svg, { fitTo: { mode: "width", value: 400 }, background: "white" }).render();
    const scanned = jsQR(new Uint8ClampedArray(image.pixels), image.width, image.height)?.data;
    expect(scanned).toBe(`https://pay.example/c/chk_0123456789abcdef01234567?city=Paris&h=${dataOf(html).handoff?.nonce}`);
  });

  it("a simulated face offers its wallets EVM only: it prepares nothing for Solana", async () => {
    const { html } = await payPage(input({ face: "test", simulated: true }));
    expect(dataOf(html).networks.map((n) => n.network)).toEqual(["eip155:84532"]);
    expect(html).toContain("Solana devnet");
  });

  it("a rehearsal says it settles without real money, and where the live face is once the seller went live", async () => {
    const { html } = await payPage(input({ face: "test", simulated: true, liveUrl: "https://pay.example/c/chk_0123456789abcdef01234567" }));
    expect(html).toContain("<strong>Rehearsal:</strong> this page settles without real money");
    expect(html).toContain('The live checkout is at <a href="https://pay.example/c/chk_0123456789abcdef01234567">');
    expect((await payPage(input({ simulated: true }))).html).toContain("The seller has not gone live yet.");
  });

  it("names only the framing origins the rule accepts, and drops X-Frame-Options for them", async () => {
    const { html, headers } = await payPage(input({ frameOrigins: ["https://shop.example", "https://*.evil.example", null, "http://127.0.0.1:8080"] }));
    const h = Object.fromEntries(headers);
    expect(h["Content-Security-Policy"]).toMatch(/; frame-ancestors https:\/\/shop\.example http:\/\/127\.0\.0\.1:8080$/);
    expect(h["X-Frame-Options"]).toBeUndefined();
    expect(dataOf(html).frame_origins).toEqual(["https://shop.example", "http://127.0.0.1:8080"]);
  });

  it("offers open-in-wallet links for the families the face sells on", async () => {
    const evmOnly = (await payPage(input({ accepts: [input().accepts[0]!] }))).html;
    expect(evmOnly).toContain("https://metamask.app.link/dapp/pay.example/c/chk_0123456789abcdef01234567");
    expect(evmOnly).not.toContain("phantom.app");
    expect((await payPage(input())).html).toContain(
      "https://phantom.app/ul/browse/https%3A%2F%2Fpay.example%2Fc%2Fchk_0123456789abcdef01234567?ref=https%3A%2F%2Fpay.example",
    );
  });

  it("an article's wall keeps the teaser and the pass's terms; it has no handoff (the reader pays where they read)", async () => {
    const { html } = await payPage(
      input({
        kind: "article",
        checkoutId: "cnt_0123456789abcdef01234567",
        faceUrl: "https://pay.example/x/cnt_0123456789abcdef01234567",
        article: { teaser: "Who killed the colonel?", byline: "A. Writer · 2026-01-01", passHours: 24, language: "fr", passQuery: "grant" },
      }),
    );
    expect(html).toContain('<html lang="fr">');
    expect(html).toContain('<p class="c402-teaser">Who killed the colonel?</p>');
    expect(html).toContain('<p class="c402-byline">A. Writer · 2026-01-01</p>');
    expect(html).toContain("opens it again for 24 hours");
    expect(html).toContain("?grant=&lt;your pass&gt;");
    expect(dataOf(html).handoff).toBeNull();
  });
});
