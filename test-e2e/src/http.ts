import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { decodeHeader, encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";

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

/** Signs an existing seller's wallet in again and answers the session it opens (a later sign-in also shows a fresh key, unused here). */
export async function walletSession(wallet: PrivateKeyAccount): Promise<string> {
  const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: wallet.address, network: "eip155:8453" } });
  const signature = await wallet.signMessage({ message: challenge.body.message });
  const verified = await call("POST", "/auth/wallet/verify", { body: { message: challenge.body.message, signature } });
  if (verified.status !== 200) throw new Error(`sign-in again failed: ${verified.status} ${verified.text}`);
  return verified.body.session.token as string;
}

/** A loopback address other than 127.0.0.1, so per-address limits see a client of its own. */
export function otherLoopbackAddress(): string {
  const octet = () => 2 + Math.floor(Math.random() * 250);
  return `127.${octet()}.${octet()}.${octet()}`;
}

/** Pays a checkout's rehearsal face once, as a fresh buyer (simulated: nothing moves); answers the paid reply (its receipt in `body.receipt`). */
export async function payRehearsal(checkoutId: string): Promise<Reply> {
  // A gated article (cnt_) is sold at /x/, everything else at /c/.
  const face = `/${checkoutId.startsWith("cnt_") ? "x" : "c"}/${checkoutId}/test`;
  const unpaid = await call("GET", face);
  const required = decoded(unpaid.headers.get("payment-required"));
  const payment = await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0] as PaymentRequirements, {
    resourceUrl: required.resource.url,
  });
  const paid = await call("GET", face, { headers: { "PAYMENT-SIGNATURE": encodeHeader(payment) } });
  if (paid.status !== 200) throw new Error(`rehearsal payment answered ${paid.status}: ${paid.text}`);
  return paid;
}

export async function newCheckout(key: string, body: Record<string, unknown> = {}) {
  const r = await call("POST", "/v1/checkouts", { key, body: { title: "Weather for Paris", price_usd: "0.10", payload: { temp_c: 21 }, ...body } });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body;
}

/**
 * `call` sent from another loopback address (127.0.0.2 and up): per-address
 * limits (failed authentications, the facilitator) count each address apart,
 * so a test that floods one of them leaves the rest of the suite unlimited.
 */
export function callFrom(
  sourceAddress: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const target = new URL(`${baseUrl()}${path}`);
  const headers: Record<string, string> = { accept: "application/json", ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const payload = opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
  if (payload !== undefined) headers["content-type"] ??= "application/json";
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method, headers, localAddress: sourceAddress },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
          }
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body, text });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** Writes `request` as it is straight to a socket of the target (what fetch would refuse to send); resolves with whatever came back before close. */
export function rawRequest(request: string): Promise<string> {
  const target = new URL(baseUrl());
  return new Promise((resolve) => {
    const socket = connect(Number(target.port), target.hostname);
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("utf8")));
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(answer));
    socket.write(request);
  });
}
