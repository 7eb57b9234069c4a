import type { Browser, Frame } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { accessibilityViolations, installEvmWallet, launchBrowser, newContext } from "../src/browser";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { eventsOf, frameOf, sellerSite, type SellerSite } from "../src/embed-site";
import { actOnEscrow, newEscrowCheckout } from "../src/escrow";
import { baseUrl, call, newCheckout, newSeller, payRehearsal } from "../src/http";

/** The fee wallet of the devchain deployment (its last demo account): the protocol fee lands there. */
const FEE_WALLET = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720";
const ARTICLE = "<h2>Chapter one</h2><p>The lighthouse keeper counted the ships that never came back.</p>";

/*
 * What the callbacks run in the browser (page.evaluate) touch of it: the e2e
 * suite compiles without the DOM library, so these few names are declared here.
 */
interface StyledElement {
  style: { height: string; filter: string };
}
declare const document: { documentElement: { dataset: Record<string, string | undefined> }; body: unknown };
declare function getComputedStyle(element: unknown): { backgroundColor: string; color: string; borderTopLeftRadius: string; borderTopWidth: string };

/**
 * Embeds (spec, Embedding; pages/README.md "Embeds") in a real Chromium: a
 * seller's site on loopback loads /static/embed.js, which frames the pay page
 * of each `data-svc` mount (or renders a Buy link), passes the look in the
 * frame URL's fragment, and turns the frame's messages into `svc:*` DOM events
 * on the mount. A buyer with a mock EIP-6963 wallet pays inside the frame on
 * the devchain; sibling parts of the checkout flip to paid together.
 */
