import type { Browser } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { accessibilityViolations, installEvmWallet, launchBrowser, newContext } from "../src/browser";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { newEscrowCheckout } from "../src/escrow";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";

/** The fee wallet of the devchain deployment (its last demo account): the protocol fee lands there. */
const FEE_WALLET = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720";

/**
 * The pay page in a real Chromium: a buyer with a browser wallet (a mock
 * EIP-6963 provider whose key stays in Node) pays a face from the page and
 * sees the goods and the receipt.
 */
describe("pay page in a browser", () => {
  let browser: Browser;
  let chain: DevchainWallets;

  beforeAll(async () => {
    browser = await launchBrowser();
    chain = await devchainWallets(1);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("a browser wallet pays the live face on the devchain: the page shows the goods and the receipt; balances change exactly", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { title: "Live weather", price_usd: "0.10", payload: { temp_c: 23 }, test_mode: false });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await chain.fund(buyer.address, 1_000_000n);
    const before = { buyer: await chain.balance(buyer.address), seller: await chain.balance(seller.wallet.address), fee: await chain.balance(FEE_WALLET) };

    const context = await newContext(browser);
    const wallet = await installEvmWallet(context, buyer, { name: "Test Wallet", chainId: 8453 });
    const page = await context.newPage();
    const response = await page.goto(`${baseUrl()}/c/${checkout.id}`);
    expect(response?.status()).toBe(402);
    await page.getByRole("button", { name: /Pay with Test Wallet on Base Sepolia/ }).click();
    await page.locator("#svc-result").waitFor({ state: "visible", timeout: 30_000 });
    expect(await page.locator("#svc-result-heading").textContent()).toBe("Paid");
    expect(JSON.parse((await page.locator("#svc-goods").textContent()) ?? "null")).toEqual({ temp_c: 23 });
    const receiptLink = page.locator("#svc-receipt");
    const receiptUrl = await receiptLink.getAttribute("href");
    expect(receiptUrl).toMatch(new RegExp(`^${baseUrl()}/r/pay_`));
    // The wallet was moved to the checkout's chain before it signed, and signed exactly one authorization.
    expect(wallet.methods).toEqual(expect.arrayContaining(["eth_requestAccounts", "wallet_switchEthereumChain", "eth_signTypedData_v4"]));
    expect(wallet.signed).toHaveLength(1);

    const receipt = (await call("GET", new URL(receiptUrl as string).pathname)).body;
    expect(receipt).toMatchObject({ test_mode: false, network: "eip155:84532", payer: buyer.address, total: 110500 });
    expect(await chain.balance(buyer.address)).toBe(before.buyer - 110_500n);
    expect(await chain.balance(seller.wallet.address)).toBe(before.seller + 100_000n);
    expect(await chain.balance(FEE_WALLET)).toBe(before.fee + 10_500n);
    expect(await accessibilityViolations(page)).toEqual([]);
    await context.close();
  });

  it("the rehearsal face pays the same way, says it moves no money, and nothing moves on-chain", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { title: "Rehearsed weather", payload: "sunny" });
    const buyer = privateKeyToAccount(generatePrivateKey());
    const context = await newContext(browser);
    await installEvmWallet(context, buyer, { name: "Test Wallet" });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/c/${checkout.id}/test`);
    await expect(page.getByRole("note").textContent()).resolves.toMatch(/Rehearsal: this page settles without real money/);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole("button", { name: /Pay with Test Wallet on Base Sepolia/ }).click();
    await page.locator("#svc-result").waitFor({ state: "visible", timeout: 30_000 });
    expect(await page.locator("#svc-result-heading").textContent()).toBe("Paid (rehearsal: no real money moved)");
    expect(await page.locator("#svc-goods").textContent()).toBe("sunny");
    const receipt = (await call("GET", new URL((await page.locator("#svc-receipt").getAttribute("href")) as string).pathname)).body;
    expect(receipt).toMatchObject({ test_mode: true, payer: buyer.address });
    expect(await chain.balance(buyer.address)).toBe(0n);
    await context.close();
  });

  it("a buyer who declines in the wallet is told so, and nothing is paid", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key);
    const context = await newContext(browser);
    const wallet = await installEvmWallet(context, privateKeyToAccount(generatePrivateKey()), { name: "Test Wallet", decline: true });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/c/${checkout.id}/test`);
    await page.getByRole("button", { name: /Pay with Test Wallet/ }).click();
    await page.getByRole("status").filter({ hasText: "declined" }).waitFor();
    expect(await page.getByRole("status").textContent()).toBe("You declined in your wallet; nothing was paid.");
    expect(await page.locator("#svc-result").isHidden()).toBe(true);
    expect(wallet.signed).toHaveLength(0);
    expect((await call("GET", "/v1/receipts?test_mode=true", { key: seller.key })).body.receipts).toEqual([]);
    await context.close();
  });

  it("without JavaScript the page still shows the offer, the price with the fee, the recipient, a QR code and the agent's instructions", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { title: "No-script weather", description: "Works without script" });
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/c/${checkout.id}`);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("No-script weather");
    expect(await page.locator(".svc-total").textContent()).toMatch(/^0\.110500 USDC \(fee included/);
    expect(await page.locator(".svc-breakdown").textContent()).toBe("0.100000 USD to the seller + 0.010500 USD fee");
    const required = decoded((await call("GET", `/c/${checkout.id}`)).headers.get("payment-required"));
    expect(await page.locator(".svc-recipients").textContent()).toContain(required.accepts[0].payTo);
    expect(await page.getByRole("img", { name: /QR code/ }).isVisible()).toBe(true);
    expect(await page.locator("[data-part=agent]").textContent()).toContain(`Pay with an x402 client at ${baseUrl()}/c/${checkout.id}`);
    expect(await page.getByText("Paying from this page needs JavaScript").isVisible()).toBe(true);
    await context.close();
  });

  it("a desktop without a wallet gets the QR handoff: a phone pays the code's URL and the page shows the payment", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { payload: { handed: true } });
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/c/${checkout.id}/test`);
    await page.getByText("No browser wallet found on this device").waitFor();
    expect(await page.locator("#svc-mobile").isHidden()).toBe(true);
    const data = JSON.parse((await page.locator("#svc-data").textContent()) as string) as { handoff: { nonce: string } };

    // The phone: scans the code (the face URL with the page's nonce) and pays it with its own x402 client.
    const phoneUrl = `/c/${checkout.id}/test?h=${data.handoff.nonce}`;
    const required = decoded((await call("GET", phoneUrl)).headers.get("payment-required"));
    const payment = await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0] as PaymentRequirements, {
      resourceUrl: required.resource.url,
    });
    const paid = await call("GET", phoneUrl, { headers: { "PAYMENT-SIGNATURE": encodeHeader(payment) } });
    expect(paid.status).toBe(200);

    await page.locator("#svc-result").waitFor({ state: "visible", timeout: 30_000 });
    expect(await page.locator("#svc-receipt").getAttribute("href")).toBe(paid.body.receipt_url);
    await context.close();
  });

  it("a phone without an injected wallet gets open-in-wallet links", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key);
    const context = await newContext(browser, { mobile: true });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/c/${checkout.id}`);
    await page.locator("#svc-mobile").waitFor({ state: "visible" });
    const hrefs = await page.locator("#svc-mobile a").evaluateAll((links) => links.map((a) => a.getAttribute("href")));
    expect(hrefs).toContain(`https://metamask.app.link/dapp/${baseUrl().replace("http://", "")}/c/${checkout.id}`);
    expect(await accessibilityViolations(page)).toEqual([]);
    await context.close();
  });

  it("the article wall pays from the wallet and opens the article with its pass", async () => {
    const seller = await newSeller();
    const article = await newCheckout(seller.key, {
      title: "The manor mystery",
      price_usd: "0.25",
      payload: "<p>It was the butler, in the library.</p>",
      reusable: true,
      content: { teaser: "Who killed the colonel?", author: "A. Writer" },
    });
    const context = await newContext(browser);
    await installEvmWallet(context, privateKeyToAccount(generatePrivateKey()), { name: "Test Wallet" });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/x/${article.id}/test`);
    expect(await page.locator(".c402-teaser").textContent()).toBe("Who killed the colonel?");
    expect(await page.content()).not.toContain("butler");
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole("button", { name: /Pay with Test Wallet/ }).click();
    await page.waitForURL(/\?grant=/, { timeout: 30_000 });
    expect(await page.locator("article.c402-paid").textContent()).toBe("It was the butler, in the library.");
    await context.close();
  });

  it("a browser gets the page and everything else the 402 JSON, with the same PAYMENT-REQUIRED", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key);
    const page = await call("GET", `/c/${checkout.id}`, { headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } });
    const agent = await call("GET", `/c/${checkout.id}`, { headers: { accept: "*/*" } });
    const json = await call("GET", `/c/${checkout.id}`);
    expect([page.status, agent.status, json.status]).toEqual([402, 402, 402]);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(agent.headers.get("content-type")).toMatch(/^application\/json/);
    expect(agent.body).toEqual(json.body);
    expect(decoded(page.headers.get("payment-required"))).toEqual(decoded(json.headers.get("payment-required")));
    expect(page.headers.get("cache-control")).toBe("no-store");
    const asset = await call("GET", (/<script src="([^"]+)"/.exec(page.text) as RegExpExecArray)[1] as string);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);
  });

  it("an escrow face takes the deposit from the wallet: the page says the payment is held and where to follow it", async () => {
    const seller = await newSeller();
    const created = { body: await newEscrowCheckout(seller.key) };
    const context = await newContext(browser);
    const wallet = await installEvmWallet(context, privateKeyToAccount(generatePrivateKey()), { name: "Test Wallet" });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/e/${created.body.id}/test`);
    expect(await page.locator(".svc-recipients").textContent()).toContain("the escrow contract");
    await page.getByRole("button", { name: /Pay with Test Wallet/ }).click();
    await page.locator("#svc-result").waitFor({ state: "visible", timeout: 30_000 });
    expect(await page.locator("#svc-result-heading").textContent()).toBe("Paid into escrow");
    expect((wallet.signed[0] as { primaryType: string }).primaryType).toBe("ReceiveWithAuthorization");
    const follow = await page.locator("#svc-receipt").getAttribute("href");
    expect(follow).toContain(`/e/${created.body.id}/status?payment_id=pay_`);
    expect((await call("GET", new URL(follow as string).pathname + new URL(follow as string).search)).status).toBe(200);
    await context.close();
  });

  it("a recurring series: the wallet signs period 0 and every held period, and the page shows the purchase", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { title: "Weekly weather", reusable: true, schedule_interval_days: 7, schedule_periods: 3 });
    const context = await newContext(browser);
    const wallet = await installEvmWallet(context, privateKeyToAccount(generatePrivateKey()), { name: "Test Wallet" });
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/c/${checkout.id}/test`);
    await page.getByRole("button", { name: /Pay with Test Wallet/ }).click();
    await page.locator("#svc-result").waitFor({ state: "visible", timeout: 30_000 });
    expect(wallet.signed).toHaveLength(3);
    const schedules = (await call("GET", `/v1/schedules?checkout_id=${checkout.id}`, { key: seller.key })).body.schedules;
    expect(schedules).toHaveLength(1);
    expect(schedules[0]).toMatchObject({ checkout_id: checkout.id, periods: 3 });
    await context.close();
  });
});
