import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { accessibilityViolations, launchBrowser, newContext } from "../src/browser";
import { installSolanaWallet } from "../src/browser-solana-wallet";
import { eventsOf, frameOf, sellerSite } from "../src/embed-site";
import { baseUrl, call, newCheckout, newSeller } from "../src/http";
import { SOLANA_DEVNET, SOLANA_ENABLED, solanaDevnet, type SolanaDevnetClient } from "../src/solana";

/** Without a Solana devnet (an embedded target started with SOLANA_ENABLED=false) there is nothing to pay with. */
const describeWithSolana = SOLANA_ENABLED ? describe : describe.skip;

/**
 * The pay page in a real Chromium with a Solana wallet: a mock
 * Wallet-Standard wallet (its key stays in Node) signs the buyer's slot of
 * the transaction the face prepared; the service co-signs as fee payer and
 * settles on the local devnet. One transfer of the price, no fee on Solana.
 */
describeWithSolana("pay page in a browser with a Solana wallet", () => {
  let browser: Browser;
  let devnet: SolanaDevnetClient;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    devnet = await solanaDevnet();
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A live checkout paying out to the seller's standing Solana wallet (its USDC account created, empty). */
  async function liveSolanaCheckout(extra: { embedOrigin?: string } = {}) {
    const seller = await newSeller();
    if (extra.embedOrigin) expect((await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: [extra.embedOrigin] } })).status).toBe(200);
    const payout = (await generateKeyPairSigner()).address as string;
    await devnet.setUsdc(payout, 0n);
    const put = await call("PUT", "/v1/account/wallets", { key: seller.key, body: { solana: payout } });
    expect(put.status).toBe(200);
    const checkout = await newCheckout(seller.key, {
      title: "Live Solana weather",
      price_usd: "0.10",
      payload: { temp_c: 23 },
      test_mode: false,
      wallet_button: true,
    });
    return { payout, checkout };
  }

  async function fundedBuyer(amount = 1_000_000n): Promise<KeyPairSigner> {
    const buyer = await generateKeyPairSigner();
    await devnet.setUsdc(buyer.address, amount);
    return buyer;
  }

  async function openWithWallet(checkoutId: string, buyer: KeyPairSigner, opts: { name: string; decline?: boolean; chains?: string[] }) {
    const context = await newContext(browser);
    contexts.push(context);
    const wallet = await installSolanaWallet(context, buyer, opts);
    const page = await context.newPage();
    const response = await page.goto(`${baseUrl()}/c/${checkoutId}`);
    expect(response?.status()).toBe(402);
    return { page, wallet };
  }

  const payButton = (page: Page, walletName: string) => page.getByRole("button", { name: new RegExp(`Pay with ${walletName} on Solana devnet`) });

  it("a Wallet-Standard wallet pays the live face on the devnet: the page shows the goods and the receipt; balances change exactly", async () => {
    const { payout, checkout } = await liveSolanaCheckout();
    const buyer = await fundedBuyer();
    const before = { buyer: await devnet.usdc(buyer.address), seller: await devnet.usdc(payout) };

    const { page, wallet } = await openWithWallet(checkout.id, buyer, { name: "Phantasm" });
    await payButton(page, "Phantasm").click();
    await page.locator("#svc-result").waitFor({ state: "visible", timeout: 30_000 });
    expect(await page.locator("#svc-result-heading").textContent()).toBe("Paid");
    expect(JSON.parse((await page.locator("#svc-goods").textContent()) ?? "null")).toEqual({ temp_c: 23 });
    const receiptUrl = await page.locator("#svc-receipt").getAttribute("href");
    expect(receiptUrl).toMatch(new RegExp(`^${baseUrl()}/r/pay_`));
    // The page connected, then had the wallet sign exactly one transaction.
    expect(wallet.methods).toEqual(["standard:connect", "solana:signTransaction"]);
    expect(wallet.signed).toBe(1);

    const receipt = await call("GET", new URL(receiptUrl as string).pathname);
    expect(receipt.status).toBe(200);
    expect(receipt.body).toMatchObject({
      test_mode: false,
      network: SOLANA_DEVNET,
      payer: buyer.address,
      pay_to: payout,
      provider_amount: 100_000,
      total: 100_000,
    });
    expect(await devnet.usdc(buyer.address)).toBe(before.buyer - BigInt(receipt.body.total));
    expect(await devnet.usdc(payout)).toBe(before.seller + BigInt(receipt.body.provider_amount));
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it("declining in the wallet says so on the page and nothing moves; the page offers the wallet accessibly", async () => {
    const { payout, checkout } = await liveSolanaCheckout();
    const buyer = await fundedBuyer();
    const before = { buyer: await devnet.usdc(buyer.address), seller: await devnet.usdc(payout) };

    const { page, wallet } = await openWithWallet(checkout.id, buyer, { name: "Phantasm", decline: true });
    const button = payButton(page, "Phantasm");
    await button.waitFor({ state: "visible" });
    expect(await accessibilityViolations(page)).toEqual([]);
    await button.click();
    const status = page.locator("#svc-status");
    // The status first says the page waits for the wallet; the refusal replaces it.
    await status.filter({ hasText: "declined" }).waitFor({ timeout: 30_000 });
    expect(await status.textContent()).toBe("You declined in your wallet; nothing was paid.");
    expect(await page.locator("#svc-result").isHidden()).toBe(true);
    expect(wallet.methods).toEqual(["standard:connect", "solana:signTransaction"]);
    expect(wallet.signed).toBe(0);

    expect(await devnet.usdc(buyer.address)).toBe(before.buyer);
    expect(await devnet.usdc(payout)).toBe(before.seller);
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it("a wallet on another Solana chain only is not offered for the devnet: the page says no wallet was found and never asks it", async () => {
    const { checkout } = await liveSolanaCheckout();
    const buyer = await fundedBuyer();
    const { page, wallet } = await openWithWallet(checkout.id, buyer, { name: "Mainnet Only", chains: ["solana:mainnet"] });
    // Shown once discovery is over with no wallet offered.
    await page.locator("#svc-no-wallet").waitFor({ state: "visible" });
    expect(await page.locator("#svc-wallets").getByRole("button").count()).toBe(0);
    expect(wallet.methods).toEqual([]);
  });

  it("inside an embed on an allowlisted site: the Solana wallet pays in the frame and the host hears svc:paid", async () => {
    const site = await sellerSite();
    try {
      const { payout, checkout } = await liveSolanaCheckout({ embedOrigin: site.origin });
      const buyer = await fundedBuyer();
      const before = { buyer: await devnet.usdc(buyer.address), seller: await devnet.usdc(payout) };
      const context = await newContext(browser);
      contexts.push(context);
      await installSolanaWallet(context, buyer, { name: "Phantasm" });
      const page = await context.newPage();
      await page.goto(site.page(`<div id="pay" data-svc="${checkout.id}"></div>`));
      const frame = await frameOf(page, "#pay");
      await frame.getByRole("button", { name: /Pay with Phantasm on Solana devnet/ }).click();
      const [paid] = await eventsOf(page, "svc:paid", 1);
      expect(paid).toMatchObject({
        mount: "pay",
        detail: { checkout_id: checkout.id, payment_id: expect.stringMatching(/^pay_/), network: SOLANA_DEVNET, test_mode: false },
      });
      expect(await page.getAttribute("#pay", "data-svc-paid")).toBe("true");
      const receipt = (await call("GET", `/r/${paid!.detail.payment_id}`)).body;
      expect(await devnet.usdc(buyer.address)).toBe(before.buyer - BigInt(receipt.total));
      expect(await devnet.usdc(payout)).toBe(before.seller + BigInt(receipt.provider_amount));
    } finally {
      await site.close();
    }
  });
});