describe("embeds", () => {
  let browser: Browser;
  let chain: DevchainWallets;
  /** The seller's site (allowlisted where a test says so) and a second site that never is. */
  let site: SellerSite;
  let stranger: SellerSite;

  beforeAll(async () => {
    browser = await launchBrowser();
    chain = await devchainWallets(4);
    site = await sellerSite();
    stranger = await sellerSite();
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await stranger?.close();
  });

  /** A seller whose embed origins are `origins`, and one checkout of it. */
  async function sellerWith(origins: string[], checkout: Record<string, unknown> = {}) {
    const seller = await newSeller();
    const put = await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: origins } });
    expect(put.status).toBe(200);
    return { seller, checkout: await newCheckout(seller.key, checkout) };
  }

  it("an allowlisted site frames the pay page; the buyer pays in the frame; the host hears svc:paid and every part flips to paid; balances change exactly", async () => {
    const { seller, checkout } = await sellerWith([site.origin], {
      title: "Framed weather",
      price_usd: "0.10",
      payload: { temp_c: 23 },
      test_mode: false,
      wallet_button: true,
    });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 1_000_000n);
    const before = { buyer: await chain.balance(buyer.address), seller: await chain.balance(seller.wallet.address), fee: await chain.balance(FEE_WALLET) };

    const context = await newContext(browser);
    const wallet = await installEvmWallet(context, buyer, { name: "Test Wallet", chainId: 8453 });
    const page = await context.newPage();
    await page.goto(
      site.page(`<div id="pay" data-svc="${checkout.id}" data-svc-part="pay"></div>
<div id="price" data-svc="${checkout.id}" data-svc-part="price"></div>
<div id="agent" data-svc="${checkout.id}" data-svc-part="agent"></div>`),
    );
    await eventsOf(page, "svc:ready", 3);
    const payFrame = await frameOf(page, "#pay");
    expect(new URL(payFrame.url()).pathname).toBe(`/c/${checkout.id}`);
    expect(await payFrame.title()).toContain("Framed weather");
    // Each part shows its own section: the price part no wallets, the agent part no price.
    const priceFrame = await frameOf(page, "#price");
    const agentFrame = await frameOf(page, "#agent");
    expect(await priceFrame.locator("section[data-part=price]").isVisible()).toBe(true);
    expect(await priceFrame.locator("#svc-choose").isVisible()).toBe(false);
    expect(await priceFrame.locator("h1").isVisible()).toBe(false);
    expect(await agentFrame.locator("section[data-part=agent]").isVisible()).toBe(true);
    expect(await agentFrame.locator("section[data-part=price]").isVisible()).toBe(false);
    expect(await payFrame.locator("section[data-part=agent]").isVisible()).toBe(false);
    expect(await payFrame.locator("h1").isVisible()).toBe(true);

    await payFrame.getByRole("button", { name: /Pay with Test Wallet on Base Sepolia/ }).click();
    const [paid] = await eventsOf(page, "svc:paid", 1);
    expect(paid).toMatchObject({
      mount: "pay",
      detail: {
        checkout_id: checkout.id,
        payment_id: expect.stringMatching(/^pay_/),
        receipt_url: expect.stringMatching(`^${baseUrl()}/r/pay_`),
        test_mode: false,
      },
    });
    for (const mount of ["pay", "price", "agent"]) expect(await page.getAttribute(`#${mount}`, "data-svc-paid")).toBe("true");
    await payFrame.locator("#svc-result").waitFor({ state: "visible" });
    expect(JSON.parse((await payFrame.locator("#svc-goods").textContent()) ?? "null")).toEqual({ temp_c: 23 });
    // The siblings were told by the host and show paid too.
    for (const sibling of [priceFrame, agentFrame]) {
      await sibling.locator("#svc-result").waitFor({ state: "visible" });
      expect(await sibling.locator("#svc-result-heading").textContent()).toBe("Paid");
    }
    expect(wallet.signed).toHaveLength(1);

    const receipt = (await call("GET", new URL(paid!.detail.receipt_url as string).pathname)).body;
    expect(receipt).toMatchObject({ id: paid!.detail.payment_id, test_mode: false, network: "eip155:84532", payer: buyer.address, total: 110500 });
    expect(await chain.balance(buyer.address)).toBe(before.buyer - 110_500n);
    expect(await chain.balance(seller.wallet.address)).toBe(before.seller + 100_000n);
    expect(await chain.balance(FEE_WALLET)).toBe(before.fee + 10_500n);

    // Without data-svc-height the frames follow the page's reported height.
    const resizes = (await eventsOf(page, "svc:resize", 1)).filter((e) => e.mount === "price");
    const lastHeight = resizes.at(-1)?.detail.height as number;
    expect(lastHeight).toBeGreaterThan(0);
    expect(await page.$eval("#price iframe", (f) => (f as unknown as StyledElement).style.height)).toBe(`${lastHeight}px`);
    await context.close();
  });

  it("an escrow embed: the host hears svc:held at the deposit, then svc:on_hold, svc:escalated and svc:released as the buyer acts", async () => {
    const seller = await newSeller();
    expect((await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: [site.origin] } })).status).toBe(200);
    const escrowCheckout = async (title: string) => (await newEscrowCheckout(seller.key, { title, wallet_button: true })).id;
    const disputed = await escrowCheckout("Disputed lamp");
    const approved = await escrowCheckout("Approved lamp");
    const buyer = privateKeyToAccount(generatePrivateKey());
    const context = await newContext(browser);
    await installEvmWallet(context, buyer, { name: "Test Wallet" });
    const page = await context.newPage();
    await page.goto(
      site.page(`<div id="disputed" data-svc="${disputed}" data-svc-test="true"></div>
<div id="approved" data-svc="${approved}" data-svc-test="true"></div>`),
    );
    await eventsOf(page, "svc:ready", 2);

    const deposit = async (mount: string) => {
      const frame = await frameOf(page, `#${mount}`);
      expect(new URL(frame.url()).pathname).toMatch(/^\/e\/esc_\w+\/test$/);
      await frame.getByRole("button", { name: /Pay with Test Wallet/ }).click();
      await frame.locator("#svc-result").waitFor({ state: "visible", timeout: 30_000 });
      return frame;
    };
    const disputedFrame = await deposit("disputed");
    const [held] = await eventsOf(page, "svc:held", 1);
    expect(held).toMatchObject({ mount: "disputed", detail: { checkout_id: disputed, payment_id: expect.stringMatching(/^pay_/), test_mode: true } });
    // Held is no sale yet: nothing flips to paid.
    expect(await page.getAttribute("#disputed", "data-svc-paid")).toBeNull();
    const paymentId = held!.detail.payment_id as string;
    expect((await actOnEscrow(disputed, paymentId, "hold", buyer)).submitted.status).toBe(200);
    expect((await eventsOf(page, "svc:on_hold", 1))[0]).toMatchObject({ mount: "disputed", detail: { payment_id: paymentId } });
    expect((await actOnEscrow(disputed, paymentId, "request-refund", buyer)).submitted.status).toBe(200);
    expect((await eventsOf(page, "svc:escalated", 1))[0]).toMatchObject({ mount: "disputed", detail: { payment_id: paymentId } });
    expect(await disputedFrame.locator("#svc-result-heading").textContent()).toBe("Escrow escalated to the arbiter");

    await deposit("approved");
    const approvedHeld = (await eventsOf(page, "svc:held", 2)).find((e) => e.mount === "approved");
    const approvedPayment = approvedHeld!.detail.payment_id as string;
    expect((await actOnEscrow(approved, approvedPayment, "approve", buyer)).submitted.status).toBe(200);
    const [released] = await eventsOf(page, "svc:released", 1);
    expect(released).toMatchObject({
      mount: "approved",
      detail: { checkout_id: approved, payment_id: approvedPayment, receipt_url: expect.stringContaining(`/r/${approvedPayment}`) },
    });
    await context.close();
  });

  it("on a site that is not allowlisted the browser refuses the frame; the script says why in the console", async () => {
    const { checkout } = await sellerWith([site.origin], { title: "Not for strangers" });
    const page = await browser.newPage();
    const warning = page.waitForEvent("console", { predicate: (m) => m.type() === "warning" && m.text().startsWith("c402 embed:"), timeout: 30_000 });
    await page.goto(stranger.page(`<div id="pay" data-svc="${checkout.id}"></div>`));
    expect((await warning).text()).toContain("not among the seller's 1 allowlisted origin");
    const frame = await frameOf(page, "#pay");
    expect(await frame.title().catch(() => "")).not.toContain("Not for strangers");
    expect(await frame.locator("section[data-part=price]").count()).toBe(0);
    expect(await page.getAttribute("#pay", "data-svc-ready")).toBeNull();
    await page.close();
  });

  it('data-svc-mode="button" renders a Buy link to the face, with no allowlist at all', async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { title: "Buy by link" });
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(
      site.page(`<div id="live" data-svc="${checkout.id}" data-svc-mode="button" data-svc-label="Get the forecast" data-svc-price="0.10"></div>
<div id="test" data-svc="${checkout.id}" data-svc-mode="button" data-svc-test="true"></div>
<div id="bad" data-svc="${checkout.id}" data-svc-mode="button" data-svc-label="<img src=x onerror=alert(1)>"></div>`),
    );
    const live = page.locator("#live a");
    await live.waitFor();
    expect(await live.getAttribute("href")).toBe(`${baseUrl()}/c/${checkout.id}`);
    expect(await live.getAttribute("target")).toBe("_blank");
    expect(await live.textContent()).toBe("Get the forecast · $0.10");
    expect(await page.locator("#test a").getAttribute("href")).toBe(`${baseUrl()}/c/${checkout.id}/test`);
    expect(await page.locator("#test a").textContent()).toBe("Buy");
    // Attribute text is text, never markup.
    expect(await page.locator("#bad a").textContent()).toBe("<img src=x onerror=alert(1)>");
    expect(await page.locator("#bad img").count()).toBe(0);
    expect(await page.locator("iframe").count()).toBe(0);
    const [opened] = await Promise.all([context.waitForEvent("page"), live.click()]);
    await opened.waitForLoadState();
    expect(await opened.title()).toContain("Buy by link");
    await context.close();
  });

  it("wallet_button false: the framed page shows no wallet buttons, only a link to buy on the checkout page", async () => {
    const { checkout } = await sellerWith([site.origin], { title: "Read-only product" });
    const context = await newContext(browser);
    await installEvmWallet(context, privateKeyToAccount(generatePrivateKey()), { name: "Test Wallet" });
    const page = await context.newPage();
    await page.goto(site.page(`<div id="pay" data-svc="${checkout.id}"></div>`));
    await eventsOf(page, "svc:ready", 1);
    const frame = await frameOf(page, "#pay");
    const link = frame.locator("#svc-open");
    expect(await link.isVisible()).toBe(true);
    expect(await link.textContent()).toBe("Buy on the checkout page");
    expect(await link.getAttribute("href")).toBe(checkout.url);
    expect(await frame.locator("#svc-wallets").isVisible()).toBe(false);
    expect(await frame.locator("button.svc-wallet").count()).toBe(0);
    await context.close();
  });

  it("theme, accent, radius and flat format reach the framed page; the accent's text stays readable", async () => {
    const { checkout } = await sellerWith([site.origin], { title: "Styled", wallet_button: true });
    const context = await newContext(browser);
    await installEvmWallet(context, privateKeyToAccount(generatePrivateKey()), { name: "Test Wallet" });
    const page = await context.newPage();
    await page.goto(
      site.page(`<div id="dark" data-svc="${checkout.id}" data-svc-theme="dark" data-svc-accent="#FFCC00" data-svc-radius="4" data-svc-format="flat" data-svc-font="system" data-svc-height="700"></div>
<div id="ignored" data-svc="${checkout.id}" data-svc-theme="neon" data-svc-accent="red" data-svc-radius="99"></div>`),
    );
    await eventsOf(page, "svc:ready", 2);
    const frame = await frameOf(page, "#dark");
    expect(new URL(frame.url()).hash).toBe(`#svc=1&host=${encodeURIComponent(site.origin)}&theme=dark&accent=ffcc00&radius=4&font=system&format=flat`);
    const button = frame.locator("button.svc-wallet").first();
    await button.waitFor();
    const look = await button.evaluate((b) => {
      const s = getComputedStyle(b);
      return { background: s.backgroundColor, color: s.color, radius: s.borderTopLeftRadius };
    });
    expect(look).toEqual({ background: "rgb(255, 204, 0)", color: "rgb(0, 0, 0)", radius: "4px" });
    expect(await frame.evaluate(() => [document.documentElement.dataset.theme, getComputedStyle(document.body).backgroundColor])).toEqual([
      "dark",
      "rgb(11, 18, 32)",
    ]);
    expect(await frame.locator("section[data-part=price]").evaluate((s) => getComputedStyle(s).borderTopWidth)).toBe("0px");
    // A fixed height stays as set.
    expect(await page.$eval("#dark iframe", (f) => (f as unknown as StyledElement).style.height)).toBe("700px");
    // Bad values are ignored: the page keeps its own look.
    const plain = await frameOf(page, "#ignored");
    expect(new URL(plain.url()).hash).toBe(`#svc=1&host=${encodeURIComponent(site.origin)}`);
    expect(await plain.evaluate(() => document.documentElement.dataset.theme ?? null)).toBeNull();
    await context.close();
  });

  it("the framed page takes the embed options only from an allowlisted host that frames it", async () => {
    // Both sites are allowlisted; the page is framed by the first.
    const { checkout } = await sellerWith([site.origin, stranger.origin], { title: "Strict host" });
    const fragment = (host: string) => `#svc=1&host=${encodeURIComponent(host)}&theme=dark&part=price`;
    const page = await browser.newPage();
    // Frames written by hand (no embed script): naming the framing page's origin, another allowlisted origin, and one never allowlisted.
    await page.goto(
      site.page(`<iframe id="right" title="right" src="${checkout.url}${fragment(site.origin)}"></iframe>
<iframe id="other" title="other" src="${checkout.url}${fragment(stranger.origin)}"></iframe>
<iframe id="unknown" title="unknown" src="${checkout.url}${fragment("https://shop.example")}"></iframe>`),
    );
    const optionsOf = async (frame: Frame) => {
      // pay.js marks the root with "js" in the same task in which it connects to the host.
      await frame.locator("html.js").waitFor({ state: "attached" });
      return frame.evaluate(() => ({ ...document.documentElement.dataset }));
    };
    expect(await optionsOf(await frameOf(page, "body", "#right"))).toEqual({ embedded: "true", theme: "dark", part: "price" });
    expect(await optionsOf(await frameOf(page, "body", "#other"))).toEqual({});
    expect(await optionsOf(await frameOf(page, "body", "#unknown"))).toEqual({});
    // Not framed at all: the fragment is ignored.
    await page.goto(`${checkout.url}${fragment(site.origin)}`);
    expect(await optionsOf(page.mainFrame())).toEqual({});
    await page.close();
  });

  it("a data-svc-receipt mount frames the receipt", async () => {
    const { checkout } = await sellerWith([site.origin], { title: "Receipted" });
    const receiptId = (await payRehearsal(checkout.id)).body.receipt.id as string;
    const page = await browser.newPage();
    await page.goto(site.page(`<div id="receipt" data-svc-receipt="${receiptId}"></div>`));
    const frame = await frameOf(page, "#receipt");
    expect(new URL(frame.url()).pathname).toBe(`/r/${receiptId}`);
    await frame.locator("h1").waitFor();
    expect(await frame.title()).toBe(`Receipt ${receiptId}`);
    expect(await page.getAttribute("#receipt iframe", "title")).toBe("Receipt");
    await page.close();
  });

  it("a gated article (data-svc-content) is paid in the frame: the mount opens and the frame shows the article; a held pass opens it directly", async () => {
    const { checkout: article } = await sellerWith([site.origin], {
      title: "The lighthouse",
      price_usd: "0.25",
      payload: ARTICLE,
      reusable: true,
      wallet_button: true,
      content: { author: "A. Writer", teaser: "A keeper, a storm, a missing ship." },
    });
    expect(article.id).toMatch(/^cnt_/);
    const context = await newContext(browser);
    await installEvmWallet(context, privateKeyToAccount(generatePrivateKey()), { name: "Test Wallet", chainId: 84532 });
    const page = await context.newPage();
    await page.goto(
      site.page(`<div id="story" data-svc="${article.id}" data-svc-content="true" data-svc-test="true" data-svc-price="0.25" data-svc-kind="story"
  data-svc-blurb="Read the whole story." data-svc-media="/teaser.svg" data-svc-blur="6"></div>`),
    );
    await eventsOf(page, "svc:ready", 1);
    const mount = page.locator("#story");
    expect(await mount.getAttribute("data-svc-open")).toBeNull();
    expect(await mount.locator(".svc-embed-blurb").textContent()).toBe("Read the whole story.");
    expect(await mount.locator(".svc-embed-price").textContent()).toBe("Unlock the story: $0.25");
    const teaser = mount.locator("img.svc-embed-media");
    expect(await teaser.getAttribute("src")).toBe(`${site.origin}/teaser.svg`);
    expect(await teaser.evaluate((i) => (i as unknown as StyledElement).style.filter)).toBe("blur(6px)");
    const frame = await frameOf(page, "#story");
    expect(new URL(frame.url()).pathname).toBe(`/x/${article.id}/test`);

    await frame.getByRole("button", { name: /Pay with Test Wallet/ }).click();
    const [paid] = await eventsOf(page, "svc:paid", 1);
    expect(paid!.detail).toMatchObject({ checkout_id: article.id, test_mode: true, grant: expect.any(String) });
    expect(await mount.getAttribute("data-svc-open")).toBe("true");
    expect(await mount.getAttribute("data-svc-paid")).toBe("true");
    expect(await teaser.evaluate((i) => (i as unknown as StyledElement).style.filter)).toBe("none");
    // The frame went on to the article, opened with the pass the payment answered.
    const opened = await frameOf(page, "#story");
    await opened.locator(".c402-paid").waitFor();
    expect(await opened.locator(".c402-paid").textContent()).toContain("The lighthouse keeper counted the ships");

    // A reader who holds the pass: the frame opens the article at once.
    const grant = paid!.detail.grant as string;
    const again = await context.newPage();
    await again.goto(site.page(`<div id="story" data-svc="${article.id}" data-svc-content="true" data-svc-test="true" data-svc-grant="${grant}"></div>`));
    expect(await again.getAttribute("#story", "data-svc-open")).toBe("true");
    const direct = await frameOf(again, "#story");
    await direct.locator(".c402-paid").waitFor();
    expect(new URL(direct.url()).searchParams.get("grant")).toBe(grant);
    expect(await direct.locator(".c402-paid").textContent()).toContain("The lighthouse keeper counted the ships");
    await context.close();
  });

  it("GET /embed/check tells a seller why an embed shows or stays blank (CORS *); bad input answers 422, an unknown checkout 404", async () => {
    const { checkout } = await sellerWith([site.origin], { wallet_button: true });
    const check = (query: string) => call("GET", `/embed/check?${query}`);
    const allowed = await check(`checkout_id=${checkout.id}&origin=${encodeURIComponent(site.origin)}`);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("*");
    expect(allowed.body).toEqual({
      object: "embed_check",
      checkout_id: checkout.id,
      origin: site.origin,
      status: "open",
      framing_allowed: true,
      origin_allowable: true,
      allowed_origins_count: 1,
      wallet_button: true,
      button_mode: true,
      face_url: checkout.url,
      message: "This origin may frame the checkout, and buyers can pay inside the frame.",
    });

    const refused = await check(`checkout_id=${checkout.id}&origin=${encodeURIComponent(stranger.origin)}`);
    expect(refused.status).toBe(200);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    expect(refused.body).toMatchObject({
      framing_allowed: false,
      origin_allowable: true,
      allowed_origins_count: 1,
      message: expect.stringContaining("PUT /v1/account/embed"),
    });
    const plainHttp = await check(`checkout_id=${checkout.id}&origin=${encodeURIComponent("http://shop.example")}`);
    expect(plainHttp.body).toMatchObject({ framing_allowed: false, origin_allowable: false });
    const noList = await newCheckout((await newSeller()).key);
    expect((await check(`checkout_id=${noList.id}&origin=https%3A%2F%2Fshop.example`)).body).toMatchObject({
      framing_allowed: false,
      allowed_origins_count: 0,
      wallet_button: false,
    });

    for (const [query, field] of [
      [`origin=${encodeURIComponent(site.origin)}`, "checkout_id"],
      [`checkout_id=${checkout.id}`, "origin"],
      [`checkout_id=pay_${"a".repeat(24)}&origin=${encodeURIComponent(site.origin)}`, "checkout_id"],
      [`checkout_id=${checkout.id}&origin=shop.example`, "origin"],
      [`checkout_id=${checkout.id}&origin=${encodeURIComponent("https://shop.example/embed")}`, "origin"],
      [`checkout_id=${checkout.id}&checkout_id=${checkout.id}&origin=${encodeURIComponent(site.origin)}`, "checkout_id"],
    ] as const) {
      const r = await check(query);
      expect({ query, status: r.status, fields: r.body.errors?.map((e: { field: string }) => e.field) }).toEqual({ query, status: 422, fields: [field] });
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    const unknown = await check(`checkout_id=chk_${"a".repeat(24)}&origin=${encodeURIComponent(site.origin)}`);
    expect(unknown.status).toBe(404);
  });

  it.each(["light", "dark"] as const)("axe finds no WCAG 2.1 A/AA violation in the embed (%s)", async (scheme) => {
    const { checkout } = await sellerWith([site.origin], { title: "Accessible", wallet_button: true });
    const context = await newContext(browser, { colorScheme: scheme });
    await installEvmWallet(context, privateKeyToAccount(generatePrivateKey()), { name: "Test Wallet" });
    const page = await context.newPage();
    // The page's own look (theme auto), a light accent on it, and a dark accent on the dark theme (links fall back to the theme's).
    await page.goto(
      site.page(`<div id="auto" data-svc="${checkout.id}"></div>
<div id="yellow" data-svc="${checkout.id}" data-svc-accent="#ffcc00"></div>
<div id="navy" data-svc="${checkout.id}" data-svc-theme="${scheme}" data-svc-accent="#1e1b4b" data-svc-part="wallet"></div>`),
    );
    await eventsOf(page, "svc:ready", 3);
    for (const id of ["auto", "yellow", "navy"]) await (await frameOf(page, `#${id}`)).locator("button.svc-wallet").first().waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await context.close();
  });
});
