import { CONTENT_LIMITS } from "@c402/contracts";
import { originKeySchemas } from "./origin-key-schemas";
import { webhookSchemas } from "./webhook-schemas";
import { payoutSchemas } from "./payout-schemas";
import { escrowCreateFields, escrowSchemas } from "./escrow-schemas";
import { HELD_PERIODS_MAX, scheduleSchemas } from "./schedule-schemas";
import { reportSchemas } from "./report-schemas";
import { spendingWalletSchemas } from "./spending-wallet-schemas";
import type { FromSchema } from "./schema-type";

/**
 * JSON Schemas of the request bodies. The gateway validates every body with
 * them (shape, types, unknown fields) and the OpenAPI document publishes the
 * same objects, so the two cannot drift; each body's type is derived from its
 * schema (BodyOf), so it cannot drift from them either. Business rules
 * (prices, addresses, limits that need the account) live in the owning service.
 */
const nullable = <const S>(schema: S) => ({ anyOf: [schema, { type: "null" }] }) as const;
const goods = { anyOf: [{ type: "object" }, { type: "array" }, { type: "string" }, { type: "null" }] } as const;
const text = nullable({ type: "string" });
/** The offer card: what a checkout claims to a buyer (create and PATCH alike). */
const offerCard = {
  input_schema: goods,
  output_schema: goods,
  example_input: goods,
  example_output: goods,
  freshness: text,
  coverage: text,
  source: text,
  constraints: text,
} as const;

/** A recurring series' create fields (both or neither; ADR 20). */
export const SERIES_FIELDS = ["schedule_interval_days", "schedule_periods"] as const;

/** A gated article's declaration (the spec's `content`): its shape here; catalog checks dates, URLs and tags. */
const contentDeclaration = {
  type: "object",
  additionalProperties: false,
  description:
    "Makes the checkout a gated article (id cnt_…, face /x/{id}): the payload is the article (a string of text or HTML, or any JSON value), and a purchase answers a pass that opens it again.",
  properties: {
    teaser: {
      ...nullable({ type: "string", maxLength: CONTENT_LIMITS.teaserMax }),
      description: "The free part; falls back to description, then the opening of the body.",
    },
    author: nullable({ type: "string", maxLength: CONTENT_LIMITS.textMax }),
    published: { ...nullable({ type: "string", maxLength: CONTENT_LIMITS.publishedMax }), description: "ISO 8601 date or date-time." },
    canonical_url: {
      ...nullable({ type: "string", maxLength: CONTENT_LIMITS.urlMax }),
      description:
        "The seller's URL of the article (https; http only on localhost; no credentials): its origin may frame the article, so it names one site: wildcards are refused.",
    },
    keywords: {
      ...nullable({ type: "array", maxItems: CONTENT_LIMITS.keywordsMax, items: { type: "string", minLength: 1, maxLength: CONTENT_LIMITS.keywordMax } }),
      description: "Seller tags.",
    },
    section: nullable({ type: "string", maxLength: CONTENT_LIMITS.textMax }),
    language: { ...nullable({ type: "string", maxLength: CONTENT_LIMITS.languageMax }), description: "BCP 47 tag (en, pt-BR)." },
    license_url: nullable({ type: "string", maxLength: CONTENT_LIMITS.urlMax }),
    pass_scope: { type: "string", enum: ["seller", "content"], description: "seller (default): a pass opens every article of the account; content: this one." },
    pass_hours: { type: "integer", minimum: 1, maximum: CONTENT_LIMITS.passHoursMax, description: "Lifetime of a purchase's pass (default 24)." },
  },
} as const;

/** A pass's lifetime and uses, as the seller API bounds them (spec, Gated content). */
const passFields = {
  subject: { type: "string", minLength: 1, maxLength: 200, description: "Whom the pass is for: recorded (pass.issued), never interpreted." },
  ttl_seconds: { type: "integer", minimum: 1, maximum: 2_678_400, description: "Lifetime in seconds, at most 31 days." },
  uses: { type: "integer", minimum: 1, maximum: 1_000_000, description: "Reads the pass opens (default: no limit)." },
} as const;

const partyText = nullable({ type: "string", maxLength: 200 });

