import { MAX_PRICE_ATOMIC, MoneyFormatError, parseUsd } from "@c402/money";
import { invalid, type FieldError } from "@c402/problems";
import { getAddress, isAddress } from "viem";

/**
 * Checkout creation rules. Choices the spec leaves open are documented in
 * docs/decisions.md: limits on text and payload sizes, maximum price, and that
 * an explicit `expires_in_minutes: null` means the 7-day default.
 */
export const CHECKOUT_LIMITS = {
  titleMax: 200,
  descriptionMax: 4_000,
  offerTextMax: 2_000,
  payloadMaxBytes: 256 * 1024,
  offerJsonMaxBytes: 32 * 1024,
  expiresInMinutesMax: 366 * 24 * 60,
  defaultLifetimeMinutes: 7 * 24 * 60,
};

export const OFFER_TEXT_FIELDS = ["freshness", "coverage", "source", "constraints"] as const;
export const OFFER_JSON_FIELDS = ["input_schema", "output_schema", "example_input", "example_output"] as const;

export interface CreateCheckoutInput {
  title: string;
  priceUsd: string;
  payTo?: string;
  description?: string;
  fulfillment?: string;
  payloadJson?: string;
  reusable?: boolean;
  testMode?: boolean;
  expiresInMinutes?: bigint;
  offer: Partial<Record<(typeof OFFER_TEXT_FIELDS)[number], string>> & Partial<Record<`${(typeof OFFER_JSON_FIELDS)[number]}_json`, string>>;
  createdWithLiveKey: boolean;
}

export interface ValidCheckout {
  title: string;
  description: string | null;
  priceAtomic: bigint;
  payTo: string | null;
  payloadJson: string | null;
  reusable: boolean;
  armed: boolean;
  lifetimeMinutes: number;
  offer: Record<string, string | null>;
}

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/**
 * EIP-55: a mixed-case address carries a checksum, and a wrong one is most
 * likely a mistyped address, so it is refused. All-lowercase or all-uppercase
 * hex carries no checksum and is taken as written.
 */
function hasValidChecksum(address: string): boolean {
  const hex = address.slice(2);
  return hex === hex.toLowerCase() || hex === hex.toUpperCase() || isAddress(address, { strict: true });
}

export function validateCreate(input: CreateCheckoutInput): ValidCheckout {
  const errors: FieldError[] = [];
  const title = input.title.trim();
  if (!title) errors.push({ field: "title", reason: "is required" });
  else if (title.length > CHECKOUT_LIMITS.titleMax) errors.push({ field: "title", reason: `must be at most ${CHECKOUT_LIMITS.titleMax} characters` });

  let priceAtomic = 0n;
  try {
    priceAtomic = parseUsd(input.priceUsd);
    if (priceAtomic <= 0n) errors.push({ field: "price_usd", reason: "must be greater than zero" });
    else if (priceAtomic > MAX_PRICE_ATOMIC) errors.push({ field: "price_usd", reason: "must be at most 1000000" });
  } catch (err) {
    errors.push({ field: "price_usd", reason: err instanceof MoneyFormatError ? err.message : "is not a decimal string" });
  }

  let payTo: string | null = null;
  if (input.payTo !== undefined) {
    if (!isAddress(input.payTo, { strict: false }) || /^0x0{40}$/i.test(input.payTo)) {
      errors.push({ field: "pay_to", reason: "must be a non-zero 0x-prefixed EVM address (Base is the only rail so far)" });
    } else if (!hasValidChecksum(input.payTo)) {
      errors.push({ field: "pay_to", reason: "has a wrong EIP-55 checksum (check the address, or send it all lowercase)" });
    } else payTo = getAddress(input.payTo);
  }

  if (input.description !== undefined && input.description.length > CHECKOUT_LIMITS.descriptionMax) {
    errors.push({ field: "description", reason: `must be at most ${CHECKOUT_LIMITS.descriptionMax} characters` });
  }
  if (input.fulfillment !== undefined && input.fulfillment !== "inline") {
    errors.push({ field: "fulfillment", reason: "only inline fulfillment is available so far" });
  }
  if (input.payloadJson !== undefined && bytes(input.payloadJson) > CHECKOUT_LIMITS.payloadMaxBytes) {
    errors.push({ field: "payload", reason: `must be at most ${CHECKOUT_LIMITS.payloadMaxBytes} bytes as JSON` });
  }

  let lifetimeMinutes = CHECKOUT_LIMITS.defaultLifetimeMinutes;
  if (input.expiresInMinutes !== undefined) {
    const m = input.expiresInMinutes;
    if (m < 1n || m > BigInt(CHECKOUT_LIMITS.expiresInMinutesMax)) {
      errors.push({ field: "expires_in_minutes", reason: `must be from 1 to ${CHECKOUT_LIMITS.expiresInMinutesMax}` });
    } else lifetimeMinutes = Number(m);
  }

  const offer: Record<string, string | null> = {};
  for (const f of OFFER_TEXT_FIELDS) {
    const v = input.offer[f];
    if (v !== undefined && v.length > CHECKOUT_LIMITS.offerTextMax)
      errors.push({ field: f, reason: `must be at most ${CHECKOUT_LIMITS.offerTextMax} characters` });
    offer[f] = v ?? null;
  }
  for (const f of OFFER_JSON_FIELDS) {
    const v = input.offer[`${f}_json`];
    if (v !== undefined && bytes(v) > CHECKOUT_LIMITS.offerJsonMaxBytes)
      errors.push({ field: f, reason: `must be at most ${CHECKOUT_LIMITS.offerJsonMaxBytes} bytes as JSON` });
    offer[`${f}_json`] = v ?? null;
  }

  if (errors.length) throw invalid(errors);
  return {
    title,
    description: input.description ?? null,
    priceAtomic,
    payTo,
    payloadJson: input.payloadJson ?? null,
    reusable: input.reusable ?? false,
    // test_mode true keeps the checkout rehearsing; absent follows the key's mode.
    armed: input.testMode === undefined ? input.createdWithLiveKey : !input.testMode,
    lifetimeMinutes,
    offer,
  };
}

/** The mode of the API key a request came with. */
export type KeyMode = "test" | "live";

export type StoredStatus = "open" | "paid" | "void";
export type CheckoutStatus = StoredStatus | "expired";

/** The status a reader sees: an open checkout past its deadline is expired. */
export function effectiveStatus(stored: StoredStatus, expiresAt: Date | null, now: Date): CheckoutStatus {
  if (stored === "open" && expiresAt !== null && expiresAt.getTime() <= now.getTime()) return "expired";
  return stored;
}
