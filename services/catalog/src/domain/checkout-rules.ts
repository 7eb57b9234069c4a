import { MAX_PLATFORM_FEE_BPS, MoneyFormatError, parsePrice, platformFeeBpsAtCreate } from "@c402/money";
import { invalid, type FieldError } from "@c402/problems";
import { getAddress, isAddress } from "viem";
import { contentDeclarationOf, contentSaleRefusals, type ContentDeclaration } from "./content-rules";
import { escrowOfCreate, type EscrowTerms, type EscrowTermsInput } from "./escrow-rules";
import { fulfillmentOf, type Fulfillment, type RelayFieldsInput } from "./relay-rules";
import { scheduleOfCreate, type ScheduleTerms, type ScheduleTermsInput } from "./schedule-rules";

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
  partyTextMax: 200,
  partyEmailMax: 254,
  testDeliveryDailyCapDefault: 25,
  testDeliveryDailyCapMax: 100_000,
  packageCallsMax: 1_000_000,
  packageTtlDaysDefault: 30,
  packageTtlDaysMax: 3_650,
  /** The spec's minimum package price, $1.00 in USDC atomic units. */
  packagePriceMinAtomic: 1_000_000n,
};

/** Platform-declared identities (the spec's `parties`), carried verbatim to receipts. */
export interface Parties {
  buyer?: { name?: string; email?: string; ref?: string };
  seller?: { name?: string; ref?: string };
}

const PARTY_FIELDS = { buyer: ["name", "email", "ref"], seller: ["name", "ref"] } as const;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const OFFER_TEXT_FIELDS = ["freshness", "coverage", "source", "constraints"] as const;
export const OFFER_JSON_FIELDS = ["input_schema", "output_schema", "example_input", "example_output"] as const;

export interface CreateCheckoutInput extends RelayFieldsInput {
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
  /** `parties` as JSON text. */
  partiesJson?: string;
  platformFeeBps?: number;
  inheritAccountPayouts?: boolean;
  walletButton?: boolean;
  testDeliveryDailyCap?: number;
  maxDeliveries?: number;
  packageTtlDays?: number;
  /** `content` as JSON text: makes the checkout a gated article (cnt_). */
  contentJson?: string;
  /** Makes the checkout an escrow one (esc_) under these terms. */
  escrow?: EscrowTermsInput;
  /** Mints an escrow twin (esc_) beside the plain checkout, under these terms. */
  escrowTwin?: EscrowTermsInput;
  /** Makes the checkout a recurring series under these terms. */
  schedule?: ScheduleTermsInput;
}

/** A package: one payment buys `calls` calls, spendable for `ttlDays` days after settlement. */
export interface PackageTerms {
  calls: number;
  ttlDays: number;
}

