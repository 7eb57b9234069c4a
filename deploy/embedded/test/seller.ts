import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/** A JSON request to the system under test, its status, headers and parsed body. */
export async function json(url: string, init: RequestInit = {}) {
  const res = await fetch(url, { ...init, headers: { accept: "application/json", "content-type": "application/json", ...(init.headers ?? {}) } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** Signs a new seller in with a fresh wallet: its API key and account. */
export async function signIn(base: string) {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const c = await json(`${base}/auth/wallet/challenge`, { method: "POST", body: JSON.stringify({ address: wallet.address, network: "eip155:8453" }) });
  const v = await json(`${base}/auth/wallet/verify`, {
    method: "POST",
    body: JSON.stringify({ message: c.body.message, signature: await wallet.signMessage({ message: c.body.message }) }),
  });
  return v.body as { api_key: { secret: string }; account: { id: string } };
}
