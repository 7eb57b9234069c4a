import type { Browser } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { accessibilityViolations, installEvmWallet, launchBrowser, newContext } from "../src/browser";
import { devchainWallets, type DevchainWallets } from "../src/devchain";
import { baseUrl, call, newCheckout, newSeller } from "../src/http";

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
});
