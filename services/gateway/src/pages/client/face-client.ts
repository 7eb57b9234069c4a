import type { PayPageData } from "../page-data";

/** What /prepare answers (the fields the page uses). */
export interface Prepared {
  network: string;
  typed_data: TypedData | null;
  /** Solana: the transaction to sign (base64). */
  transaction?: string;
  payload_stub: { payload: Record<string, unknown> } & Record<string, unknown>;
  /** A series: one entry per held period, signed like period 0. */
  schedule?: { typed_data: TypedData; payload_stub: { payload: Record<string, unknown> } & Record<string, unknown> }[];
}

export interface TypedData {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** What the face answered a payment: the status and the JSON body. */
export interface PayAnswer {
  status: number;
  body: PaidBody;
}

export interface PaidBody {
  fulfillment?: { mode?: string; payload?: unknown; note?: string; content_type?: string | null; encoding?: string } | null;
  receipt?: { id: string; amount_usd?: string; network?: string; tx_hash?: string | null; test_mode?: boolean } | null;
  receipt_url?: string;
  payment_id?: string;
  test_mode?: boolean;
  status?: string;
  escrow?: { payment_id: string; status: string; status_url: string; note: string };
  grant?: string;
  schedule?: unknown;
}

/** An answer that is not what the buyer wanted, with the problem document's words. */
export class PageError extends Error {}

/** The face's /prepare and /pay, as the page calls them (same origin: the page's own service). */
export class FaceClient {
  constructor(private readonly data: PayPageData) {}

  /** The typed data (EVM) or transaction (Solana) `payer` signs to pay on `network`. */
  async prepare(payer: string, network: string): Promise<Prepared> {
    const params = Object.keys(this.data.params).length > 0 ? this.data.params : null;
    const res = await fetch(this.data.prepare_url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ payer, network, params }),
    });
    if (!res.ok) throw await problemOf(res);
    return (await res.json()) as Prepared;
  }

  /** Presents a signed payment (and a series' held periods): the goods and the receipt, or why not. */
  async present(payment: object, held: readonly object[] = []): Promise<PayAnswer> {
    const res = await fetch(this.data.pay_url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", "PAYMENT-SIGNATURE": base64Json(payment) },
      body: JSON.stringify(held.length > 0 ? { schedule: held } : {}),
    });
    if (res.status !== 200 && res.status !== 202) throw await problemOf(res);
    return { status: res.status, body: (await res.json()) as PaidBody };
  }
}

/** A problem document's title and message, as one sentence for the page. */
export async function problemOf(res: Response): Promise<PageError> {
  try {
    const p = (await res.json()) as { title?: string; detail?: { message?: string } | string };
    const message = typeof p.detail === "string" ? p.detail : p.detail?.message;
    return new PageError([p.title, message].filter(Boolean).join(": ") || `The service answered ${res.status}.`);
  } catch {
    return new PageError(`The service answered ${res.status}.`);
  }
}

/** JSON as base64 of its UTF-8 bytes (what PAYMENT-SIGNATURE carries). */
export function base64Json(value: unknown): string {
  return bytesToBase64(new TextEncoder().encode(JSON.stringify(value)));
}

export function bytesToBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

export function base64ToBytes(b64: string): Uint8Array {
  const s = atob(b64);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}