export interface ValidCheckout {
  title: string;
  description: string | null;
  priceAtomic: bigint;
  payTo: string | null;
  payloadJson: string | null;
  /** Inline goods, or a relay origin (its credential still to be bound by fulfillment). */
  fulfillment: Fulfillment;
  reusable: boolean;
  armed: boolean;
  lifetimeMinutes: number;
  offer: Record<string, string | null>;
  parties: Parties | null;
  /** As sent; absent takes the account's standing fee (accountTermsOf). */
  platformFeeBps: number | undefined;
  /** As sent; absent is true, or false for a platform account (accountTermsOf). */
  inheritAccountPayouts: boolean | undefined;
  walletButton: boolean;
  testDeliveryDailyCap: number;
  package: PackageTerms | null;
  /** A gated article's declaration, normalized; null for every other checkout. */
  content: ContentDeclaration | null;
  /** An escrow checkout's terms; null for every other checkout. */
  escrow: EscrowTerms | null;
  /** The terms of the escrow twin minted beside a plain checkout; null when none is. */
  escrowTwin: EscrowTerms | null;
  /** A recurring series' terms; null for every other checkout. */
  schedule: ScheduleTerms | null;
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

/** Why a title is refused (trimmed first), or undefined. */
function titleRefusal(title: string): string | undefined {
  if (!title) return "is required";
  if (title.length > CHECKOUT_LIMITS.titleMax) return `must be at most ${CHECKOUT_LIMITS.titleMax} characters`;
  return undefined;
}

const descriptionRefusal = (v: string) =>
  v.length > CHECKOUT_LIMITS.descriptionMax ? `must be at most ${CHECKOUT_LIMITS.descriptionMax} characters` : undefined;
const offerTextRefusal = (v: string) => (v.length > CHECKOUT_LIMITS.offerTextMax ? `must be at most ${CHECKOUT_LIMITS.offerTextMax} characters` : undefined);
const offerJsonRefusal = (v: string) =>
  bytes(v) > CHECKOUT_LIMITS.offerJsonMaxBytes ? `must be at most ${CHECKOUT_LIMITS.offerJsonMaxBytes} bytes as JSON` : undefined;

/** Checks the offer card's values that are set; `onValid` receives each valid one by column (`freshness`, `input_schema_json`). */
function checkOffer(
  offer: CreateCheckoutInput["offer"],
  errors: FieldError[],
  onValid: (column: string, value: string | undefined, field: string) => void,
): void {
  for (const f of OFFER_TEXT_FIELDS) {
    const v = offer[f];
    const reason = v === undefined ? undefined : offerTextRefusal(v);
    if (reason) errors.push({ field: f, reason });
    else onValid(f, v, f);
  }
  for (const f of OFFER_JSON_FIELDS) {
    const v = offer[`${f}_json`];
    const reason = v === undefined ? undefined : offerJsonRefusal(v);
    if (reason) errors.push({ field: f, reason });
    else onValid(`${f}_json`, v, f);
  }
}

/** `parties` from its JSON text: only the spec's identities, each a bounded string; 422 naming the field. */
function partiesOf(json: string, errors: FieldError[]): Parties | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    errors.push({ field: "parties", reason: "must be an object" });
    return null;
  }
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    errors.push({ field: "parties", reason: "must be an object with buyer and/or seller" });
    return null;
  }
  const out: Parties = {};
  for (const [role, party] of Object.entries(value)) {
    const fields: readonly string[] | undefined = PARTY_FIELDS[role as keyof typeof PARTY_FIELDS];
    if (!fields) {
      errors.push({ field: `parties.${role}`, reason: "is not a known party (buyer or seller)" });
      continue;
    }
    if (party === null) continue;
    if (typeof party !== "object" || Array.isArray(party)) {
      errors.push({ field: `parties.${role}`, reason: "must be an object" });
      continue;
    }
    const kept: Record<string, string> = {};
    for (const [name, v] of Object.entries(party as Record<string, unknown>)) {
      const field = `parties.${role}.${name}`;
      if (!fields.includes(name)) errors.push({ field, reason: "is not a known field" });
      else if (v === null) continue;
      else if (typeof v !== "string") errors.push({ field, reason: "must be a string" });
      else if (name === "email" && (v.length > CHECKOUT_LIMITS.partyEmailMax || !EMAIL.test(v))) errors.push({ field, reason: "must be an email address" });
      else if (v.length > CHECKOUT_LIMITS.partyTextMax) errors.push({ field, reason: `must be at most ${CHECKOUT_LIMITS.partyTextMax} characters` });
      else kept[name] = v;
    }
    out[role as keyof Parties] = kept;
  }
  return out;
}

