import { randomBytes, randomFillSync } from "node:crypto";

/**
 * Resource id prefixes. The first six come from the spec; the rest are ours.
 * Ids are the prefix followed by 24 base62 characters (~143 bits of randomness),
 * so a receipt id is an unguessable capability.
 */
export const ID_PREFIX = {
  checkout: "chk_",
  escrowCheckout: "esc_",
  contentCheckout: "cnt_",
  payment: "pay_",
  webhook: "wh_",
  subject: "sub_",
  account: "acct_",
  apiKey: "key_",
  event: "evt_",
  walletChallenge: "wch_",
  session: "ses_",
  report: "rpt_",
  originKey: "okey_",
  package: "pkg_",
  /** One event to one webhook receiver: the webhook-id header every attempt carries (Standard Webhooks' msg_). */
  webhookDelivery: "msg_",
  /** A service Ed25519 key that signs webhook deliveries. */
  signingKey: "whk_",
  /** An OAuth client registered by dynamic registration (its public client_id). */
  oauthClient: "ocl_",
  /** What a user consented to for one OAuth client: every code and token of it hangs off the grant. */
  oauthGrant: "ogr_",
  /** An OAuth authorization request waiting for consent. */
  oauthRequest: "oaq_",
  /** A recurring series (ADR 20): minted by payments with period 0's payment; /schedule/{id} is the buyer's view. */
  schedule: "sch_",
  /** A custodial spending wallet (ADR 21): one active per account and chain. */
  spendingWallet: "swl_",
  /** One payment from a spending wallet: its budget reservation, then its outcome. */
  spend: "spd_",
} as const;

export type IdKind = keyof typeof ID_PREFIX;

/**
 * An id of one kind: a string at run time, a distinct type at compile time,
 * so a payment id cannot be passed where a checkout id is expected. Values
 * come from `newId`, or from `isId` once text from outside was checked.
 */
export type Id<K extends IdKind> = string & { readonly __idKind: K };

export type CheckoutId = Id<"checkout">;
export type EscrowCheckoutId = Id<"escrowCheckout">;
export type ContentCheckoutId = Id<"contentCheckout">;
export type PaymentId = Id<"payment">;
export type WebhookId = Id<"webhook">;
export type SubjectId = Id<"subject">;
export type AccountId = Id<"account">;
export type ApiKeyId = Id<"apiKey">;
export type EventId = Id<"event">;
export type WalletChallengeId = Id<"walletChallenge">;
export type SessionId = Id<"session">;
export type ReportId = Id<"report">;

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BODY_LENGTH = 24;

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * Cryptographically strong random bytes, drawn from a pool that the system's
 * generator refills 4 KiB at a time: one call into it per ~80 ids rather than
 * one per id (a paid request makes several), as node's own randomUUID keeps a
 * cache. A refill allocates a new pool, so bytes handed out are never
 * overwritten and never handed out twice.
 */
export function pooledRandomBytes(length: number): Buffer {
  if (length > POOL_BYTES) return randomBytes(length);
  if (poolOffset + length > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + length);
  poolOffset += length;
  return bytes;
}

/** Random base62 text of the given length, without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of pooledRandomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function newId<K extends IdKind>(kind: K): Id<K> {
  return (ID_PREFIX[kind] + randomBase62(BODY_LENGTH)) as Id<K>;
}

const ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{24}$/;

/** True when `value` is a well-formed id of the given kind. */
export function isId<K extends IdKind>(kind: K, value: string): value is Id<K> {
  return value.startsWith(ID_PREFIX[kind]) && ID_PATTERN.test(value);
}

/**
 * True when `value` is the id of anything sold by a checkout face: an
 * ordinary checkout (chk_, face /c/), a gated article (cnt_, face /x/) or an
 * escrow checkout (esc_, face /e/).
 * The faces themselves are separate namespaces and check the prefix of their own.
 */
export function isCheckoutId(value: string): boolean {
  return isId("checkout", value) || isId("contentCheckout", value) || isId("escrowCheckout", value);
}

/** True when `value` is a well-formed id of any kind (for example the item a list cursor names). */
export function isAnyId(value: string): boolean {
  return ID_PATTERN.test(value) && Object.values(ID_PREFIX).some((prefix) => value.startsWith(prefix));
}

/**
 * A handoff nonce: chosen by the buyer's waiting page (the QR's `h`), carried
 * by the paid request, then polled at /c/{id}/handoff/{nonce}. Spec limit.
 */
export const HANDOFF_NONCE = /^[A-Za-z0-9_-]{16,64}$/;

/**
 * A seller's public slug (spec, Seller profile). It never contains `_`, so a
 * slug is never mistaken for an id (`<prefix>_<24 base62>`): /schedule/{x}
 * tells a seller's catalogue from a series by that alone.
 */
export const SELLER_SLUG = /^[a-z0-9][a-z0-9-]{1,38}$/;

/** True when `value` has the shape of an id, of a kind known here or one to come (a series id). */
export function hasIdShape(value: string): boolean {
  return ID_PATTERN.test(value);
}
