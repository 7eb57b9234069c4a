#!/usr/bin/env tsx
// Screenshots of the pages people see, for the docs: starts the service in
// embedded mode on loopback (as the e2e suite does), signs a seller in with a
// fixed demo key, creates one checkout, and photographs with Chromium
//   docs/screenshots/pay-page-light.png, pay-page-dark.png   the pay page, a (mock) browser wallet offered
//   docs/screenshots/embed-light.png, embed-dark.png         a seller's site embedding the checkout
// at 1000x800. Titles, prices and the seller's address are fixed; the
// checkout id (the QR code, the agent's URL) is new each run.
//
//   node_modules/.bin/tsx scripts/screenshots.ts
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import { privateKeyToAccount } from "viem/accounts";
import { installEvmWallet, launchBrowser } from "../test-e2e/src/browser";
import { startTarget } from "../test-e2e/src/target";

const OUT = resolve(__dirname, "../docs/screenshots");
const VIEWPORT = { width: 1000, height: 800 };
/** Anvil's well-known demo keys (never funded with anything real): the seller's and the buyer's wallets, so their addresses are the same each run. */
const SELLER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const BUYER_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";

type Scheme = "light" | "dark";

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const target = await startTarget("embedded");
  const site = await sellerSite();
  let browser: Browser | undefined;
  try {
    const api = client(target.baseUrl);
    const seller = privateKeyToAccount(SELLER_KEY);
    const challenge = await api("POST", "/auth/wallet/challenge", undefined, { address: seller.address, network: "eip155:8453" });
    const verified = await api("POST", "/auth/wallet/verify", undefined, {
      message: challenge.message,
      signature: await seller.signMessage({ message: challenge.message as string }),
    });
    const key = (verified.api_key as { secret: string }).secret;
    await api("PUT", "/v1/account/embed", key, { embed_origins: [site.origin] });
    const checkout = await api("POST", "/v1/checkouts", key, {
      title: "Paris weather, hourly",
      description: "Temperature, wind and rain for the next 24 hours, as JSON.",
      price_usd: "0.10",
      payload: { city: "Paris", temp_c: 21 },
      reusable: true,
      test_mode: false,
      wallet_button: true,
    });
    const id = checkout.id as string;

    browser = await launchBrowser();
    for (const scheme of ["light", "dark"] as const) {
      const context = await browser.newContext({ colorScheme: scheme, viewport: VIEWPORT });
      await installEvmWallet(context, privateKeyToAccount(BUYER_KEY), { name: "Demo Wallet" });
      const page = await context.newPage();
      await page.goto(`${target.baseUrl}/c/${id}`);
      await page.locator("button.svc-wallet").first().waitFor();
      await page.screenshot({ path: join(OUT, `pay-page-${scheme}.png`), animations: "disabled", caret: "hide" });

      await page.goto(site.page(scheme, target.baseUrl, id));
      const frame = page.frameLocator("#buy iframe");
      await frame.locator("button.svc-wallet").first().waitFor();
      // The frame has followed the page's height once the host set it from a resize event.
      await page.waitForFunction(() => (document.querySelector("#buy iframe") as HTMLIFrameElement | null)?.style.height !== "480px");
      await page.screenshot({ path: join(OUT, `embed-${scheme}.png`), animations: "disabled", caret: "hide" });
      await context.close();
    }
    process.stdout.write(`screenshots: written to ${OUT}\n`);
  } finally {
    await browser?.close();
    await site.close();
    await target.stop();
  }
}

/** JSON calls to the service; a failure stops the script with the answer. */
function client(baseUrl: string) {
  return async (method: string, path: string, key: string | undefined, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { accept: "application/json", "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
}

/** A seller's shop on loopback: a product page with the checkout embedded beside its description. */
async function sellerSite() {
  let html = "";
  const server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page(scheme: Scheme, serviceUrl: string, id: string) {
      const colors = scheme === "dark" ? { bg: "#111318", fg: "#e8e6e3", muted: "#a8a29e" } : { bg: "#faf7f2", fg: "#1c1917", muted: "#57534e" };
      html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Skyline Data · Paris weather</title>
<style>
body { margin: 0; background: ${colors.bg}; color: ${colors.fg}; font: 16px/1.5 Georgia, serif; }
header { padding: 1rem 2rem; border-bottom: 1px solid ${colors.muted}; font: 600 1.1rem system-ui, sans-serif; }
main { display: grid; grid-template-columns: 1fr 440px; gap: 2rem; padding: 2rem; }
p { color: ${colors.muted}; }
</style></head><body><header>Skyline Data</header><main>
<article><h1>Paris weather, hourly</h1><p>Hourly temperature, wind and rain for Paris, for the next 24 hours. One payment of $0.10 in USDC, no account: pay with your browser wallet, and the data shows at once.</p>
<p>Agents buy the same data over x402 from the checkout's URL.</p></article>
<div id="buy" data-svc="${id}" data-svc-part="pay" data-svc-theme="${scheme}" data-svc-accent="#0f766e" data-svc-radius="12"></div>
</main><script src="${serviceUrl}/static/embed.js"></script></body></html>`;
      return `${origin}/shop`;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

main().catch((err: unknown) => {
  process.stderr.write(`screenshots: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
