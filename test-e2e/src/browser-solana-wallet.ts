import { getAddressEncoder, type KeyPairSigner } from "@solana/kit";
import type { BrowserContext } from "playwright-core";
import { signPrepared } from "./solana";

/** What the mock Solana wallet was asked, in order (feature names), and how many transactions it signed. */
export interface MockSolanaWalletLog {
  methods: string[];
  signed: number;
}

/** The chain the mock wallet is on unless told otherwise: the local devnet presents itself as Solana devnet. */
const DEVNET_CHAIN = "solana:devnet";

/** A call from the page's wallet to Node, through the exposed binding. */
type WalletCall = { method: "standard:connect" } | { method: "solana:signTransaction"; address: string; chain?: string; transaction: string };

/**
 * A mock Wallet-Standard Solana wallet in every page and frame of `context`:
 * an init script registers a wallet (standard:connect, standard:events,
 * solana:signTransaction on solana:devnet) following the standard's
 * register-wallet / app-ready handshake, and its calls cross to Node through
 * an exposed binding, where the signer's key signs the buyer's slot only
 * (as a real wallet's signTransaction does). The key never enters the page.
 * `decline` makes it refuse to sign, as wallets do: a WalletSignTransactionError;
 * `chains` puts it on other chains (a page must not offer it for a network it is not on).
 */
export async function installSolanaWallet(
  context: BrowserContext,
  signer: KeyPairSigner,
  opts: { name?: string; decline?: boolean; chains?: string[] } = {},
): Promise<MockSolanaWalletLog> {
  const log: MockSolanaWalletLog = { methods: [], signed: 0 };
  const chains = opts.chains ?? [DEVNET_CHAIN];
  await context.exposeBinding("__c402MockSolanaWallet", async (_source, call: WalletCall) => {
    log.methods.push(call.method);
    switch (call.method) {
      case "standard:connect":
        return { result: null };
      case "solana:signTransaction": {
        if (opts.decline) return { error: { name: "WalletSignTransactionError", message: "User rejected the request." } };
        if (call.address !== signer.address) return { error: { name: "WalletAccountError", message: `not this wallet's account: ${call.address}` } };
        if (call.chain !== undefined && !chains.includes(call.chain))
          return { error: { name: "WalletSignTransactionError", message: `the wallet is not on ${call.chain}` } };
        try {
          const signed = await signPrepared(call.transaction, signer);
          log.signed++;
          return { result: signed };
        } catch (err) {
          return { error: { name: "WalletSignTransactionError", message: `the wallet cannot sign this transaction: ${(err as Error).message}` } };
        }
      }
      default:
        return { error: { name: "WalletError", message: `the mock wallet does not support ${(call as { method: string }).method}` } };
    }
  });
  const publicKey = Array.from(getAddressEncoder().encode(signer.address));
  // Page code, as text: it runs in the browser, before the page's own scripts (and in every frame).
  await context.addInitScript({
    content: `(() => {
  const chains = ${JSON.stringify(chains)};
  const account = Object.freeze({
    address: ${JSON.stringify(signer.address)},
    publicKey: new Uint8Array(${JSON.stringify(publicKey)}),
    chains,
    features: ["solana:signTransaction"],
  });
  const ask = async (call) => {
    const answer = await window.__c402MockSolanaWallet(call);
    if (answer.error) throw Object.assign(new Error(answer.error.message), { name: answer.error.name });
    return answer.result;
  };
  const toBase64 = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
  const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const wallet = {
    version: "1.0.0",
    name: ${JSON.stringify(opts.name ?? "Mock Solana Wallet")},
    icon: "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxIDEiPjxyZWN0IHdpZHRoPSIxIiBoZWlnaHQ9IjEiIGZpbGw9IiM5OTQ1ZmYiLz48L3N2Zz4=",
    chains,
    accounts: [account],
    features: {
      "standard:connect": {
        version: "1.0.0",
        async connect() {
          await ask({ method: "standard:connect" });
          return { accounts: [account] };
        },
      },
      "standard:events": {
        version: "1.0.0",
        on() {
          return () => {};
        },
      },
      "solana:signTransaction": {
        version: "1.0.0",
        supportedTransactionVersions: ["legacy", 0],
        async signTransaction(...inputs) {
          const outputs = [];
          for (const input of inputs) {
            const signed = await ask({
              method: "solana:signTransaction",
              address: input.account.address,
              chain: input.chain,
              transaction: toBase64(input.transaction),
            });
            outputs.push({ signedTransaction: fromBase64(signed) });
          }
          return outputs;
        },
      },
    },
  };
  // The Wallet Standard's handshake: register now with an app already listening, or when the app says it is ready.
  const callback = (api) => api.register(wallet);
  window.dispatchEvent(new CustomEvent("wallet-standard:register-wallet", { detail: callback }));
  window.addEventListener("wallet-standard:app-ready", (event) => callback(event.detail));
})();`,
  });
  return log;
}