export function validateCreate(input: CreateCheckoutInput): ValidCheckout {
  const errors: FieldError[] = [];
  const title = input.title.trim();
  const titleReason = titleRefusal(title);
  if (titleReason) errors.push({ field: "title", reason: titleReason });

  let priceAtomic = 0n;
  try {
    priceAtomic = parsePrice(input.priceUsd);
  } catch (err) {
    errors.push({ field: "price_usd", reason: err instanceof MoneyFormatError ? err.message : "is not a decimal string" });
  }

  let payTo: string | null = null;
  if (input.payTo !== undefined) {
    if (!isAddress(input.payTo, { strict: false }) || /^0x0{40}$/i.test(input.payTo)) {
      errors.push({
        field: "pay_to",
        reason:
          "must be a non-zero 0x-prefixed EVM address (the checkout's EVM rail; a checkout takes other chains' wallets from the account's standing ones or POST /v1/checkouts/{id}/payouts)",
      });
    } else if (!hasValidChecksum(input.payTo)) {
      errors.push({ field: "pay_to", reason: "has a wrong EIP-55 checksum (check the address, or send it all lowercase)" });
    } else payTo = getAddress(input.payTo);
  }

  const descriptionReason = input.description === undefined ? undefined : descriptionRefusal(input.description);
  if (descriptionReason) errors.push({ field: "description", reason: descriptionReason });
  const fulfillment = fulfillmentOf(input, errors);
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
  checkOffer(input.offer, errors, (column, value) => (offer[column] = value ?? null));

  const parties = input.partiesJson === undefined ? null : partiesOf(input.partiesJson, errors);
  const platformFeeBps = input.platformFeeBps;
  if (platformFeeBps !== undefined && (!Number.isInteger(platformFeeBps) || platformFeeBps < 0 || platformFeeBps > MAX_PLATFORM_FEE_BPS)) {
    errors.push({ field: "platform_fee_bps", reason: `must be an integer from 0 to ${MAX_PLATFORM_FEE_BPS}` });
  }
  const inheritAccountPayouts = input.inheritAccountPayouts;
  const cap = input.testDeliveryDailyCap ?? CHECKOUT_LIMITS.testDeliveryDailyCapDefault;
  if (!Number.isInteger(cap) || cap < 1 || cap > CHECKOUT_LIMITS.testDeliveryDailyCapMax) {
    errors.push({ field: "test_delivery_daily_cap", reason: `must be an integer from 1 to ${CHECKOUT_LIMITS.testDeliveryDailyCapMax}` });
  }

  const pkg = packageOf(input, fulfillment.mode, priceAtomic, errors);
  const content = input.contentJson === undefined ? null : contentDeclarationOf(input.contentJson, errors);
  if (input.contentJson !== undefined) errors.push(...contentSaleRefusals({ mode: fulfillment.mode, payloadJson: input.payloadJson ?? null, package: pkg }));
  const schedule = scheduleOfCreate(input, errors);
  const { escrow, escrowTwin } = escrowOfCreate(input, fulfillment.mode, errors);

  if (errors.length) throw invalid(errors);
  return {
    title,
    description: input.description ?? null,
    priceAtomic,
    payTo,
    payloadJson: input.payloadJson ?? null,
    fulfillment,
    reusable: input.reusable ?? false,
    // test_mode true keeps the checkout rehearsing; absent follows the key's mode.
    armed: input.testMode === undefined ? input.createdWithLiveKey : !input.testMode,
    lifetimeMinutes,
    offer,
    parties,
    platformFeeBps,
    inheritAccountPayouts,
    walletButton: input.walletButton ?? false,
    testDeliveryDailyCap: cap,
    package: pkg,
    content,
    escrow,
    escrowTwin,
    schedule,
  };
}

/**
 * A package's terms (docs/decisions.md "Packages"): relay and mcp only, at
 * least $1.00, 1 to 1,000,000 calls; package_ttl_days (1 to 3650, default 30)
 * only beside max_deliveries, where it means something.
 */
