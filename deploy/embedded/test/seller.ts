import { decodeHeader, encodeHeader, signExactEvmPayment, type PaymentRequired } from "@c402/x402";
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

/**
 * A new seller's checkout made from `checkout` (its create body), and a buyer's
 * payment for its rehearsal face, signed by a fresh wallet from the face's quote.
 */
export async function rehearsalSale(base: string, checkout: Record<string, unknown>) {
  const seller = await signIn(base);
  const auth = { authorization: `Bearer ${seller.api_key.secret}` };
  const created = await json(`${base}/v1/checkouts`, { method: "POST", headers: auth, body: JSON.stringify(checkout) });
  if (created.status !== 201) throw new Error(`checkout create answered ${created.status}: ${JSON.stringify(created.body)}`);
  const face = `${base}/c/${created.body.id}/test`;
  const quote = await fetch(face);
  const required = decodeHeader(quote.headers.get("payment-required") as string) as unknown as PaymentRequired;
  const payment = encodeHeader(await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0]!));
  return { auth, face, payment };
}
