import { createHmac, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";

/**
 * How a delivery is signed (spec "Signatures", and Standard Webhooks where the
 * spec is silent). Every attempt is signed afresh at its own time `t`:
 *
 * - `X-Service-Ed25519: t=<t>,v1=<base64>[,v1=<base64>]`: Ed25519 over
 *   `{t}.{raw_body}` by each service key that signs now (two during a
 *   rotation's overlap, newest first), verified with GET /v1/webhooks/verification-key.
 * - `X-Service-Signature: t=<t>,v1=<hex>`: HMAC-SHA256 over `{t}.{raw_body}`,
 *   keyed with the endpoint's secret as text (the whole `whsec_…` string).
 * - `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`:
 *   Standard Webhooks, HMAC-SHA256 over `{id}.{t}.{raw_body}` keyed with the
 *   secret's decoded bytes (what the `standardwebhooks` libraries verify). The
 *   id is the delivery's: the same on every retry, so receivers deduplicate on it.
 */

/** Standard Webhooks' secret prefix; the rest is base64 of 32 random bytes. */
export const SECRET_PREFIX = "whsec_";

export function newEndpointSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

/** The key bytes Standard Webhooks signs with: the base64 after the prefix, decoded. */
function standardKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
}

export interface ServiceSigningKey {
  id: string;
  privateKey: KeyObject;
}

export interface SignedDelivery {
  /** The delivery id (msg_…). */
  id: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  body: string;
  secret: string;
  /** The service keys that sign now, newest first (at least one). */
  keys: readonly ServiceSigningKey[];
}

export const SIGNATURE_HEADERS = {
  ed25519: "x-service-ed25519",
  hmac: "x-service-signature",
  id: "webhook-id",
  timestamp: "webhook-timestamp",
  standard: "webhook-signature",
} as const;

export function signatureHeaders(d: SignedDelivery): Record<string, string> {
  if (d.keys.length === 0) throw new Error("webhooks: no signing key");
  const t = String(d.timestamp);
  const signed = Buffer.from(`${t}.${d.body}`, "utf8");
  const ed25519 = d.keys.map((k) => `v1=${sign(null, signed, k.privateKey).toString("base64")}`).join(",");
  return {
    [SIGNATURE_HEADERS.ed25519]: `t=${t},${ed25519}`,
    [SIGNATURE_HEADERS.hmac]: `t=${t},v1=${createHmac("sha256", d.secret).update(signed).digest("hex")}`,
    [SIGNATURE_HEADERS.id]: d.id,
    [SIGNATURE_HEADERS.timestamp]: t,
    [SIGNATURE_HEADERS.standard]: `v1,${createHmac("sha256", standardKeyBytes(d.secret)).update(`${d.id}.${t}.${d.body}`).digest("base64")}`,
  };
}

/** A fresh Ed25519 key pair: the raw 32-byte public key and the private key as PKCS#8 DER (sealed before it is stored). */
export function newSigningKeyPair(): { publicKey: Buffer; privateKeyDer: Buffer } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const spki = publicKey.export({ format: "der", type: "spki" });
  return { publicKey: spki.subarray(spki.length - 32), privateKeyDer: privateKey.export({ format: "der", type: "pkcs8" }) };
}