function packageOf(input: CreateCheckoutInput, mode: string, priceAtomic: bigint, errors: FieldError[]): PackageTerms | null {
  const calls = input.maxDeliveries;
  if (calls === undefined) {
    if (input.packageTtlDays !== undefined) errors.push({ field: "package_ttl_days", reason: "applies only to a package (send max_deliveries)" });
    return null;
  }
  const before = errors.length;
  if (!Number.isInteger(calls) || calls < 1 || calls > CHECKOUT_LIMITS.packageCallsMax) {
    errors.push({ field: "max_deliveries", reason: `must be an integer from 1 to ${CHECKOUT_LIMITS.packageCallsMax}` });
  } else if (mode !== "relay" && mode !== "mcp") {
    errors.push({ field: "max_deliveries", reason: `packages are sold by relay and mcp checkouts, and fulfillment is ${mode}` });
  } else if (priceAtomic > 0n && priceAtomic < CHECKOUT_LIMITS.packagePriceMinAtomic) {
    errors.push({ field: "price_usd", reason: "must be at least 1.00 for a package (max_deliveries)" });
  }
  const ttlDays = input.packageTtlDays ?? CHECKOUT_LIMITS.packageTtlDaysDefault;
  if (!Number.isInteger(ttlDays) || ttlDays < 1 || ttlDays > CHECKOUT_LIMITS.packageTtlDaysMax) {
    errors.push({ field: "package_ttl_days", reason: `must be an integer from 1 to ${CHECKOUT_LIMITS.packageTtlDaysMax}` });
  }
  return errors.length === before ? { calls, ttlDays } : null;
}

/** The account's platform mode, as identity holds it (GET /v1/account/platform). */
export interface AccountPlatform {
  platformAccount: boolean;
  platformFeeBps: number;
  platformFeeTo: string | null;
  /** What receipts name a platform account as (its slug, or its account id); null for other accounts. */
  soldBy: string | null;
}

export const NOT_A_PLATFORM: AccountPlatform = { platformAccount: false, platformFeeBps: 0, platformFeeTo: null, soldBy: null };

/** What a checkout takes from its account at create, frozen on it: later changes to the account leave it alone. */
export interface AccountTerms {
  platformFeeBps: number;
  /** The wallet the cut is paid to; null when the fee is 0. */
  platformFeeTo: string | null;
  soldBy: string | null;
  inheritAccountPayouts: boolean;
}

/**
 * The spec's platform rules at create: the per-create `platform_fee_bps`
 * always wins over the account's standing fee; a fee above 0 needs the
 * account in platform mode with a fee wallet; `inherit_account_payouts`
 * defaults to false for a platform account (it sells for sub-sellers, so the
 * payout wallet is named per checkout) and true otherwise.
 */
export function accountTermsOf(valid: Pick<ValidCheckout, "platformFeeBps" | "inheritAccountPayouts" | "payTo">, account: AccountPlatform): AccountTerms {
  const errors: FieldError[] = [];
  const bps = platformFeeBpsAtCreate(valid.platformFeeBps, account);
  if (bps > 0 && (!account.platformAccount || account.platformFeeTo === null)) {
    errors.push({
      field: "platform_fee_bps",
      reason: "above 0 needs the account in platform mode with a fee wallet (PUT /v1/account/platform)",
    });
  }
  const inheritAccountPayouts = valid.inheritAccountPayouts ?? !account.platformAccount;
  if (!inheritAccountPayouts && valid.payTo === null) {
    errors.push({
      field: "pay_to",
      reason:
        valid.inheritAccountPayouts === false
          ? "is required when inherit_account_payouts is false"
          : "is required for a platform account (it sells for sub-sellers), unless inherit_account_payouts is true",
    });
  }
  if (errors.length) throw invalid(errors);
  return {
    platformFeeBps: bps,
    platformFeeTo: bps > 0 ? account.platformFeeTo : null,
    soldBy: account.platformAccount ? account.soldBy : null,
    inheritAccountPayouts,
  };
}

/** The mode of the API key a request came with. */
export type KeyMode = "test" | "live";