/** The fields of POST /v1/checkouts (the spec's checkout create table). */
const checkoutCreateFields = {
  title: { type: "string", description: "What the buyer gets." },
  price_usd: { type: "string", description: 'Seller price as a decimal string, e.g. "0.10".' },
  pay_to: { type: "string", description: "Payout wallet; defaults to the account's standing payout wallet. Immutable." },
  description: text,
  fulfillment: { type: "string", enum: ["inline", "relay", "mcp", "webhook"] },
  payload: { ...goods, description: "The goods, delivered inline when payment settles." },
  origin_url: {
    ...nullable({ type: "string", maxLength: 2048 }),
    description: "The seller's endpoint a relay checkout calls for each paid request (sending it makes the checkout relay).",
  },
  origin_method: { type: "string", enum: ["GET", "POST", "PUT", "PATCH", "DELETE"], description: "How the origin is called (default GET)." },
  origin_auth_type: nullable({ type: "string", enum: ["bearer", "basic", "api_key", "custom"] }),
  origin_auth_value: {
    ...nullable({ type: "string", maxLength: 4096 }),
    description: "A credential for this checkout alone: sealed at rest, never returned.",
  },
  origin_auth_header: { ...nullable({ type: "string", maxLength: 128 }), description: "The header api_key and custom credentials go in." },
  mcp_tool: {
    type: "string",
    minLength: 1,
    maxLength: 128,
    description:
      "The one tool of the MCP server at origin_url this checkout sells (sending it makes the checkout mcp); omitted with fulfillment mcp: any tool, chosen by the buyer's tool parameter.",
  },
  origin_auth_secret_id: {
    ...nullable({ type: "string", maxLength: 64 }),
    description: "A stored origin key (POST /v1/origin-keys) instead of a one-off credential.",
  },
  reusable: { type: "boolean", description: "false (default): single-shot; true: a payment link." },
  test_mode: nullable({ type: "boolean" }),
  // The catalog's own bound (366 days) too: a larger number cannot even cross gRPC as an int64.
  expires_in_minutes: nullable({ type: "integer", minimum: 1, maximum: 527_040 }),
  ...offerCard,
  parties: nullable({
    type: "object",
    additionalProperties: false,
    description: "Platform-declared identities, carried verbatim to receipts and checkout.paid.",
    properties: {
      buyer: nullable({
        type: "object",
        additionalProperties: false,
        properties: { name: partyText, email: nullable({ type: "string", maxLength: 254 }), ref: partyText },
      }),
      seller: nullable({ type: "object", additionalProperties: false, properties: { name: partyText, ref: partyText } }),
    },
  }),
  platform_fee_bps: {
    type: "integer",
    minimum: 0,
    maximum: 2000,
    description:
      "Platform cut in basis points, taken out of the price; the per-create value always wins over the account's standing fee (PUT /v1/account/platform). Above 0 needs the account in platform mode with a fee wallet.",
  },
  inherit_account_payouts: {
    type: "boolean",
    description: "Copy the account's standing payout wallets (default true; false for a platform account, which then names pay_to).",
  },
  wallet_button: { type: "boolean", description: "Offer in-frame wallet payment in the embed (default false: a read-only product page)." },
  test_delivery_daily_cap: {
    type: "integer",
    minimum: 1,
    maximum: 100_000,
    description: "Rehearsal deliveries per day for relay and mcp calls and gated articles' purchases and reads (default 25).",
  },
  schedule_interval_days: {
    type: "integer",
    minimum: 1,
    maximum: 366,
    description:
      "Makes the checkout a recurring series (with schedule_periods: both or neither): days between periods. Base only; never with escrow, a package or content.",
  },
  schedule_periods: {
    type: "integer",
    minimum: 2,
    maximum: 24,
    description:
      "A recurring series' periods, period 0 (paid at purchase) included: the buyer signs every later period then, each charged on its date (GET /v1/schedules).",
  },
  escrow_offer: { type: "string", enum: ["optional", "required"] },
  content: contentDeclaration,
  max_deliveries: {
    ...nullable({ type: "integer", minimum: 1, maximum: 1_000_000 }),
    description: "Sell a package: one payment buys this many calls (relay and mcp only; price at least 1.00), spent with the package key.",
  },
  package_ttl_days: {
    type: "integer",
    minimum: 1,
    maximum: 3650,
    description: "Days a package stays spendable after settlement (default 30); only with max_deliveries.",
  },
} as const;

/** The create fields an escrow create shares with a plain one: all but escrow_offer, which chooses between the two. */
const { escrow_offer: _chosenByTheRoute, ...plainCreateFields } = checkoutCreateFields;

