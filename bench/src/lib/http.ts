import { decodeHeader, type PaymentRequired } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/** What the benchmarks send and read over HTTP to the system under test. */

export const JSON_ACCEPT = { accept: "application/json" };

/** One request; the body is parsed when it is JSON. */
export async function call(url: string, init: { method?: string; key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...JSON_ACCEPT, ...(init.headers ?? {}) };
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, { method: init.method ?? "GET", headers, ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Signs a seller in with a fresh wallet (SIWE): its address and full-scope API key. */
export async function signIn(baseUrl: string) {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const challenge = await call(`${baseUrl}/auth/wallet/challenge`, { method: "POST", body: { address: wallet.address, network: "eip155:8453" } });
  if (challenge.status !== 200 && challenge.status !== 201) throw new Error(`challenge: ${challenge.status} ${challenge.text}`);
  const signature = await wallet.signMessage({ message: challenge.body.message });
  const verified = await call(`${baseUrl}/auth/wallet/verify`, { method: "POST", body: { message: challenge.body.message, signature } });
  const key = verified.body?.api_key?.secret as string | undefined;
  if (!key) throw new Error(`verify: ${verified.status} ${verified.text}`);
  return { seller: wallet.address, key };
}

/** The decoded PAYMENT-REQUIRED of an unpaid GET, which must be a 402. */
export async function paymentRequired(url: string): Promise<PaymentRequired> {
  const r = await call(url);
  const header = r.headers.get("payment-required");
  if (r.status !== 402 || !header) throw new Error(`GET ${url}: expected 402 with PAYMENT-REQUIRED, got ${r.status} ${r.text.slice(0, 300)}`);
  return decodeHeader(header) as unknown as PaymentRequired;
}

/** Creates a checkout with the seller's key; `test_mode: false` arms it, without it the checkout only rehearses. Its id. */
export async function createCheckout(baseUrl: string, key: string, body: Record<string, unknown>): Promise<string> {
  const created = await call(`${baseUrl}/v1/checkouts`, { method: "POST", key, body });
  if (created.status !== 201) throw new Error(`create checkout "${String(body.title)}": ${created.status} ${created.text}`);
  return created.body.id as string;
}