/** What a checkout sold: a single-shot that sold is `paid`. Void is a flag beside it (voided_at), never a stored status. */
export type StoredStatus = "open" | "paid";
export type CheckoutStatus = StoredStatus | "expired" | "void";

/**
 * The status a reader sees, recomputed from the record every time (a restore
 * never brings back a remembered status): void while retired, else paid once a
 * single-shot sold, else expired once the deadline passed, else open.
 */
export function effectiveStatus(c: { status: StoredStatus; voided_at: Date | null; expires_at: Date | null }, now: Date): CheckoutStatus {
  if (c.voided_at !== null) return "void";
  if (c.status === "paid") return "paid";
  if (c.expires_at !== null && c.expires_at.getTime() <= now.getTime()) return "expired";
  return "open";
}

/** The offer-card fields a PATCH may change (the spec's CheckoutOfferPatch), by their REST names. */
export const PATCHABLE_FIELDS = ["title", "description", ...OFFER_JSON_FIELDS, ...OFFER_TEXT_FIELDS] as const;
/** What a PATCH may change on gated content only: the article and its whole declaration (neither can be null). */
export const CONTENT_PATCHABLE_FIELDS = ["payload", "content"] as const;
export type PatchableField = (typeof PATCHABLE_FIELDS)[number];

export interface OfferPatchInput {
  title?: string;
  description?: string;
  /** Offer-card values to set: text fields by name, JSON fields as `<name>_json` text. */
  offer: CreateCheckoutInput["offer"];
  /** Fields to set to null. */
  clear: readonly string[];
  /** Gated content only: the article (JSON text) and the whole declaration (JSON text) replacing the stored one. */
  payloadJson?: string;
  contentJson?: string;
}

/** The columns a valid patch sets: title/description, and the offer card's entries (null clears). */
export interface ValidPatch {
  title?: string;
  description?: string | null;
  offer: Record<string, string | null>;
  /** Gated content only (Catalog.update refuses them on any other checkout). */
  payloadJson?: string;
  content?: ContentDeclaration;
}

/** Checks a PATCH against the create rules; 422 naming each field (a required title cannot be cleared). */
export function validatePatch(input: OfferPatchInput): ValidPatch {
  const errors: FieldError[] = [];
  const out: ValidPatch = { offer: {} };
  for (const field of input.clear) {
    if ((CONTENT_PATCHABLE_FIELDS as readonly string[]).includes(field)) errors.push({ field, reason: "is the article's: it can be replaced, not cleared" });
    else if (!(PATCHABLE_FIELDS as readonly string[]).includes(field)) errors.push({ field, reason: "is not a field a PATCH can change" });
    else if (field === "title") errors.push({ field, reason: "is required and cannot be null" });
  }
  if (input.payloadJson !== undefined) {
    if (bytes(input.payloadJson) > CHECKOUT_LIMITS.payloadMaxBytes)
      errors.push({ field: "payload", reason: `must be at most ${CHECKOUT_LIMITS.payloadMaxBytes} bytes as JSON` });
    else if (input.payloadJson === '""') errors.push({ field: "payload", reason: "is the article: it cannot be empty" });
    else out.payloadJson = input.payloadJson;
  }
  if (input.contentJson !== undefined) {
    const content = contentDeclarationOf(input.contentJson, errors);
    if (content) out.content = content;
  }
  if (input.title !== undefined) {
    const title = input.title.trim();
    const reason = titleRefusal(title);
    if (reason) errors.push({ field: "title", reason });
    else out.title = title;
  }
  if (input.description !== undefined) {
    const reason = descriptionRefusal(input.description);
    if (reason) errors.push({ field: "description", reason });
    else out.description = input.description;
  } else if (input.clear.includes("description")) out.description = null;
  checkOffer(input.offer, errors, (column, value, field) => {
    if (value !== undefined) out.offer[column] = value;
    else if (input.clear.includes(field)) out.offer[column] = null;
  });
  if (errors.length) throw invalid(errors);
  return out;
}
