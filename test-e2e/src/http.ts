import { decodeHeader } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

export const baseUrl = () => {
  const url = process.env.E2E_BASE_URL;
  if (!url) throw new Error("E2E_BASE_URL is not set (run through test-e2e/jest.config.js)");
  return url;
};

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function call(method: string, path: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { accept: "application/json", ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${baseUrl()}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body, text };
}

export function decoded(h: string | null): any {
  if (!h) throw new Error("header missing");
  return decodeHeader(h);
}

/** Signs in a fresh wallet and returns its key and address. */
export async function newSeller() {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: wallet.address, network: "eip155:8453" } });
  const signature = await wallet.signMessage({ message: challenge.body.message });
  const verified = await call("POST", "/auth/wallet/verify", { body: { message: challenge.body.message, signature } });
  return { wallet, key: verified.body.api_key.secret as string, accountId: verified.body.account.id as string, verified };
}

export async function newCheckout(key: string, body: Record<string, unknown> = {}) {
  const r = await call("POST", "/v1/checkouts", { key, body: { title: "Weather for Paris", price_usd: "0.10", payload: { temp_c: 21 }, ...body } });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body;
}
