import AxeBuilder from "@axe-core/playwright";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import type { PrivateKeyAccount } from "viem/accounts";

/**
 * The browser tests' Chromium (Debian's package, driven by playwright-core;
 * scripts/ensure-chromium.mjs installs it) and the wallets they inject.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
}

/** What a mock wallet was asked, in order (method names), and what it signed. */
export interface MockWalletLog {
  methods: string[];
  signed: unknown[];
}

/**
 * A mock EIP-6963 wallet in every page and frame of `context`: an init
 * script announces a provider whose `request` crosses to Node through an
 * exposed binding, where a viem local account answers and signs. The key
 * never enters the page. Like a real wallet it signs typed data only for its
 * current chain (wallet_switchEthereumChain moves it), and `decline` makes
 * it refuse to sign (EIP-1193 code 4001).
 */
export async function installEvmWallet(
  context: BrowserContext,
  account: PrivateKeyAccount,
  opts: { name?: string; chainId?: number; decline?: boolean } = {},
): Promise<MockWalletLog> {
  const log: MockWalletLog = { methods: [], signed: [] };
  let chainId = opts.chainId ?? 8453;
  await context.exposeBinding("__c402MockEvmWallet", async (_source, call: { method: string; params?: unknown[] }) => {
    log.methods.push(call.method);
    switch (call.method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return { result: [account.address] };
      case "eth_chainId":
        return { result: `0x${chainId.toString(16)}` };
      case "wallet_switchEthereumChain": {
        chainId = Number.parseInt(String((call.params?.[0] as { chainId: string }).chainId), 16);
        return { result: null };
      }
      case "eth_signTypedData_v4": {
        if (opts.decline) return { error: { code: 4001, message: "User rejected the request." } };
        const [from, json] = call.params as [string, string];
        if (from.toLowerCase() !== account.address.toLowerCase()) return { error: { code: 4100, message: "not this wallet's account" } };
        const typed = JSON.parse(json) as {
          domain: { chainId?: number | string };
          types: Record<string, unknown>;
          primaryType: string;
          message: Record<string, unknown>;
        };
        if (typed.domain.chainId !== undefined && Number(typed.domain.chainId) !== chainId) {
          return { error: { code: -32602, message: `typed data is for chain ${typed.domain.chainId}; the wallet is on ${chainId}` } };
        }
        const { EIP712Domain: _domain, ...types } = typed.types;
        log.signed.push(typed);
        return {
          result: await account.signTypedData({ domain: typed.domain, types, primaryType: typed.primaryType, message: typed.message } as Parameters<
            PrivateKeyAccount["signTypedData"]
          >[0]),
        };
      }
      default:
        return { error: { code: 4200, message: `the mock wallet does not support ${call.method}` } };
    }
  });
  // Page code, as text: it runs in the browser, before the page's own scripts (and in every frame).
  await context.addInitScript({
    content: `(() => {
  const provider = {
    async request(call) {
      const answer = await window.__c402MockEvmWallet(call);
      if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
      return answer.result;
    },
    on() {},
    removeListener() {},
  };
  const icon = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxIDEiPjxyZWN0IHdpZHRoPSIxIiBoZWlnaHQ9IjEiIGZpbGw9IiMxZDRlZDgiLz48L3N2Zz4=";
  const detail = Object.freeze({ info: { uuid: "4d1c4a52-0c3b-4f0e-9f58-2f3f3d0c4021", name: ${JSON.stringify(opts.name ?? "Mock Wallet")}, icon, rdns: "test.c402.mockwallet" }, provider });
  const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail }));
  window.addEventListener("eip6963:requestProvider", announce);
  announce();
})();`,
  });
  return log;
}

/** WCAG 2.1 A and AA violations axe finds on the page (and its same-origin frames), as `rule: target` lines for a readable failure. */
export async function accessibilityViolations(page: Page, include?: string): Promise<string[]> {
  let builder = new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]);
  if (include) builder = builder.include(include);
  const result = await builder.analyze();
  return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")} (${n.failureSummary?.split("\n")[1]?.trim() ?? v.help})`));
}

/** A fresh context (its own cookies and storage) with the options the pay pages' tests share. */
export function newContext(browser: Browser, opts: { colorScheme?: "light" | "dark"; mobile?: boolean } = {}): Promise<BrowserContext> {
  return browser.newContext({
    colorScheme: opts.colorScheme ?? "light",
    ...(opts.mobile ? { hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } } : { viewport: { width: 1100, height: 900 } }),
  });
}