export const schemas = {
  CheckoutCreate: {
    type: "object",
    additionalProperties: false,
    required: ["title", "price_usd"],
    properties: checkoutCreateFields,
  },
  /** POST /v1/escrow-checkouts: the checkout create body (escrow_offer aside: the create is an escrow one) and the escrow create fields. */
  EscrowCheckoutCreate: {
    type: "object",
    additionalProperties: false,
    required: ["title", "price_usd"],
    properties: { ...plainCreateFields, ...escrowCreateFields },
  },
  /** PATCH /v1/checkouts/{id}: the offer card only (the spec's CheckoutOfferPatch); null clears a field (a title cannot be cleared). */
  CheckoutOfferPatch: {
    type: "object",
    additionalProperties: false,
    properties: {
      title: nullable({ type: "string" }),
      description: text,
      ...offerCard,
      payload: { ...goods, description: "Gated content only: the article, replaced whole (live for the next read)." },
      content: { ...contentDeclaration, description: "Gated content only: the whole declaration, replacing the stored one." },
    },
  },
  /** POST /v1/content/{id}/grants: a pass to one article, or (scope seller, the default) to all of the account's. */
  ContentGrantCreate: {
    type: "object",
    additionalProperties: false,
    required: ["subject"],
    properties: {
      subject: passFields.subject,
      scope: { type: "string", enum: ["seller", "content"], description: "seller (default): every article of the account; content: this one." },
      ttl_seconds: { ...passFields.ttl_seconds, description: "Lifetime in seconds (default: the article's pass_hours), at most 31 days." },
      uses: passFields.uses,
    },
  },
  /** POST /v1/grants: a pass to every article the account gates. */
  GrantCreate: {
    type: "object",
    additionalProperties: false,
    required: ["subject"],
    properties: {
      subject: passFields.subject,
      ttl_seconds: { ...passFields.ttl_seconds, description: "Lifetime in seconds (default 86400, 24 hours), at most 31 days." },
      uses: passFields.uses,
    },
  },
  /** POST /v1/checkouts/{id}/extend: the new deadline from now, or null for none. */
  CheckoutExtend: {
    type: "object",
    additionalProperties: false,
    required: ["expires_in_minutes"],
    properties: {
      expires_in_minutes: { ...nullable({ type: "integer", minimum: 1, maximum: 527_040 }), description: "Minutes from now; null removes the deadline." },
    },
  },
  ApiKeyCreate: {
    type: "object",
    additionalProperties: false,
    properties: {
      name: text,
      scope: { type: "string", enum: ["read_only", "payments", "full"] },
      mode: { type: "string", enum: ["test", "live"] },
    },
  },
  /**
   * PATCH /auth/me: only the fields sent change; "" clears a field, null (or
   * leaving it out) keeps it. Identity applies the rules (pattern, lengths,
   * reserved words, URLs, uniqueness); `verified` and the record's other
   * read-only fields are refused by name (routes/profile.ts).
   */
  ProfilePatch: {
    type: "object",
    additionalProperties: false,
    description:
      'Only the fields sent change: "" clears a field, null or leaving it out keeps it. `verified` (never self-serve) and the other read-only fields of the profile answer 422 naming them.',
    properties: {
      slug: {
        ...nullable({ type: "string" }),
        description:
          "Public handle for /u/<slug> and /r/<slug>/... call URLs: ^[a-z0-9][a-z0-9-]{1,38}$, unique (409 when another account holds it), not a reserved word. Changing it breaks saved call URLs.",
      },
      name: { ...text, description: "At most 120 characters, no control characters." },
      profile_type: nullable({ type: "string", enum: ["individual", "team", "company", ""] }),
      bio: { ...text, description: "At most 600 characters (line breaks allowed)." },
      avatar_url: { ...text, description: "An absolute http(s) URL of at most 2048 characters, without a user name or password." },
      website_url: { ...text, description: "An absolute http(s) URL of at most 2048 characters, without a user name or password." },
      social_links: {
        ...nullable({ type: "object", additionalProperties: { type: "string" } }),
        description:
          "Replaces every link when sent ({} removes them all): at most 20, each named by 1 to 40 letters, digits, '_', '.' or '-' (starting with a letter or digit) and an absolute http(s) URL of at most 2048 characters.",
      },
    },
  },
  /** PUT /v1/account/platform: the whole settings (the shape here; the rules are identity's). */
  PlatformSettingsPut: {
    type: "object",
    additionalProperties: false,
    required: ["platform_account", "platform_fee_bps"],
    description:
      "Replaces the account's platform settings. A fee above 0 needs `platform_account: true` and `platform_fee_to`. Checkouts copy the settings at create; existing checkouts keep the fee they were created with.",
    properties: {
      platform_account: { type: "boolean", description: "Whether the account sells as a platform (for sub-sellers)." },
      platform_fee_bps: { type: "integer", minimum: 0, maximum: 2000, description: "The standing platform cut in basis points, taken out of each price." },
      platform_fee_to: {
        ...nullable({ type: "string", maxLength: 128 }),
        description: "The EVM wallet the cut is paid to (0x and 40 hex digits; EIP-55 checksum when mixed case); null or absent for none.",
      },
    },
  },
  /** PUT /v1/account/embed: the whole list (the shape here; identity checks each origin). */
  EmbedSettingsPut: {
    type: "object",
    additionalProperties: false,
    required: ["embed_origins"],
    description:
      "Replaces the origins allowed to frame your pay pages and receipts ([] allows none). Each is an origin only (https://shop.example[:port]): https, or http on localhost or a loopback address; wildcards are refused.",
    properties: {
      embed_origins: {
        type: "array",
        maxItems: 20,
        items: { type: "string", minLength: 1, maxLength: 200 },
        description: "At most 20 origins; duplicates are kept once.",
      },
    },
  },
  /** POST /auth/magic-link/request: identity normalises the address (trimmed, lowercased) and checks return_to. */
  MagicLinkRequest: {
    type: "object",
    additionalProperties: false,
    required: ["email"],
    properties: {
      email: { type: "string", format: "email", minLength: 3, maxLength: 254, description: "Where the sign-in link goes; trimmed and lowercased." },
      return_to: {
        ...nullable({ type: "string", maxLength: 2048 }),
        description: "A path on this site to land on after following the link (a single leading /, no scheme, host, backslash, spaces or control characters).",
      },
    },
  },
  /** POST /auth/verify: the token of a sign-in link. */
  MagicLinkVerify: {
    type: "object",
    additionalProperties: false,
    required: ["token"],
    properties: { token: { type: "string", minLength: 1, maxLength: 256, description: "The token of the link (its `token` query parameter)." } },
  },
  WalletChallenge: {
    type: "object",
    additionalProperties: false,
    required: ["address", "network"],
    properties: {
      address: {
        type: "string",
        minLength: 4,
        maxLength: 128,
        description:
          "The signing wallet: an EVM address (0x…, EIP-55 checksummed or single-case), or a Stellar account id (G…; not a muxed M… or contract C… address).",
      },
      network: {
        type: "string",
        minLength: 3,
        maxLength: 64,
        description: "CAIP-2: eip155:<chain id> for an EVM wallet (such as eip155:8453), stellar:pubnet or stellar:testnet for a Stellar one.",
      },
    },
  },
  WalletVerify: {
    type: "object",
    additionalProperties: false,
    required: ["message", "signature"],
    properties: {
      message: { type: "string", minLength: 1, maxLength: 4000, description: "The challenge's message, unchanged." },
      signature: {
        type: "string",
        minLength: 1,
        maxLength: 2048,
        description:
          "EVM: the personal_sign (EIP-191) signature, 0x-prefixed hex. Stellar: the wallet's sign-message signature (SEP-53, 64 bytes) as 128 hex digits; its base64 (88 characters, what Freighter answers) is taken too.",
      },
    },
  },
  FacilitatorRequest: {
    type: "object",
    additionalProperties: false,
    required: ["network", "requirement", "payload"],
    properties: {
      network: {
        type: "string",
        pattern: "^(eip155:(8453|84532)|stellar:(pubnet|testnet)|solana:[1-9A-HJ-NP-Za-km-z]{32,44})$",
        description: "One of the service's CAIP-2 network ids",
      },
      requirement: { type: "object", description: "The 402 requirement the service issued" },
      payload: { type: "object", description: "The buyer's signed payment payload" },
    },
  },
  /** POST /c/{id}/pay: the payment travels in its header, as on GET; a series' held periods in `schedule`. */
  FacePay: {
    type: "object",
    additionalProperties: false,
    properties: {
      schedule: {
        type: "array",
        minItems: 1,
        maxItems: HELD_PERIODS_MAX,
        items: { type: "object", description: "A held period's signed payload: its prepare entry's payload_stub with the signature filled in" },
        description:
          "A recurring series: the signed payloads of the held periods (periods 1 to periods-1, in order, from the prepare answer's schedule[]); every one is verified before period 0 settles, and one bad payload refuses the whole purchase",
      },
    },
  },
  PaymentPrepare: {
    type: "object",
    additionalProperties: false,
    required: ["payer"],
    properties: {
      payer: { type: "string", maxLength: 128, description: "The buyer's address on `network`: 0x… on EVM, base58 on Solana" },
      network: nullable({
        type: "string",
        maxLength: 64,
        description: "One of the face's networks (the first EVM one when null); a Solana network answers a transaction to sign (ADR 16)",
      }),
      params: nullable({ type: "object", additionalProperties: { type: "string" } }),
    },
  },
  ...reportSchemas,
  ...payoutSchemas,
  ...escrowSchemas,
  ...scheduleSchemas,
  ...originKeySchemas,
  ...webhookSchemas,
  ...spendingWalletSchemas,
} as const;

export type SchemaName = keyof typeof schemas;

/** The type of a body its schema accepts. */
export type BodyOf<N extends SchemaName> = FromSchema<(typeof schemas)[N]>;
