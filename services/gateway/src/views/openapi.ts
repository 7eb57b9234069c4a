import { PAYOUT_CHAINS } from "@c402/chain-addresses";
import { HANDOFF_NONCE } from "@c402/ids";
import { BASE58_ADDRESS } from "@c402/x402";
import { schemas } from "../http/request-schemas";
import { catalogueResponseSchemas, cataloguePaths } from "./openapi-catalogue";
import { withOperationIds } from "./openapi-conventions";
import { ORIGIN_KEY_EXAMPLES, originKeyPaths, originKeyResponseSchemas } from "./openapi-origin-keys";
import { WEBHOOK_EXAMPLES, webhookPaths, webhookResponseSchemas } from "./openapi-webhooks";
import { RECEIPT_CSV_COLUMNS } from "./receipts-csv";
import { PACKAGE_PURCHASE_FIELDS, packageExhaustedExtra, packageKeyHeader, packagePurchaseProperties, packageResponseSchemas } from "./openapi-packages";
import { PAYOUT_EXAMPLES, payoutPaths, payoutResponseSchemas } from "./openapi-payouts";
import { ESCROW_EXAMPLES, escrowPaths, escrowResponseSchemas } from "./openapi-escrow";
import { requirementScheduleExtra, SCHEDULE_EXAMPLES, schedulePaths, scheduleResponseSchemas } from "./openapi-schedules";
import { CONTENT_EXAMPLES, contentPaths, contentResponseSchemas } from "./openapi-content";
import { REPORT_EXAMPLES, reportPaths, reportResponseSchemas } from "./openapi-reports";
import { SPENDING_WALLET_EXAMPLES, spendingWalletPaths, spendingWalletResponseSchemas } from "./openapi-spending-wallets";

/**
 * The OpenAPI 3.1 document served at /openapi.json. Request bodies are the
 * very schemas the gateway validates with; every documented response has a
 * JSON Schema of what the code sends (components.schemas) and its exact
 * content type. The conformance fuzzer (test-e2e/src/openapi-fuzz.ts, G22)
 * generates requests from this document and checks every answer against it,
 * so a change of a response shape belongs here too.
 *
 * Rules no per-operation slot can state (the fuzzer applies them globally):
 * - any path with a malformed percent-escape answers 400 `bad-request`;
 * - a known path with a method it does not document answers 405
 *   `method-not-allowed` with an `Allow` header;
 * - request headers over 16 KiB answer 431 `headers-too-large`;
 * - an unknown path answers 404 `not-found`.
 */

import {
  anyJson,
  atomic,
  bool,
  caip2,
  checkoutOrArticleId,
  idOf,
  object,
  orNull,
  ref,
  str,
  strOrNull,
  timestamp,
  timestampOrNull,
  url,
  usd,
  usd6,
  type Schema,
} from "./openapi-schema";

// ---- Problems -------------------------------------------------------------

/** The slug of each problem status (the `type` URI ends with /problems/<slug>). */
const PROBLEM_SLUGS = {
  400: "bad-request",
  401: "unauthenticated",
  402: "payment-required",
  403: "forbidden",
  404: "not-found",
  405: "method-not-allowed",
  409: "conflict",
  410: "gone",
  413: "payload-too-large",
  415: "unsupported-media-type",
  422: "invalid-request",
  429: "rate-limited",
  431: "headers-too-large",
  502: "upstream-failed",
  503: "unavailable",
} as const;
type ProblemStatus = keyof typeof PROBLEM_SLUGS;

const help = object(
  { fix: str, prepare: strOrNull, retry_is_safe: bool },
  { description: "What to do about it; `prepare` names how to obtain typed data to sign where a payment is involved" },
);

/** A problem of one status: the generic document with that status and slug (422 also lists `errors`), or a precise slug of that status. */
function problemOf(status: ProblemStatus, extra: Schema = {}, slug: string = PROBLEM_SLUGS[status]): Schema {
  return {
    allOf: [
      ref("Problem"),
      {
        type: "object",
        properties: {
          status: { const: status },
          type: { type: "string", pattern: `/problems/${slug}$` },
          ...((extra.properties as Record<string, Schema> | undefined) ?? {}),
        },
        ...(extra.required ? { required: extra.required } : {}),
      },
    ],
  };
}

const header = (description: string, schema: Schema, required = true) => ({ description, required, schema });
/** A header holding a whole number (seconds, counts). */
const wholeNumber: Schema = { type: "string", pattern: "^[0-9]+$" };
const wwwAuthenticate = { "WWW-Authenticate": header("The scheme to authenticate with", { type: "string", pattern: "^Bearer(\\s|$)" }) };
/** The X-RateLimit-* headers of an operation metered per client (or per payer, per receipt): sent on every answer it counts. */
function rateLimitHeaders(required = true) {
  return {
    "X-RateLimit-Limit": header("Requests allowed in the window", wholeNumber, required),
    "X-RateLimit-Remaining": header("Requests left in the window", wholeNumber, required),
    "X-RateLimit-Reset": header("Seconds until the window starts afresh", wholeNumber, required),
  };
}
const problemResponse = (description: string, status: ProblemStatus, headers?: Record<string, unknown>, extra?: Schema) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/problem+json": { schema: problemOf(status, extra) } },
});

/** What a 422 `invalid-request` carries besides the problem: the fields refused. */
const invalidRequestErrors: Schema = { properties: { errors: { type: "array", minItems: 1, items: ref("FieldError") } }, required: ["errors"] };

/** Shared responses; operations name them with `$ref: #/components/responses/<Name>`. */
const responses = {
  BadRequest: problemResponse("Malformed request: invalid JSON, a corrupt compressed body, a malformed percent-escape in the path", 400),
  Unauthenticated: problemResponse("No valid API key: missing, malformed, unknown or revoked", 401, wwwAuthenticate),
  SignInRefused: problemResponse("The signature or the signed message is not acceptable", 401, wwwAuthenticate),
  LinkRefused: problemResponse("The sign-in link is unknown, already used or expired (alike, so the answer tells nothing)", 401, wwwAuthenticate),
  Forbidden: problemResponse("The key's scope is below what the operation needs (the document names `needed_scope`)", 403),
  NotFound: problemResponse("No such resource (or not this account's)", 404),
  RetiredTwin: {
    description:
      "The id is a test twin of the retired twin-row model: the same request (method, body, headers) belongs at the live checkout's rehearsal face, /c/{live_id}/test and its companions (spec, Payment rules 6). A package key bought on the twin row is answered there, never redirected.",
    headers: { Location: header("The live checkout's URL of the same thing, with the query kept", { type: "string", pattern: "^/c/chk_" }) },
    content: { "text/plain": { schema: { type: "string", description: "Where the request belongs, in words" } } },
  },
  MethodNotAllowed: problemResponse("The path exists but not with this method", 405, {
    Allow: header("The methods the path answers", { type: "string", pattern: "^[A-Z]+(\\s*,\\s*[A-Z]+)*$" }),
  }),
  Conflict: problemResponse("Conflicts with the resource's state, or a request with the same Idempotency-Key is still in flight", 409, {
    "Retry-After": header("Seconds until a retry may succeed: sent when a request with the same Idempotency-Key is in flight", wholeNumber, false),
  }),
  Gone: problemResponse("The checkout expired or sold out; or (a package call) the package expired", 410),
  PayloadTooLarge: problemResponse("The request body is larger than the service accepts (512 KiB)", 413),
  UnsupportedMediaType: problemResponse(
    "The body is not JSON in UTF-8: another Content-Type, another charset, or a Content-Encoding other than gzip, deflate or br",
    415,
  ),
  InvalidRequest: problemResponse(
    "Validation failed; `errors` lists each field (also free-form JSON nested too deep, too large, or with NUL characters)",
    422,
    undefined,
    invalidRequestErrors,
  ),
  InvalidOrPayoutAccountMissing: {
    description:
      "Validation failed (invalid-request; `errors` lists each field); or (payout-account-missing) a Solana or Stellar payout wallet the checkout would take cannot receive USDC on the network the service settles that chain on, so no buyer could pay it: on Solana it has no USDC account (its associated token account, named in `token_account`), on Stellar no USDC trustline (`asset` names the classic asset USDC:ISSUER). The service never creates either; `help.fix` says how to; nothing was created",
    content: {
      "application/problem+json": {
        schema: {
          oneOf: [
            problemOf(422, invalidRequestErrors),
            problemOf(
              422,
              {
                properties: { chain: { const: "solana" }, address: str, network: caip2, asset: str, token_account: str },
                required: ["chain", "address", "network", "asset", "token_account"],
              },
              "payout-account-missing",
            ),
            problemOf(
              422,
              { properties: { chain: { const: "stellar" }, address: str, network: caip2, asset: str }, required: ["chain", "address", "network", "asset"] },
              "payout-account-missing",
            ),
          ],
        },
      },
    },
  },
  RateLimited: problemResponse("Too many requests from this client (or too many failed authentications)", 429, {
    "Retry-After": header("Seconds until a retry can succeed", wholeNumber),
    // Absent when the refusal is for failed authentications (counted before any credential is resolved).
    ...rateLimitHeaders(false),
  }),
  HeadersTooLarge: problemResponse("Request headers over 16 KiB", 431),
  UpstreamFailed: problemResponse(
    "The seller's server could not be reached, timed out, refused the credential or the handshake (problem type upstream-failed)",
    502,
  ),
  RelayFailed: problemResponse(
    "A relay checkout's origin failed (5xx, 401/403/429, a timeout, unreachable): not charged, and the same payment can be presented again (problem type upstream-failed)",
    502,
    undefined,
    {
      properties: {
        fault: { enum: ["seller", "platform"] },
        reason: str,
        origin_status: { type: ["integer", "null"] },
        charged: { const: false },
        help: { type: "object", properties: { report: ref("ReportHelp") }, required: ["report"] },
      },
      required: ["fault", "reason", "charged", "help"],
    },
  ),
  PackageKeyRefused: problemResponse("The package key is unknown or another checkout's (alike)", 401, wwwAuthenticate),
  RehearsalCapReached: problemResponse(
    "The checkout's rehearsal deliveries for today (test_delivery_daily_cap, UTC days) are used up: nothing was delivered (a relay origin was not called) and nothing was charged",
    429,
    { "Retry-After": header("Seconds until the UTC day, and the checkout's rehearsal budget, start afresh", wholeNumber) },
    { properties: { reason: { const: "test_delivery_daily_cap" }, live_url: url, charged: { const: false } }, required: ["reason", "live_url", "charged"] },
  ),
  Unavailable: problemResponse(
    "A component this operation needs is unavailable (for example no settleable network, the rate limiter or the database); retry after Retry-After",
    503,
    {
      "Retry-After": header("Seconds to wait before retrying", wholeNumber),
    },
  ),
};
type ResponseName = keyof typeof responses;
const use = (name: ResponseName) => ({ $ref: `#/components/responses/${name}` });

// ---- Response schemas -----------------------------------------------------

const apiKeyProperties = {
  id: idOf("key"),
  object: { const: "api_key" },
  name: strOrNull,
  prefix: { type: "string", pattern: "^sk_(test|live)_" },
  scope: { enum: ["read_only", "payments", "full"] },
  mode: { enum: ["test", "live"] },
  created_at: timestamp,
  last_used_at: timestampOrNull,
  revoked_at: timestampOrNull,
};

const checkoutSummaryProperties = {
  id: checkoutOrArticleId,
  object: { const: "checkout" },
  url: { ...url, description: "The live face: /c/{id}, /x/{id} for a gated article, /e/{id} for an escrow checkout" },
  test_url: url,
  status: ref("CheckoutStatus"),
  title: str,
  description: strOrNull,
  price_usd: usd,
  pay_to: { type: "string", minLength: 1 },
  payouts: { type: "array", minItems: 1, items: ref("PayoutRail"), description: "Every payout rail, base (pay_to) first" },
  fulfillment: { enum: ["inline", "relay", "mcp", "webhook"] },
  reusable: bool,
  test_mode: { type: "boolean", description: "true until the seller goes live" },
  created_at: timestamp,
  expires_at: timestampOrNull,
  armed_at: timestampOrNull,
  test: object({ id: checkoutOrArticleId, url }, { description: "The rehearsal face" }),
  max_deliveries: {
    type: ["integer", "null"],
    minimum: 1,
    description: "A package checkout: the calls one payment buys, spent with the package key (null: one payment, one call)",
  },
  package_ttl_days: { type: ["integer", "null"], minimum: 1, description: "Days a package stays spendable after settlement (null unless a package)" },
  escrow: {
    ...orNull(ref("CheckoutEscrow")),
    description: "An escrow checkout's terms (esc_…), frozen at create; null for any other checkout",
  },
  escrow_twin: {
    ...orNull(object({ id: checkoutOrArticleId, url }, { closed: true })),
    description:
      "escrow_offer optional: on the plain checkout its escrow twin (esc_…, face /e/{id}), on the twin the plain checkout; null when the checkout has none",
  },
  schedule: {
    ...orNull(
      object({ interval_days: { type: "integer", minimum: 1, maximum: 366 }, periods: { type: "integer", minimum: 2, maximum: 24 } }, { closed: true }),
    ),
    description:
      "A recurring series' terms (schedule_interval_days, schedule_periods), frozen at create: period 0 is paid at purchase, each later period charged on its date; null for any other checkout",
  },
};

/** The create fields a checkout keeps as sent. */
const checkoutSettingsProperties = {
  parties: {
    type: ["object", "null"],
    description: "Platform-declared identities ({buyer {name, email, ref}, seller {name, ref}}), verbatim",
  },
  platform_fee_bps: { type: "integer", minimum: 0, maximum: 2000, description: "The platform cut, frozen at create (0: none)" },
  platform_fee_to: { ...strOrNull, description: "The wallet the platform cut is paid to (the account's at create); null without a cut" },
  platform_fee_wallets: {
    type: "object",
    properties: { base: str, solana: str, stellar: str },
    additionalProperties: false,
    description:
      "The wallets the platform cut is paid to per chain, frozen at create: base is platform_fee_to, solana the platform's standing Solana payout wallet then (absent when it had none: Solana is then not offered for the checkout); {} without a cut",
  },
  sold_by: { ...strOrNull, description: "What receipts name the platform that created the checkout; null unless a platform account did" },
  inherit_account_payouts: bool,
  wallet_button: bool,
  test_delivery_daily_cap: { type: "integer", minimum: 1 },
};

/** A relay or mcp checkout's origin as read back (all null for inline); the one-off credential never comes back. */
const originProperties = {
  origin_url: { ...strOrNull, description: "The seller's endpoint a relay checkout calls" },
  origin_method: { enum: ["GET", "POST", "PUT", "PATCH", "DELETE", null] },
  origin_auth_type: { enum: ["bearer", "basic", "api_key", "custom", null] },
  origin_auth_header: strOrNull,
  origin_auth_secret_id: { ...strOrNull, description: "The stored origin key calls use" },
  origin_auth_value: { type: "null", description: "Always null: a one-off credential is sealed at rest and never returned" },
  origin_auth_stored: { type: "boolean", description: "A one-off credential is kept (sealed) for this checkout" },
  mcp_tool: { ...strOrNull, description: "mcp: the one tool the checkout sells (null: any tool of the server, named by the buyer's tool parameter)" },
};

const offerCardProperties = {
  input_schema: anyJson,
  output_schema: anyJson,
  example_input: anyJson,
  example_output: anyJson,
  freshness: strOrNull,
  coverage: strOrNull,
  source: strOrNull,
  constraints: strOrNull,
};

const requirementV2 = object(
  {
    scheme: str,
    network: caip2,
    asset: { type: "string", minLength: 1 },
    amount: atomic,
    payTo: { type: "string", minLength: 1 },
    maxTimeoutSeconds: { type: "integer", minimum: 1 },
    extra: object(
      {
        name: str,
        version: str,
        feePayer: str,
        areFeesSponsored: { type: "boolean", const: true, description: "Stellar: the service submits the transaction and pays its fee" },
        checkoutId: str,
        transfers: {
          type: "array",
          minItems: 1,
          items: object({ payTo: { type: "string", minLength: 1 }, amount: atomic }),
          description: "A prepared Solana payment (POST …/prepare): every recipient in order, one TransferChecked each (ADR 16)",
        },
        escrowAvailable: {
          type: "string",
          pattern: "^esc_[0-9A-Za-z]{24}$",
          description: "The same checkout through escrow (escrow_offer optional): the escrow twin's id, sold at /e/{id}",
        },
        escrow: object(
          {
            preset: { enum: ["instant", "standard", "shipping", "custom"] },
            settle_seconds: { type: "integer", minimum: 1 },
            hold_seconds: { type: "integer", minimum: 1 },
            backstop_seconds: { type: "integer", minimum: 1 },
            arbiter: str,
            exits: object({ seller_paid: str, buyer_refunded: str }, { closed: true }),
            if_nobody_acts: str,
          },
          {
            closed: true,
            description: "An escrow face's requirement (scheme escrow): the windows, the arbiter, both exit routes and what happens if nobody acts",
          },
        ),
        schedule: requirementScheduleExtra,
      },
      {
        optional: ["name", "version", "feePayer", "areFeesSponsored", "checkoutId", "transfers", "escrow", "escrowAvailable", "schedule"],
        description:
          "What the scheme needs: on EVM the token's EIP-712 domain (name, version), on Solana the fee payer (feePayer), on Stellar that the fee is sponsored (areFeesSponsored), on an escrow face the escrow's terms (escrow); checkoutId names the checkout",
      },
    ),
    resource: url,
  },
  { optional: ["resource"], description: "One way to pay (x402 v2 PaymentRequirements)" },
);

/**
 * A rehearsal requirement settles simulated: it says so (`extra.rehearsal`)
 * and what it has the buyer sign is valid on no chain: on EVM an
 * authorization under an EIP-712 domain no real token has, on Solana a
 * transaction whose fee payer is an address no key can sign for; on Stellar
 * a testnet authorization the service never submits.
 */
const rehearsalRequirement: Schema = {
  allOf: [
    ref("PaymentRequirement"),
    {
      oneOf: [
        {
          type: "object",
          description: "EVM: the testnet USDC under a domain no token has",
          properties: {
            network: { type: "string", pattern: "^eip155:" },
            extra: {
              type: "object",
              required: ["rehearsal", "name"],
              properties: { rehearsal: { const: true }, name: { type: "string", not: { enum: ["USDC", "USD Coin", "USDC.e", "Bridged USDC"] } } },
            },
          },
        },
        {
          type: "object",
          description: "Solana: the live requirement's shape, its fee payer the rehearsal's program-derived address (no key exists for it)",
          properties: {
            network: { type: "string", pattern: "^solana:" },
            extra: {
              type: "object",
              required: ["rehearsal", "feePayer"],
              properties: { rehearsal: { const: true }, feePayer: { type: "string", pattern: BASE58_ADDRESS.source } },
            },
          },
        },
        {
          type: "object",
          description: "Stellar: on stellar:testnet only (testnet USDC has no value), never submitted by the service",
          properties: {
            network: { const: "stellar:testnet" },
            extra: {
              type: "object",
              required: ["rehearsal", "areFeesSponsored"],
              properties: { rehearsal: { const: true }, areFeesSponsored: { const: true } },
            },
          },
        },
      ],
    },
  ],
};

const requirementV1 = object(
  {
    scheme: str,
    network: { type: "string", pattern: "^[a-z0-9-]+$", description: "Legacy network name (base, base-sepolia)" },
    maxAmountRequired: atomic,
    resource: url,
    description: str,
    mimeType: str,
    payTo: { type: "string", minLength: 1 },
    maxTimeoutSeconds: { type: "integer", minimum: 1 },
    asset: { type: "string", minLength: 1 },
    extra: { type: "object" },
  },
  { description: "One way to pay (x402 v1 PaymentRequirements)" },
);

const offer = object(
  {
    title: str,
    description: strOrNull,
    price_usd: usd,
    fee_usd: usd,
    total_usd: usd,
    calls_included: { type: ["integer", "null"], minimum: 1, description: "A package: the calls one payment buys (null: one call)" },
    ...offerCardProperties,
  },
  { description: "The offer card: what the buyer gets and what it costs, fee included" },
);

const payBlock = object({
  headers: { type: "array", items: str },
  legacy_v1_url: url,
  prepare: url,
  how: str,
});

/** A package checkout's endpoint block names the package: its calls and how long it stays spendable. */
const packageBlock = object({ calls: { type: "integer", minimum: 1 }, expires_in_days: { type: "integer", minimum: 1 }, how: str, usage_url: url });

/** A gated article's endpoint block names the article (never its body): see ArticleBlock. */
const articleBlock = { ...ref("ArticleBlock"), description: "A gated article (faces under /x/): what a reader gets before paying, and the pass terms" };

const liveEndpoint = object(
  {
    url,
    method: { const: "GET" },
    pay: payBlock,
    settlement: { enum: ["simulated", "onchain"] },
    rehearsal: object({ test_url: url, note: str }),
    note: str,
    package: packageBlock,
    article: articleBlock,
  },
  { optional: ["note", "package", "article"], description: "How to call and pay the live face" },
);

const rehearsalEndpoint = object(
  {
    url,
    method: { const: "GET" },
    pay: payBlock,
    settlement: { const: "simulated" },
    rehearsal: object({ test_mode: { const: true }, note: str, live_url: { type: ["string", "null"], format: "uri" }, live_status: str }),
    package: packageBlock,
    article: articleBlock,
  },
  { optional: ["package", "article"], description: "How to call and pay the rehearsal face" },
);

/** The unpaid 402 body of a face in x402 v2 (v1 with `?x402_version=1`). */
function paymentRequiredOf(requirement: Schema, endpoint: Schema) {
  return {
    v2: object(
      {
        x402Version: { const: 2 },
        error: str,
        resource: object({ url, description: str, mimeType: str }, { optional: ["description", "mimeType"] }),
        accepts: { type: "array", minItems: 1, items: requirement },
        extensions: { type: "object" },
        offer: ref("Offer"),
        endpoint,
      },
      { optional: ["extensions"] },
    ),
    v1: object({
      x402Version: { const: 1 },
      error: str,
      accepts: { type: "array", minItems: 1, items: ref("PaymentRequirementV1") },
      offer: ref("Offer"),
      endpoint,
    }),
  };
}
const livePaymentRequired = paymentRequiredOf(ref("PaymentRequirement"), ref("LiveEndpoint"));
const rehearsalPaymentRequired = paymentRequiredOf(ref("RehearsalPaymentRequirement"), ref("RehearsalEndpoint"));

const receipt = object(
  {
    id: idOf("pay"),
    object: { const: "receipt" },
    checkout_id: checkoutOrArticleId,
    title: str,
    network: caip2,
    asset: str,
    asset_address: str,
    amount_usd: usd,
    provider_amount: { type: "integer", minimum: 0 },
    platform_amount: { type: ["integer", "null"], minimum: 0 },
    platform_fee_to: { ...strOrNull, description: "The wallet the platform cut was paid to; null without a cut" },
    fee_amount: { type: "integer", minimum: 0 },
    total: { type: "integer", minimum: 0 },
    payer: str,
    subject: str,
    pay_to: str,
    tx_hash: str,
    test_mode: bool,
    settled_at: timestampOrNull,
    sold_by: strOrNull,
    parties: { type: ["object", "null"], description: "The parties the checkout declared ({buyer, seller}), verbatim" },
    handoff_id: strOrNull,
    split: object({
      seller: { type: "integer", minimum: 0 },
      platform: { type: ["integer", "null"], minimum: 0 },
      protocol_fee: { type: "integer", minimum: 0 },
      total: { type: "integer", minimum: 0 },
      currency: str,
      decimals: { type: "integer", minimum: 0 },
    }),
    delivery: object(
      {
        outcome: {
          type: "string",
          description:
            "delivered (inline goods, or a relay/mcp origin's answer), buyer_error (a relay/mcp origin refused the buyer's request: charged), awaiting_fulfilment or fulfilled (a webhook sale)",
        },
        fulfilled_at: { ...timestampOrNull, description: "A webhook sale: when the seller marked it fulfilled" },
        status: { type: "integer", description: "Relay: the origin's HTTP status" },
        latency_ms: { type: "integer", minimum: 0 },
        bytes: { type: "integer", minimum: 0 },
      },
      { optional: ["status", "latency_ms", "bytes", "fulfilled_at"] },
    ),
    receipt_url: url,
  },
  { description: "A settled payment: permanent, public by its unguessable id" },
);

const paymentPending = object(
  {
    status: { const: "pending" },
    payment_id: idOf("pay"),
    tx_hash: strOrNull,
    receipt_url: url,
    poll: url,
    message: str,
  },
  { description: "Broadcast, not confirmed yet: poll receipt_url (or present the same payment again); never pay again" },
);

const typedData = object({
  types: { type: "object", additionalProperties: { type: "array", items: object({ name: str, type: str }) } },
  primaryType: str,
  domain: object({ name: str, version: str, chainId: { type: "integer", minimum: 1 }, verifyingContract: { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" } }),
  message: { type: "object" },
});

const prepareAnswer = object(
  {
    network: caip2,
    typed_data: { oneOf: [typedData, { type: "null" }], description: "EVM: the EIP-712 typed data to sign; null on Solana" },
    transaction: {
      type: "string",
      pattern: "^[A-Za-z0-9+/]+={0,2}$",
      description: "Solana: the transaction (base64, signatures empty) the payer's wallet signs; absent on EVM",
    },
    payload_stub: object({ x402Version: { enum: [1, 2] }, accepted: ref("PaymentRequirement"), payload: { type: "object" } }, { optional: ["accepted"] }),
    salt: {
      type: "string",
      pattern: "^0x[0-9a-fA-F]{64}$",
      description:
        "An escrow deposit (/e/{id}): the terms' salt; the authorization's nonce is the escrow id of the terms with it, and payload_stub.payload.salt brings it back",
    },
    schedule: {
      type: "array",
      minItems: 1,
      maxItems: 23,
      items: ref("PreparedPeriod"),
      description:
        "A recurring series: one authorization per held period (1 to periods-1), rendered as period 0's, each valid only inside its window (valid_after, valid_before: unix seconds); sign each and send the payloads as POST /c/{id}/pay's body {schedule: [...]}",
    },
    how: str,
    pay_url: {
      ...url,
      description: "Where to present the payment: the face URL with the call parameters sent as params (a relay or mcp checkout checks them first: 422)",
    },
  },
  {
    optional: ["transaction", "salt", "schedule"],
    description: "What to sign (EIP-712 typed data on EVM, a prepared transaction on Solana) and the payload to put it in; signs nothing",
  },
);

const componentHealth: Schema = {
  type: "object",
  required: ["status"],
  properties: {
    status: { enum: ["ok", "down"] },
    latency_ms: { type: "number", minimum: 0 },
    components: { type: "object", additionalProperties: { $ref: "#/components/schemas/ComponentHealth" } },
  },
};

const responseSchemas: Record<string, Schema> = {
  FieldError: object({ field: str, reason: str }),
  Problem: {
    type: "object",
    description: "RFC 9457 problem document; `type` is {site_url}/problems/<slug>; `detail` is kept for existing clients",
    required: ["type", "title", "status", "detail", "help"],
    properties: {
      type: { type: "string", pattern: "/problems/[a-z-]+$" },
      title: str,
      status: { type: "integer", minimum: 400, maximum: 599 },
      detail: object({ message: str, help }),
      help,
      errors: { type: "array", items: ref("FieldError") },
    },
  },
  ServiceMap: object({
    name: str,
    version: str,
    status: { const: "ok" },
    what: str,
    links: object({
      openapi: url,
      llms: url,
      create: url,
      create_checkout: url,
      join_challenge: url,
      join_verify: url,
      mcp: { type: ["string", "null"], format: "uri", description: "null while this deployment serves no MCP endpoint (never a link that answers 404)" },
      site: url,
    }),
    buying: object({
      how: str,
      faces: object({ checkout: str, rehearsal: str, receipt: str }),
      networks: { type: "array", items: caip2, description: "Every network a face of this run quotes: the live ones and the rehearsal one" },
      live_networks: { type: "array", items: caip2, description: "Where live payments settle on-chain in this run (empty: an armed live face answers 503)" },
      rehearsal_network: { ...caip2, description: "The EVM rehearsal network, which every rehearsal face quotes first" },
      rehearsal_networks: {
        type: "array",
        minItems: 1,
        items: caip2,
        description: "Every network a rehearsal face quotes: the EVM one, and a Solana testnet where Solana settles live",
      },
      asset: str,
    }),
    selling: object({ how: str, auth: str, fees: str, platform_quote: url }),
    health: object({ service: url, facilitator: url }),
  }),
  Health: object(
    {
      status: { enum: ["ok", "degraded"] },
      service: str,
      version: str,
      run_mode: { enum: ["embedded", "distributed"] },
      components: { type: "object", additionalProperties: ref("ComponentHealth") },
    },
    { optional: ["components"], description: "Liveness; with deep=true every component's state (the report never fails)" },
  ),
  ComponentHealth: componentHealth,
  WellKnown: object({
    name: str,
    version: str,
    x402: object({
      versions: { type: "array", items: { type: "integer" } },
      schemes: { type: "array", items: str },
      rails: {
        type: "array",
        minItems: 1,
        items: object(
          { network: caip2, asset: str, testnet: bool, settlement: { enum: ["onchain", "simulated"] } },
          { description: "A network this run settles on: on-chain (live faces) or simulated (rehearsals)" },
        ),
      },
    }),
    capabilities: object({ checkouts: { type: "array", items: str }, rehearsal: bool, live: bool }),
    links: object({ openapi: url, llms: url, root: url, facilitator_health: url, platform_quote: url }),
  }),
  OpenApiDocument: object({ openapi: { type: "string", pattern: "^3\\.1\\." }, info: object({ title: str, version: str }), paths: { type: "object" } }),
  WalletChallengeAnswer: object({
    message: { type: "string", minLength: 1 },
    nonce: { type: "string", minLength: 1 },
    expires_at: timestamp,
    expires_in_seconds: { type: "integer", minimum: 1 },
  }),
  PayoutWallet: object({ chain: { type: "string", enum: [...PAYOUT_CHAINS] }, address: str, verified: bool, default: bool }),
  WalletSignUp: object(
    {
      account: object({ id: idOf("acct"), created: { const: true } }),
      api_key: ref("ApiKeyWithSecret"),
      session: ref("BearerSession"),
      payout_wallet: orNull(ref("PayoutWallet")),
    },
    { description: "First sign-in: the account and its first automation key, shown once, with a session beside it" },
  ),
  WalletSignIn: object(
    {
      account: object({ id: idOf("acct"), created: { const: false } }),
      api_key: { ...ref("ApiKeyWithSecret"), description: "A fresh automation key, shown once (key recovery for wallet-only accounts)" },
      session: ref("BearerSession"),
      payout_wallet: orNull(ref("PayoutWallet")),
    },
    { description: "A later sign-in: a fresh automation key, shown once, with a session beside it" },
  ),
  BearerSession: object(
    { token: { type: "string", pattern: "^sess_[0-9A-Za-z]{32}$" }, expires_at: timestamp, note: str },
    { description: "A session's bearer token (scope full, test mode for checkout defaults), shown once" },
  ),
  MagicLinkRequested: object(
    {
      object: { const: "magic_link" },
      sent: { const: true },
      email: { type: "string", maxLength: 254, description: "The address as normalised (trimmed, lowercased), which the link was sent to" },
      expires_at: timestamp,
      expires_in_seconds: { type: "integer", minimum: 1 },
      note: str,
    },
    { description: "The same answer whether or not the address has an account" },
  ),
  LinkSignIn: object(
    {
      object: { const: "session" },
      account: object({ id: idOf("acct"), created: { type: "boolean", description: "true when this verify created the account (the address's first)" } }),
      session: object({
        token: { type: "string", pattern: "^sess_[0-9A-Za-z]{32}$" },
        expires_at: timestamp,
        cookie: { const: "c402_session", description: "The cookie set to the same session" },
        note: str,
      }),
      return_to: { ...strOrNull, description: "The path asked for with the link, if any" },
    },
    { description: "Signed in: a browser session, as a bearer token (shown once) and as the session cookie" },
  ),
  SessionCookie: object({ object: { const: "session_cookie" }, cookie: { const: "c402_session" }, expires_at: timestamp, note: str }),
  ApiKey: object(apiKeyProperties, { closed: true, description: "An API key as listed: its prefix, never its secret" }),
  ApiKeyWithSecret: object(
    { ...apiKeyProperties, secret: { type: "string", pattern: "^sk_(test|live)_[0-9A-Za-z]+$" }, note: str },
    { closed: true, description: "A new API key with its secret, shown once" },
  ),
  EndedSession: object({ object: { const: "session" }, ended: { const: true }, ended_at: timestamp }),
  Profile: object(
    {
      object: { const: "profile" },
      account_id: idOf("acct"),
      slug: { type: ["string", "null"], pattern: "^[a-z0-9][a-z0-9-]{1,38}$", description: "Public handle for /u/<slug> and /r/<slug>/... call URLs" },
      name: { type: ["string", "null"], maxLength: 120 },
      profile_type: { enum: ["individual", "team", "company", null] },
      bio: { type: ["string", "null"], maxLength: 600 },
      avatar_url: { type: ["string", "null"], maxLength: 2048, description: "An absolute http(s) URL, as the seller sent it" },
      website_url: { type: ["string", "null"], maxLength: 2048, description: "An absolute http(s) URL, as the seller sent it" },
      social_links: {
        type: "object",
        maxProperties: 20,
        propertyNames: { pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$" },
        additionalProperties: { type: "string", maxLength: 2048 },
        description: "Links by name (`github`): absolute http(s) URLs",
      },
      verified: { type: "boolean", description: "Set by the operators, never by the seller" },
      created_at: timestamp,
      updated_at: timestamp,
    },
    { closed: true, description: "The seller profile: a field never set (or cleared) is null" },
  ),
  ApiKeyList: object({ keys: { type: "array", items: ref("ApiKey") }, has_more: bool, next_cursor: strOrNull }),
  AccountEvent: object(
    {
      id: idOf("evt"),
      object: { const: "account_event" },
      action: { type: "string", description: "`<object>.<verb>`, e.g. `checkout.created` (docs/account-events.md lists them)" },
      object_id: { type: "string", description: "What changed: a checkout, key, session or account id" },
      detail: { type: "object", description: "The change's particulars (never a secret)" },
      actor: { type: "string", pattern: "^(session|wallet|system|key:[A-Za-z0-9_]+|oauth:[A-Za-z0-9_.:-]+)$" },
      test_mode: bool,
      at: timestamp,
    },
    { closed: true, description: "One state change of the account, in any service" },
  ),
  AccountEventList: object({ events: { type: "array", items: ref("AccountEvent") }, has_more: bool, next_before: strOrNull }),
  Checkout: object(
    {
      ...checkoutSummaryProperties,
      payload: { ...anyJson, description: "The goods (inline); a gated article's body" },
      content: {
        ...orNull(ref("ContentDeclaration")),
        description: "A gated article's declaration, normalized (every field present, defaults filled in); null for any other checkout",
      },
      ...originProperties,
      ...offerCardProperties,
      ...checkoutSettingsProperties,
    },
    { description: "A checkout as created or read back by id" },
  ),
  CheckoutSummary: object(checkoutSummaryProperties, { closed: true, description: "A checkout as lists show it: no goods, no offer-card JSON" }),
  CheckoutList: object({ checkouts: { type: "array", items: ref("CheckoutSummary") }, has_more: bool, next_cursor: strOrNull }),
  CheckoutStatus: { enum: ["open", "paid", "expired", "void"] },
  CheckoutEscrow: object(
    {
      preset: { enum: ["instant", "standard", "shipping", "custom"], description: "custom: windows given one by one" },
      settle_window: { type: "integer", minimum: 1, description: "Seconds from the deposit until anyone may release to the seller" },
      hold_window: { type: "integer", minimum: 1, description: "Seconds from the buyer's hold until anyone may release" },
      backstop_window: { type: "integer", minimum: 1, description: "Seconds from an escalation until anyone may refund the buyer" },
      arbiter_evm: { type: "string", minLength: 1, description: "The arbiter on Base (checksummed): escrow runs on Base only" },
      arbiter_svm: { ...strOrNull, description: "The Solana arbiter as resolved; kept, though no Solana escrow rail is offered" },
    },
    { closed: true, description: "Escrow terms, frozen at create and inside every buyer's deposit signature" },
  ),
  VoidAnswer: object(
    {
      voided: { type: "array", items: checkoutOrArticleId, minItems: 1 },
      already_void: bool,
      liabilities: object({
        live_keys: { type: "integer", minimum: 0 },
        calls_unspent: { type: "integer", minimum: 0 },
        unearned: object({ amount: usd, currency: { const: "USD" } }),
      }),
      checkout: ref("Checkout"),
      note: str,
    },
    { closed: true, description: "A void: what it retired, and what buyers still hold against it" },
  ),
  RestoreAnswer: {
    allOf: [ref("Checkout"), object({ restored: { type: "boolean", description: "false when the checkout was not void (nothing changed)" } })],
  },
  GoLiveAnswer: {
    allOf: [
      ref("Checkout"),
      object({ already_live: bool, rehearsal: object({ test_url: url, note: str }) }, { description: "The armed checkout plus the rehearsal block" }),
    ],
  },
  PaymentRequirement: requirementV2,
  RehearsalPaymentRequirement: rehearsalRequirement,
  PaymentRequirementV1: requirementV1,
  Offer: offer,
  LiveEndpoint: liveEndpoint,
  RehearsalEndpoint: rehearsalEndpoint,
  PaymentRequired: livePaymentRequired.v2,
  PaymentRequiredV1: livePaymentRequired.v1,
  RehearsalPaymentRequired: rehearsalPaymentRequired.v2,
  RehearsalPaymentRequiredV1: rehearsalPaymentRequired.v1,
  PaymentRefused: {
    allOf: [
      ref("Problem"),
      object(
        {
          status: { const: 402 },
          type: { type: "string", pattern: "/problems/payment-required$" },
          reason: { type: "string", minLength: 1, description: "The x402 reason code" },
          accepts: { type: "array", items: ref("PaymentRequirement") },
        },
        { description: "A presented payment was refused: the reason and the face's current requirements" },
      ),
    ],
  },
  Paid: object(
    {
      fulfillment: object(
        {
          mode: { enum: ["inline", "relay", "mcp", "webhook"] },
          payload: { ...anyJson, description: "The goods: inline, or the origin's body (JSON parsed, text, or base64 with encoding)" },
          origin_status: { type: "integer", description: "Relay: the origin's HTTP status" },
          content_type: { ...strOrNull, description: "Relay: the origin's Content-Type" },
          encoding: { const: "base64", description: "Relay: set when the payload is the origin's bytes in base64" },
          status: { const: "awaiting_fulfilment", description: "Webhook: the seller fulfils the sale" },
          note: str,
        },
        { optional: ["origin_status", "content_type", "encoding", "status", "note"] },
      ),
      receipt: ref("Receipt"),
      receipt_url: url,
      redelivered: bool,
      test_mode: bool,
      fault: { const: "buyer", description: "Relay: the origin refused the buyer's request (400, 404, 422); charged, the answer is the product" },
      help: object({ fix: str, retry_is_safe: bool, report: ref("ReportHelp") }),
      ...packagePurchaseProperties,
      schedule: ref("PurchasedSchedule"),
    },
    { optional: ["fault", "help", ...PACKAGE_PURCHASE_FIELDS, "schedule"], description: "The goods and the receipt in one response" },
  ),
  ReportHelp: object(
    { url, method: { const: "POST" }, body: object({ category: str, receipt_id: idOf("pay") }, { optional: ["receipt_id"] }) },
    { description: "Where a buyer reports a problem with the checkout (public)" },
  ),
  PaymentPending: paymentPending,
  EscrowHeld: object(
    {
      fulfillment: { type: "object", description: "The goods, as a settled sale's (Paid.fulfillment)" },
      receipt: { type: "null", description: "No receipt while the payment is held: it appears when the escrow releases it to the seller" },
      escrow: object({
        payment_id: idOf("pay"),
        status: { const: "held" },
        status_url: { ...url, description: "GET /e/{id}/status?payment_id=: the escrow's state and what happens next" },
        note: str,
      }),
      redelivered: bool,
      test_mode: bool,
    },
    { description: "An escrow sale: the goods delivered with the deposit, the payment held in escrow (no receipt, no checkout.paid until release)" },
  ),
  EscrowStatus: object(
    {
      object: { const: "escrow_status" },
      payment_id: idOf("pay"),
      checkout_id: idOf("esc"),
      network: caip2,
      state: { enum: ["held", "on_hold", "escalated", "released", "refunded", null] },
      next_step: { ...str, description: "What happens next (or what happened), in one sentence" },
      deadline: { ...timestampOrNull, description: "When the next timed exit opens; null in a final state" },
      receipt_url: { ...orNull(url), description: "Set once released (the receipt exists from then)" },
      test_mode: bool,
    },
    { description: "Where an escrow stands, as its service knows it (the state follows the chain)" },
  ),
  Analytics: analyticsSchema(),
  Receipt: receipt,
  ReceiptList: object({ receipts: { type: "array", items: ref("Receipt") }, has_more: bool, next_cursor: strOrNull }),
  FulfilledReceipt: { allOf: [ref("Receipt"), object({ already_fulfilled: bool })] },
  ReceiptPending: object({ id: idOf("pay"), status: { const: "pending" }, tx_hash: strOrNull, message: str }),
  HandoffAnswer: object({ payment_id: idOf("pay"), receipt_url: url, escrow_state: { enum: [null, "held"] }, test_mode: bool }),
  PrepareAnswer: prepareAnswer,
  RehearsalPrepareAnswer: {
    allOf: [
      ref("PrepareAnswer"),
      {
        type: "object",
        properties: {
          typed_data: {
            type: "object",
            properties: { domain: { type: "object", properties: { name: { not: { enum: ["USDC", "USD Coin", "USDC.e", "Bridged USDC"] } } } } },
          },
        },
      },
    ],
  },
  PlatformSettings: object(
    {
      platform_account: bool,
      platform_fee_bps: { type: "integer", minimum: 0, maximum: 2000 },
      platform_fee_to: { ...strOrNull, description: "The EVM wallet the cut is paid to (checksummed)" },
      fee_wallets: {
        type: "object",
        additionalProperties: str,
        description:
          "The fee wallet per network (CAIP-2) a checkout of this account can settle on in this run: platform_fee_to on the EVM networks, and the account's standing Solana payout wallet on the Solana network when it has one; {} without a fee wallet",
      },
      max_bps: { type: "integer", const: 2000 },
    },
    { closed: true, description: "The account's platform mode and standing fee: the defaults a checkout copies at create" },
  ),
  EmbedSettings: object(
    {
      object: { type: "string", const: "embed_settings" },
      embed_origins: { type: "array", items: str, description: "The origins that may frame the account's pay pages and receipts; [] allows none" },
      note: str,
      changed: { type: "boolean", description: "PUT only: false when the list already was this one (nothing recorded)" },
    },
    { closed: true, optional: ["changed"], description: "The account's embed settings" },
  ),
  EmbedCheck: object(
    {
      object: { type: "string", const: "embed_check" },
      checkout_id: checkoutOrArticleId,
      origin: { type: "string", description: "The page origin checked, normalised (scheme, host, port)" },
      status: { type: "string", description: "The checkout's status (open, paid, expired, void …): a checkout that no longer sells shows that in its frame" },
      framing_allowed: {
        type: "boolean",
        description:
          "Whether browsers show the checkout's pay page in a frame on this origin (it is among the seller's embed origins, or an article's canonical origin)",
      },
      origin_allowable: {
        type: "boolean",
        description: "Whether the origin could be allowlisted at all (https, or plain http on localhost or a loopback address)",
      },
      allowed_origins_count: { type: "integer", minimum: 0, description: "How many origins may frame this checkout (0: none may)" },
      wallet_button: {
        type: "boolean",
        description: "Whether the framed page takes payment with the buyer's wallet; false shows the offer with a link to the checkout page",
      },
      button_mode: { type: "boolean", const: true, description: 'data-svc-mode="button" (a link to the face) works on any origin, without an allowlist' },
      face_url: url,
      message: { type: "string", description: "What to do, in a sentence, for the seller's console" },
    },
    { closed: true, description: "Why an embed on an origin shows the checkout or stays blank (GET /embed/check)" },
  ),
  PlatformQuote: object(
    {
      price_usd: usd6,
      platform_fee_bps: { type: "integer", minimum: 0, maximum: 2000 },
      buyer_pays: usd6,
      seller_receives: usd6,
      platform_cut: usd6,
      protocol_fee: usd6,
    },
    {
      closed: true,
      description: "buyer_pays = price_usd + protocol_fee (0.5% + $0.01, on top); seller_receives + platform_cut = price_usd (the cut comes out of the price)",
    },
  ),
  ChainHealth: object(
    {
      networks: { type: "array", items: caip2, description: "The networks the family settles live (what /x402/{family}/supported lists)" },
      available: { type: "boolean", description: "Whether the family's facilitator can verify and settle a live payment now" },
      settles: { enum: ["live", "rehearsal-only", "none"] },
      reason: { type: ["string", "null"], description: "Why the family is not available; null when it is" },
    },
    { closed: true },
  ),
  FacilitatorHealth: object(
    {
      status: { enum: ["ok", "degraded"], description: "degraded: the payments service did not answer (then no family is available)" },
      checked_at: timestamp,
      chains: object({ base: ref("ChainHealth"), solana: ref("ChainHealth"), stellar: ref("ChainHealth") }, { closed: true }),
    },
    { description: "What each chain family settles right now; the same keys whatever the state" },
  ),
  FacilitatorSupported: object({
    kinds: {
      type: "array",
      items: object({ x402Version: { type: "integer" }, scheme: str, network: str, extra: { type: "object" } }, { optional: ["extra"] }),
    },
    extensions: { type: "array", items: str },
    signers: { type: "object", additionalProperties: { type: "array", items: str } },
  }),
  VerifyAnswer: {
    type: "object",
    required: ["isValid"],
    properties: { isValid: bool, invalidReason: str, invalidMessage: str, payer: str },
    anyOf: [{ properties: { isValid: { const: true } } }, { properties: { isValid: { const: false } }, required: ["invalidReason"] }],
  },
  SettleAnswer: {
    type: "object",
    required: ["success", "transaction", "network"],
    properties: { success: bool, errorReason: str, errorMessage: str, payer: str, transaction: str, network: str },
    anyOf: [{ properties: { success: { const: true } } }, { properties: { success: { const: false } }, required: ["errorReason"] }],
  },
  ...reportResponseSchemas(),
  ...packageResponseSchemas(),
  ...payoutResponseSchemas(),
  ...escrowResponseSchemas(),
  ...scheduleResponseSchemas(),
  ...spendingWalletResponseSchemas(),
  ...originKeyResponseSchemas(),
  ...webhookResponseSchemas(),
  ...catalogueResponseSchemas(),
  ...contentResponseSchemas(),
};

// ---- Operations -----------------------------------------------------------

const json = (description: string, schema: Schema, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/json": { schema } },
});
const html = { schema: { type: "string" } };
/** The Set-Cookie of a sign-in: the session cookie (Secure unless the service runs on loopback http). */
const sessionCookieHeader = header("The session cookie: c402_session=<token>; Max-Age; Path=/; HttpOnly; SameSite=Lax (and Secure)", {
  type: "string",
  pattern: "^c402_session=sess_[0-9A-Za-z]{32};",
});

/** Request bodies, with an example a client could send as is. */
const EXAMPLE_ADDRESS = "0x000000000000000000000000000000000000dEaD";
const EXAMPLE_REQUIREMENT = {
  scheme: "exact",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  amount: "10500",
  payTo: EXAMPLE_ADDRESS,
  maxTimeoutSeconds: 300,
  extra: { name: "USDC", version: "2" },
};
const EXAMPLES: Partial<Record<keyof typeof schemas, unknown>> = {
  CheckoutCreate: {
    title: "Weather for Paris",
    price_usd: "0.10",
    description: "Current conditions",
    payload: { temp_c: 21 },
    reusable: true,
    expires_in_minutes: 60,
    freshness: "hourly",
  },
  EscrowCheckoutCreate: {
    title: "Hand-made chair",
    price_usd: "120.00",
    payload: { order: "Ships within 5 days" },
    escrow_preset: "shipping",
    arbiter_evm: "0x00000000000000000000000000000000000a4b17",
  },
  ApiKeyCreate: { name: "reporting", scope: "read_only", mode: "test" },
  ProfilePatch: {
    name: "Ada's Weather",
    profile_type: "company",
    bio: "Hourly forecasts for European cities.",
    website_url: "https://weather.example",
    social_links: { github: "https://github.com/example" },
  },
  WalletChallenge: { address: EXAMPLE_ADDRESS, network: "eip155:8453" },
  MagicLinkRequest: { email: "ada@example.com", return_to: "/auth/me" },
  MagicLinkVerify: { token: `ml_${"A".repeat(43)}` },
  WalletVerify: { message: "example.com wants you to sign in with your Ethereum account: …", signature: `0x${"11".repeat(65)}` },
  FacilitatorRequest: {
    network: "eip155:84532",
    requirement: EXAMPLE_REQUIREMENT,
    payload: {
      x402Version: 2,
      accepted: EXAMPLE_REQUIREMENT,
      payload: {
        signature: `0x${"11".repeat(65)}`,
        authorization: {
          from: EXAMPLE_ADDRESS,
          to: EXAMPLE_ADDRESS,
          value: "10500",
          validAfter: "0",
          validBefore: "4102444800",
          nonce: `0x${"00".repeat(32)}`,
        },
      },
    },
  },
  PaymentPrepare: { payer: EXAMPLE_ADDRESS, network: "eip155:84532" },
  ...REPORT_EXAMPLES,
  ...PAYOUT_EXAMPLES,
  ...ESCROW_EXAMPLES,
  ...SCHEDULE_EXAMPLES,
  ...SPENDING_WALLET_EXAMPLES,
  ...ORIGIN_KEY_EXAMPLES,
  ...WEBHOOK_EXAMPLES,
  ...CONTENT_EXAMPLES,
};
const body = (name: keyof typeof schemas) => ({
  required: true,
  content: { "application/json": { schema: ref(name), ...(EXAMPLES[name] !== undefined ? { example: EXAMPLES[name] } : {}) } },
});
/** What every operation with a JSON body may answer about the body itself. */
const bodyProblems = {
  responses: {
    "400": use("BadRequest"),
    "413": use("PayloadTooLarge"),
    "415": use("UnsupportedMediaType"),
    "422": use("InvalidRequest"),
  },
};
/** A create's Idempotency-Key (POST /v1/checkouts and /v1/escrow-checkouts share one scope per account and key mode). */
const idempotencyKeyHeader = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
  description:
    "A repeat with the same body (in any key order) returns the original checkout, byte for byte, with Idempotency-Replayed: true; another body is 422; while the first is in flight, 409 with Retry-After. A refused create releases the key. Kept 24 hours, per account and key mode.",
};
/** What a checkout create answers beside its 400 (whose causes differ per route). */
const checkoutCreatedResponses = {
  "201": json("Checkout with url and test_url", ref("Checkout"), {
    "Idempotency-Replayed": header("true when this is the original answer to the same Idempotency-Key", { const: "true" }, false),
  }),
  "409": use("Conflict"),
  "422": use("InvalidOrPayoutAccountMissing"),
  "503": use("Unavailable"),
};
/** What every authenticated operation may answer; 403 only where it has a minimum scope above read_only. */
function authenticated(minimumScope: "read_only" | "payments" | "full", selfRevocation = false) {
  return {
    security: [{ apiKey: [] }, { sessionCookie: [] }],
    "x-minimum-scope": minimumScope,
    responses: {
      "400": use("BadRequest"),
      "401": use("Unauthenticated"),
      ...(minimumScope !== "read_only" || selfRevocation ? { "403": use("Forbidden") } : {}),
      "429": use("RateLimited"),
    },
  };
}
type Responses = Record<string, unknown>;
/** An operation: its own fields, with the shared ones (responses and security) merged under its own. */
function operation(op: Record<string, unknown> & { responses: Responses }, ...shared: (Record<string, unknown> & { responses: Responses })[]) {
  const merged: Responses = Object.assign({}, ...shared.map((s) => s.responses), op.responses);
  const extra = Object.assign({}, ...shared.map(({ responses: _r, ...rest }) => rest));
  return { ...extra, ...op, responses: Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b))) };
}

const pathParam = (name: string, schema: Schema, description?: string) => ({
  name,
  in: "path",
  required: true,
  schema,
  ...(description ? { description } : {}),
});
/** A face's checkout (/c/{id}: chk_… only; gated articles have their own faces under /x/). */
const checkoutId = pathParam("id", idOf("chk"), "Checkout id");
/** A checkout as the seller's routes name it: a gated article (cnt_…) is a checkout there too. */
const sellerCheckoutId = pathParam("id", checkoutOrArticleId, "Checkout id (cnt_… for a gated article, esc_… for an escrow checkout)");
const pageQuery = [
  { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 200, default: 50 }, description: "Page size" },
  {
    name: "cursor",
    in: "query",
    required: false,
    schema: { type: "string", minLength: 1 },
    description: "Opaque: the next_cursor of the previous page",
  },
];
/** GET /v1/platform/quote: the price as checkout create takes it, and the platform's fee. */
const quoteQuery = [
  {
    name: "price_usd",
    in: "query",
    required: true,
    schema: { type: "string", pattern: "^(0|[1-9][0-9]*)(\\.[0-9]{1,6})?$" },
    description: "The seller's price as checkout create takes it: a decimal string of at most six decimals, more than 0, at most 1000000",
  },
  {
    name: "platform_fee_bps",
    in: "query",
    required: false,
    schema: { type: "integer", minimum: 0, maximum: 2000, default: 0 },
    description: "The platform's cut in basis points, out of the price",
  },
];
/** GET /v1/analytics: sums in USDC atomic units (integers), money owed as decimal USD. */
function analyticsSchema(): Schema {
  const count = { type: "integer", minimum: 0 };
  const sums = { payments: count, gross_usd: usd6, seller_amount: count, platform_amount: count, fee_amount: count, total: count };
  const unearned = object({ amount: usd6, currency: { const: "USD" } });
  return object(
    {
      object: { const: "analytics" },
      days: { type: "integer", minimum: 1, maximum: 366 },
      since: timestamp,
      until: timestamp,
      test_mode: bool,
      currency: { const: "USDC" },
      decimals: { const: 6 },
      earnings: object({
        ...sums,
        per_day: {
          type: "array",
          items: object({ date: { type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" }, ...sums }),
          description: "Every UTC day of the window, oldest first",
        },
        per_checkout: {
          type: "array",
          items: object({ checkout_id: checkoutOrArticleId, title: str, ...sums }),
          description: "By seller_amount, largest first (at most 100)",
        },
      }),
      buyers: object(
        { distinct: count, returning: count },
        { description: "By subject (the buyer's pseudonym for this seller); returning: at least two purchases" },
      ),
      failed_deliveries: object(
        { purchases: count, package_calls: count, total: count },
        { description: "Relay and mcp calls that failed on the seller's side (not charged)" },
      ),
      liabilities: object(
        {
          live_keys: count,
          calls_unspent: count,
          unearned,
          offers: { type: "array", items: object({ checkout_id: idOf("chk"), live_keys: count, calls_unspent: count, unearned }) },
        },
        { description: "What live packages still owe (expired and used-up ones excluded); offers most unearned first (at most 100)" },
      ),
    },
    { description: "A seller's figures over a window of UTC days" },
  );
}

/** The receipts ledger's filters (GET /v1/receipts and its export). */
const ledgerQuery = [
  {
    name: "test_mode",
    in: "query",
    required: false,
    schema: { type: "string", enum: ["true", "false"], default: "false" },
    description: "true: the rehearsal ledger; real payments only otherwise",
  },
  { name: "sold_by", in: "query", required: false, schema: { type: "string", minLength: 1, maxLength: 200 }, description: "Sales one platform made" },
  { name: "from", in: "query", required: false, schema: { type: "string", format: "date-time" }, description: "Settled at or after (ISO 8601)" },
  { name: "to", in: "query", required: false, schema: { type: "string", format: "date-time" }, description: "Settled before (ISO 8601)" },
];
const paymentHeaders = [
  { name: "PAYMENT-SIGNATURE", in: "header", required: false, schema: { type: "string" }, description: "x402 v2 payment payload, base64 JSON" },
  { name: "X-PAYMENT", in: "header", required: false, schema: { type: "string" }, description: "Same payload under the v1 header name" },
];
const faceQuery = [
  {
    name: "x402_version",
    in: "query",
    required: false,
    schema: { type: "string", enum: ["1", "2"] },
    description:
      "1 answers the 402 body in the x402 v1 form (legacy network names, maxAmountRequired, absolute resource) for the legacy x402-fetch 1.2.0 client; the PAYMENT-REQUIRED header is always v2",
  },
  {
    name: "h",
    in: "query",
    required: false,
    schema: { type: "string", pattern: HANDOFF_NONCE.source },
    description: "Handoff nonce: a paid request carrying it can be found at /c/{id}/handoff/{nonce}",
  },
];
const base64: Schema = { type: "string", pattern: "^[A-Za-z0-9+/]+={0,2}$" };
const paymentResponseHeader = { "PAYMENT-RESPONSE": header("The x402 SettleResponse, base64 JSON", base64) };
/** A paid answer's headers; a relay rehearsal adds its checkout's daily rehearsal budget as X-RateLimit-* (the day is UTC). */
const paidHeaders = { ...paymentResponseHeader, ...rateLimitHeaders(false) };
/** A face's 200: a paid answer's headers, except that a package call (no payment in it) has no PAYMENT-RESPONSE; it carries the key's budget as X-RateLimit-*. */
const faceOkHeaders = {
  "PAYMENT-RESPONSE": header("The x402 SettleResponse, base64 JSON (absent on a package call)", base64, false),
  ...rateLimitHeaders(false),
};

/** A retired test twin's URLs are /c/{twin}…: the operations under /c/{id} also answer 307 to the rehearsal face's (spec, Payment rules 6). */
function orRetiredTwin<O extends { responses: Record<string, unknown> }>(op: O): O {
  return { ...op, responses: { ...op.responses, "307": use("RetiredTwin") } };
}

function qrOperation(face: "live" | "rehearsal", id: unknown = checkoutId) {
  return operation({
    summary: `SVG QR code of the ${face} face URL (with h, the URL carries the handoff nonce and the answer is no-store; without, cached a day)`,
    parameters: [
      id,
      {
        name: "h",
        in: "query",
        required: false,
        schema: { type: "string", pattern: HANDOFF_NONCE.source },
        description: "Handoff nonce the code carries: the phone's payment names it, and the showing page polls the face's handoff/{nonce}",
      },
    ],
    responses: {
      "200": { description: "The QR code", content: { "image/svg+xml": { schema: { type: "string" } } } },
      "400": use("BadRequest"),
      "404": use("NotFound"),
      "422": use("InvalidRequest"),
    },
  });
}

/** GET of a face, or its POST twin (`/pay`: the same payment header, always JSON, an optional body that is empty for now). */
/**
 * A face's answer with this status: the shared problem, or (a relay checkout)
 * the seller's origin answering the buyer's request with it, charged: the
 * goods envelope with `fault: buyer` (application/json, not a problem).
 */
function orRelayAnswer(name: "BadRequest" | "NotFound" | "InvalidRequest") {
  const shared = responses[name];
  return {
    description: `${shared.description}. Or, on a relay checkout, the seller's origin answered the buyer's request with this status: charged, the origin's body with the receipt (or, a package call, what is left) and fault buyer`,
    content: { ...shared.content, "application/json": { schema: { anyOf: [ref("Paid"), ref("PackageCall")] } } },
  };
}

function faceOperation(face: "live" | "rehearsal", method: "get" | "post" = "get", id: unknown = checkoutId) {
  const [v2, v1] = face === "live" ? ["PaymentRequired", "PaymentRequiredV1"] : ["RehearsalPaymentRequired", "RehearsalPaymentRequiredV1"];
  const post = method === "post";
  const pages = post ? {} : { "text/html": html };
  return operation(
    {
      summary:
        (face === "live" ? "Live face: pay and get the goods" : "Rehearsal face (simulated settlement, no funds move)") +
        (post ? " (POST twin of paying by header on GET)" : ""),
      description: post
        ? "As GET of the face with PAYMENT-SIGNATURE (or X-PAYMENT): the goods and the receipt, or 402 with the reason the payment was refused; without a payment, the 402 with the requirements (JSON). The body is optional: a recurring series' purchase sends `{schedule: [payload, …]}`, the held periods' signed payloads (the prepare answer's schedule[] payload_stubs, signed, in order), beside period 0's payment in the header; every held payload is verified before anything settles, and the paid answer adds the series (`schedule`: id, url, status, periods, periods_settled, paid_through, next_charge_at). Only /c/ faces sell series: `schedule` elsewhere is 422."
        : "Without a payment: 402 with the requirements (JSON, or the pay page for browsers: `Accept: text/html`). With PAYMENT-SIGNATURE (or X-PAYMENT): the goods and the receipt, or 402 with the reason the payment was refused. With `Authorization: Bearer <package_key>` (and no payment): one call of the package, on either face (60 a minute per key by default, X-RateLimit-*).",
      ...(post ? { requestBody: { ...body("FacePay"), required: false } } : {}),
      parameters: [id, ...paymentHeaders, packageKeyHeader, ...faceQuery],
      responses: {
        "200": json(
          "Goods and receipt in one response (a package purchase adds its key); or a package call's answer",
          { anyOf: [ref("Paid"), ref("PackageCall")] },
          faceOkHeaders,
        ),
        "401": use("PackageKeyRefused"),
        "202": json("Settlement broadcast but not confirmed yet", ref("PaymentPending"), paidHeaders),
        "400": orRelayAnswer("BadRequest"),
        "402": {
          description:
            "Payment required. Unpaid: the x402 body (v2, or v1 with x402_version=1) with accepts[], the offer card and the endpoint block, or the pay page for browsers. A presented payment refused: a problem document with `reason` and accepts[]. The v2 requirements are in PAYMENT-REQUIRED",
          headers: {
            "PAYMENT-REQUIRED": header("The x402 v2 PaymentRequired, base64 JSON (with `error` naming a refusal's reason)", base64, false),
            "PAYMENT-RESPONSE": header("On a failed settlement: the failure SettleResponse, base64 JSON", base64, false),
          },
          content: {
            "application/json": { schema: { anyOf: [ref(v2), ref(v1)] } },
            "application/problem+json": { schema: { anyOf: [ref("PaymentRefused"), problemOf(402, packageExhaustedExtra)] } },
            ...pages,
          },
        },
        "404": orRelayAnswer("NotFound"),
        "409": problemResponse(
          "A relay or mcp payment presented while an earlier request with it still waits for the seller's origin, or whose claim that request released: nothing was charged; present the same payment again",
          409,
          { "Retry-After": header("Seconds before presenting it again", wholeNumber, false) },
        ),
        "410": use("Gone"),
        "422": orRelayAnswer("InvalidRequest"),
        "429": {
          description: `${responses.RehearsalCapReached.description}; or a package key's calls per minute are spent`,
          headers: { "Retry-After": header("Seconds until a retry can succeed", wholeNumber), ...rateLimitHeaders(false) },
          content: {
            "application/problem+json": { schema: { anyOf: [responses.RehearsalCapReached.content["application/problem+json"].schema, problemOf(429)] } },
          },
        },
        "431": use("HeadersTooLarge"),
        "502": use("RelayFailed"),
        "503": use("Unavailable"),
      },
    },
    ...(post ? [bodyProblems] : []),
  );
}

/**
 * A call URL under the seller's handle: the face of a relay or mcp checkout
 * of that seller, answered exactly as /c/{id}; 404 when the handle is not
 * the checkout's seller's or the checkout sells no calls.
 */
function callUrlOperation(face: "live" | "rehearsal") {
  const op = faceOperation(face) as { summary: string; description: string; parameters: unknown[] };
  return {
    ...op,
    summary: `Call URL (${face} face) of a relay or mcp checkout under its seller's handle`,
    description: `${op.description} A slug never holds \`_\` and a payment id always does, so /r/{payment_id} (a receipt) and /r/{slug}/{id} never meet. 404 when the handle is not the checkout's seller's (a slug changed: saved call URLs break), or the checkout sells no calls.`,
    parameters: [pathParam("slug", { type: "string", pattern: "^[a-z0-9][a-z0-9-]{1,38}$" }, "The seller's handle"), ...op.parameters],
  };
}

const escrowCheckoutId = pathParam("id", idOf("esc"), "Escrow checkout id");

/** An escrow checkout's face (ADR 19): a checkout face's operation whose requirement is a deposit and whose paid answer is held. */
function escrowFaceOperation(face: "live" | "rehearsal", method: "get" | "post" = "get") {
  const op = faceOperation(face, method, escrowCheckoutId) as { summary: string; description: string; responses: Record<string, unknown> };
  return {
    ...op,
    summary: `Escrow ${op.summary.charAt(0).toLowerCase()}${op.summary.slice(1)}`,
    description: `${op.description} An escrow checkout's requirement has scheme \`escrow\`: payTo the escrow contract, the amount the price plus the escrow fee (1% + $0.02, replacing the standard fee), extra.escrow the windows, the arbiter, both exit routes and what happens if nobody acts. Sign it through POST …/prepare (a ReceiveWithAuthorization whose nonce is the terms' escrow id; the payload brings back the salt). Paid: the goods with the payment held in escrow (no receipt until release).`,
    responses: { ...op.responses, "200": json("The goods, the payment held in escrow", ref("EscrowHeld"), faceOkHeaders) },
  };
}

/** The escrow checkout's faces (/e/{id}), beside /c/{id}'s. */
function escrowFacePaths() {
  return {
    "/e/{id}": { get: escrowFaceOperation("live") },
    "/e/{id}/test": { get: escrowFaceOperation("rehearsal") },
    "/e/{id}/pay": { post: escrowFaceOperation("live", "post") },
    "/e/{id}/test/pay": { post: escrowFaceOperation("rehearsal", "post") },
    "/e/{id}/qr.svg": { get: qrOperation("live", escrowCheckoutId) },
    "/e/{id}/test/qr.svg": { get: qrOperation("rehearsal", escrowCheckoutId) },
    "/e/{id}/prepare": { post: prepareOperation("live", escrowCheckoutId) },
    "/e/{id}/test/prepare": { post: prepareOperation("rehearsal", escrowCheckoutId) },
    "/e/{id}/status": {
      get: operation({
        summary: "Where a buyer's escrow stands, and what happens next",
        parameters: [escrowCheckoutId, { name: "payment_id", in: "query", required: true, schema: idOf("pay"), description: "The escrow's payment id" }],
        responses: { "200": json("The escrow's state", ref("EscrowStatus")), "404": use("NotFound"), "422": use("InvalidRequest") },
      }),
    },
    "/e/{id}/handoff/{nonce}": {
      get: operation({
        summary: "The payment (settled, or held in escrow) that arrived with a handoff nonce (404 until there is one)",
        parameters: [escrowCheckoutId, pathParam("nonce", { type: "string", pattern: HANDOFF_NONCE.source }, "Handoff nonce")],
        responses: { "200": json("The payment", ref("HandoffAnswer")), "404": use("NotFound"), "422": use("InvalidRequest") },
      }),
    },
  };
}

/** POST …/prepare of a face: of a checkout (/c/), or of a gated article (/x/, `id` its cnt_ parameter). */
function prepareOperation(face: "live" | "rehearsal", id: unknown = checkoutId) {
  return operation(
    {
      summary: `Typed data to sign for the ${face} face`,
      parameters: [id],
      requestBody: body("PaymentPrepare"),
      responses: {
        "200": json("typed_data, payload_stub, network", ref(face === "live" ? "PrepareAnswer" : "RehearsalPrepareAnswer")),
        "404": use("NotFound"),
        "410": use("Gone"),
        "503": use("Unavailable"),
      },
    },
    bodyProblems,
  );
}

const familyParam = pathParam("family", { type: "string", enum: ["base", "stellar", "solana"] }, "Chain family");

/** The facilitator's POST operations share their request body; a refused payment is a 200 with isValid/success false. */
function facilitatorOperation(what: string, answer: "VerifyAnswer" | "SettleAnswer") {
  return operation(
    {
      summary: `Facilitator: ${what}`,
      description:
        "Like the reference facilitator: anything refused (a bad signature, a requirement this service did not issue, malformed addresses or amounts) answers 200 with isValid/success false and the reason. Rate limited per client address and per payer.",
      parameters: [familyParam],
      requestBody: body("FacilitatorRequest"),
      responses: {
        "200": json(
          answer === "VerifyAnswer" ? "{isValid, invalidReason?, payer?}" : "{success, errorReason?, transaction, network, payer?}",
          ref(answer),
          rateLimitHeaders(),
        ),
        "404": use("NotFound"),
        "429": use("RateLimited"),
        "503": use("Unavailable"),
      },
    },
    bodyProblems,
  );
}

/** The document; operations that name no operationId get one derived from their method and path (openapi-conventions.ts). */
export function openApiDocument(baseUrl: string, version: string, serviceName: string) {
  return withOperationIds({
    openapi: "3.1.0",
    info: {
      title: "Hosted x402 checkout service",
      version,
      description: [
        "Pay-per-request checkouts on the x402 protocol.",
        "Errors are RFC 9457 problem documents (application/problem+json) whose `type` ends with /problems/<slug>.",
        "Every checkout's rehearsal face (`/c/{id}/test`, `/x/{id}/test`) settles simulated payments, which anyone can sign with an empty wallet, and delivers the same product as the live face: inline goods included, as the spec has it. Relay and mcp calls and gated articles (each purchase and each read with a pass) on a rehearsal face are metered by the checkout's `test_delivery_daily_cap` per UTC day (429 `rate-limited` with `live_url` past it); inline and webhook rehearsals are not. Goods that must stay protected are sold by relay (paid only on delivery) or as a gated article, not as inline goods.",
        "Besides what each operation lists: a path with a malformed percent-escape answers 400 (bad-request); a known path with a method it does not list answers 405 (method-not-allowed) with an `Allow` header; request headers over 16 KiB answer 431 (headers-too-large); an unknown path answers 404 (not-found); while the database it needs cannot be reached, any operation answers 503 (unavailable) with `Retry-After`, having decided nothing, so the same request may be sent again.",
      ].join(" "),
    },
    servers: [{ url: baseUrl }],
    components: {
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description: "sk_test_… or sk_live_… API key. Scopes escalate read_only < payments < full; `x-minimum-scope` names what an operation needs",
        },
        sessionCookie: {
          type: "apiKey",
          in: "cookie",
          name: "c402_session",
          description:
            "The browser session cookie (set by /auth/verify and POST /auth/session/cookie), accepted wherever a key is; the Authorization header wins when both are sent. A write it authenticates (any method but GET, HEAD, OPTIONS) must come from this site: Sec-Fetch-Site same-origin or none, otherwise Origin equal to the service's; anything else is 403.",
        },
      },
      schemas: { ...schemas, ...responseSchemas },
      responses,
    },
    paths: {
      "/": { get: { summary: "Service map", responses: { "200": json("Self-describing map", ref("ServiceMap")) } } },
      "/openapi.json": { get: { summary: "This document", responses: { "200": json("OpenAPI 3.1 document", ref("OpenApiDocument")) } } },
      "/llms.txt": {
        get: { summary: "Plain-text guide", responses: { "200": { description: "Guide", content: { "text/plain": { schema: { type: "string" } } } } } },
      },
      "/docs": { get: { summary: "Browsable documentation", responses: { "200": { description: "HTML page", content: { "text/html": html } } } } },
      [`/.well-known/${serviceName}`]: { get: { summary: "Capabilities, rails, links", responses: { "200": json("Capabilities", ref("WellKnown")) } } },
      "/health": {
        get: {
          summary: "Liveness; ?deep=true checks every component",
          parameters: [{ name: "deep", in: "query", required: false, schema: { type: "boolean", default: false } }],
          description:
            "Without `deep`: liveness, from the process alone. With `deep=true`: every component's state; 503 with the same body (status `degraded`) while any is down. Why a component is down is logged with the request id, never answered.",
          responses: {
            "200": json("Component state", ref("Health")),
            "503": json("A component is down (the same body, status degraded)", ref("Health"), {
              "Retry-After": header("Seconds before asking again", { type: "string", pattern: "^[0-9]+$" }),
            }),
          },
        },
      },
      "/health/facilitator": {
        get: operation({
          operationId: "getFacilitatorHealth",
          summary: "What each chain family (base, solana, stellar) settles right now",
          description:
            "Never a 5xx: when the payments service does not answer, 200 with status `degraded` and every family unavailable with its reason. Not cached.",
          responses: {
            "200": json("Per-family state, always the same keys", ref("FacilitatorHealth"), {
              "Cache-Control": header("Never cached", { const: "no-store" }),
            }),
            "400": use("BadRequest"),
          },
        }),
      },
      "/auth/wallet/challenge": {
        post: operation(
          {
            summary: "Wallet sign-in: get a message to sign",
            description:
              "A single-use sign-in message (EIP-4361's layout) naming this service, the wallet, the network and a nonce; it lives 10 minutes. EVM wallets (eip155:<chain id>) and Stellar accounts (stellar:pubnet, stellar:testnet) sign in.",
            requestBody: body("WalletChallenge"),
            responses: { "200": json("Challenge", ref("WalletChallengeAnswer"), rateLimitHeaders()), "429": use("RateLimited"), "503": use("Unavailable") },
          },
          bodyProblems,
        ),
      },
      "/auth/wallet/verify": {
        post: operation(
          {
            summary: "Wallet sign-in: verify the signature",
            description:
              "The signature is over the challenge's message unchanged: an EVM wallet's personal_sign (EIP-191), or a Stellar wallet's sign-message (SEP-53). The wallet becomes the account's verified default payout wallet of its chain. Every sign-in mints a fresh automation key (test mode, scope full), shown once, and opens a 24-hour bearer session beside it. 201 on the first sign-in (the account is created; the key is its first), 200 on a later one (key recovery for wallet-only accounts).",
            requestBody: body("WalletVerify"),
            responses: {
              "200": json("Signed in", ref("WalletSignIn"), rateLimitHeaders()),
              "201": json("Account created", ref("WalletSignUp"), rateLimitHeaders()),
              "401": use("SignInRefused"),
              "429": use("RateLimited"),
              "503": use("Unavailable"),
            },
          },
          bodyProblems,
        ),
      },
      "/auth/logout": {
        post: operation(
          {
            summary: "Log out: end the session this request is authenticated with",
            description:
              "Ends the session of the bearer token or of the session cookie (one session either way): its token gets 401 from then on, and the answer clears the cookie (Max-Age=0). An API key is not a session: 403 (revoke a key with DELETE /v1/keys/{key_id}).",
            responses: {
              "200": json("The session ended", ref("EndedSession"), {
                "Set-Cookie": header("Clears the session cookie", { type: "string", pattern: "^c402_session=;" }),
              }),
              "403": use("Forbidden"),
              "404": use("NotFound"),
            },
            "x-credential": "session",
          },
          authenticated("read_only"),
        ),
      },
      "/auth/magic-link/request": {
        post: operation(
          {
            operationId: "requestMagicLink",
            summary: "Magic-link sign-in: mail a sign-in link to an address",
            description:
              "The link works once, within 15 minutes; following it signs in (the first time for an address, it creates the account). The answer is the same whether or not the address has an account. Rate limited per client address and per address (5 per 15 minutes). Without SMTP_URL the service writes each mail as an .eml file under DATA_DIR/mail/.",
            requestBody: body("MagicLinkRequest"),
            responses: {
              "200": json("The link is on its way", ref("MagicLinkRequested"), rateLimitHeaders()),
              "429": use("RateLimited"),
              "503": use("Unavailable"),
            },
          },
          bodyProblems,
        ),
      },
      "/auth/verify": {
        post: operation(
          {
            operationId: "verifyMagicLink",
            summary: "Magic-link sign-in: consume a link's token",
            description:
              "Opens a 24-hour browser session: its bearer token (shown once) and the HttpOnly session cookie of the same session. Unknown, used and expired links are refused alike (401).",
            requestBody: body("MagicLinkVerify"),
            responses: {
              "200": json("Signed in", ref("LinkSignIn"), { ...rateLimitHeaders(), "Set-Cookie": sessionCookieHeader }),
              "401": use("LinkRefused"),
              "429": use("RateLimited"),
              "503": use("Unavailable"),
            },
          },
          bodyProblems,
        ),
        get: operation({
          operationId: "followMagicLink",
          summary: "Magic-link sign-in: the link itself (consumes it, sets the session cookie, redirects)",
          description:
            "303 to the `return_to` path the link was asked with (only a path on this site), or to /auth/me. Unknown, used and expired links are refused alike (401).",
          parameters: [
            { name: "token", in: "query", required: true, schema: { type: "string", minLength: 1, maxLength: 256 }, description: "The link's token" },
          ],
          responses: {
            "303": {
              description: "Signed in: the session cookie is set, and the browser goes on to the landing path",
              headers: {
                Location: header("A path on this site", { type: "string", pattern: "^/(?![/\\\\])" }),
                "Set-Cookie": sessionCookieHeader,
              },
            },
            "400": use("BadRequest"),
            "401": use("LinkRefused"),
            "422": use("InvalidRequest"),
            "429": use("RateLimited"),
            "503": use("Unavailable"),
          },
        }),
      },
      "/auth/session/cookie": {
        post: operation(
          {
            operationId: "createSessionCookie",
            summary: "Set the session cookie for the session this request carries",
            description:
              "With a session's bearer token (the dashboard's), sets the HttpOnly session cookie of that same session. An automation key (sk_test_/sk_live_) is refused with 403, whatever its scope.",
            responses: {
              "200": json("The cookie is set", ref("SessionCookie"), { "Set-Cookie": sessionCookieHeader }),
              "403": use("Forbidden"),
            },
            "x-credential": "session",
          },
          authenticated("read_only"),
        ),
      },
      "/auth/me": {
        get: operation(
          {
            operationId: "getProfile",
            summary: "The seller profile of the account the credential belongs to",
            description:
              "Any seller credential (API key of any scope, or a wallet session). An account that never changed its profile has every field null, no social links, and is not verified.",
            responses: { "200": json("The full profile record", ref("Profile")) },
          },
          authenticated("read_only"),
        ),
        patch: operation(
          {
            operationId: "updateProfile",
            summary: "Change the seller profile (scope full): only the fields sent change",
            description:
              'A value sets a field, "" clears it, null or leaving it out keeps it; `social_links` replaces every link ({} removes them all). A slug another account holds answers 409; a value the profile rules refuse (slug pattern or reserved word, lengths, URLs that are not absolute http(s)), an unknown field or `verified` answer 422 naming the field. A change is recorded as one `profile.updated` account event; a patch that changes nothing records none.',
            requestBody: body("ProfilePatch"),
            responses: { "200": json("The updated profile", ref("Profile")), "409": use("Conflict") },
          },
          authenticated("full"),
          bodyProblems,
        ),
      },
      "/v1/keys": {
        post: operation(
          {
            summary: "Create an API key (scope full)",
            requestBody: body("ApiKeyCreate"),
            responses: { "201": json("Key with its secret, shown once", ref("ApiKeyWithSecret")) },
          },
          authenticated("full"),
          bodyProblems,
        ),
        get: operation(
          {
            summary: "List keys (prefixes only), newest first",
            parameters: pageQuery,
            responses: { "200": json("A page of keys", ref("ApiKeyList")), "422": use("InvalidRequest") },
          },
          authenticated("read_only"),
        ),
      },
      "/v1/keys/{key_id}": {
        delete: operation(
          {
            summary: "Revoke a key (any key may revoke itself; another key needs scope full)",
            parameters: [pathParam("key_id", idOf("key"), "Key id")],
            responses: { "204": { description: "Revoked" }, "404": use("NotFound") },
          },
          authenticated("read_only", true),
        ),
      },
      "/v1/account/events": {
        get: operation(
          {
            summary: "The account's events, newest first: every state change in every service",
            parameters: [
              { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 200, default: 50 }, description: "Page size" },
              {
                name: "action",
                in: "query",
                required: false,
                schema: { type: "string", pattern: "^[a-z_.]{1,100}$" },
                description: "Only actions starting with this prefix (e.g. `checkout.`)",
              },
              {
                name: "before",
                in: "query",
                required: false,
                schema: { type: "string" },
                description: "An event id (the next_before of the previous page) or an ISO 8601 time with its zone",
              },
            ],
            responses: { "200": json("A page of events", ref("AccountEventList")), "422": use("InvalidRequest") },
          },
          authenticated("read_only"),
        ),
      },
      "/v1/checkouts": {
        post: operation(
          {
            summary: "Create a checkout",
            description:
              "With `content` (the declaration) the checkout is a gated article: its id is cnt_…, its faces are /x/{id} and /x/{id}/test, and a purchase answers a pass that opens it again. The article is the `payload` (a string of text or HTML, or any JSON value), or, with origin_url instead, what the seller's origin answers (a relay article: called for each purchase and each read with a pass). " +
              "`escrow_offer: optional` creates an escrow twin (esc_…, face /e/{id}) in the same step, under the account's default escrow terms, answered as `escrow_twin` (the twin names the checkout back); `escrow_offer: required`, or the account's escrow_policy `always`, makes the create an escrow one (as POST /v1/escrow-checkouts with no escrow fields). The escrow policy `disabled` refuses either with 409.",
            parameters: [idempotencyKeyHeader],
            requestBody: body("CheckoutCreate"),
            responses: {
              ...checkoutCreatedResponses,
              "400": problemResponse(
                "Malformed request (invalid JSON, a corrupt compressed body, a malformed percent-escape in the path); or escrow_offer and content together, or content under the escrow policy always (an article is opened by a pass, an escrow holds funds until the buyer accepts): `errors` names escrow_offer or content",
                400,
              ),
            },
          },
          authenticated("payments"),
          bodyProblems,
        ),
        get: operation(
          {
            summary: "List checkouts, newest first",
            parameters: [{ name: "include_voided", in: "query", required: false, schema: { type: "boolean", default: false } }, ...pageQuery],
            responses: { "200": json("A page of checkout summaries", ref("CheckoutList")), "422": use("InvalidRequest") },
          },
          authenticated("read_only"),
        ),
      },
      "/v1/escrow-checkouts": {
        post: operation(
          {
            summary: "Create an escrow checkout",
            description:
              "The checkout create body (escrow_offer aside) plus the escrow create fields. Its id is esc_…, its faces /e/{id} and /e/{id}/test, and its `escrow` terms are frozen at create: the preset (default: the account's escrow_default_preset), each window named overriding the preset's, and the arbiter per chain (named here, else the account's escrow setting, else the service default). A platform account creating for a sub-seller must name an arbiter. Escrow runs on Base only: the checkout needs a Base payout wallet (pay_to) and an EVM arbiter other than pay_to (422 naming arbiter_evm); its other payout rails are kept but not offered for escrow. Sold inline or relay only; never with content (400) or series fields (422). The account's escrow policy `disabled` refuses it with 409.",
            parameters: [idempotencyKeyHeader],
            requestBody: body("EscrowCheckoutCreate"),
            responses: {
              ...checkoutCreatedResponses,
              "400": problemResponse(
                "Malformed request (invalid JSON, a corrupt compressed body, a malformed percent-escape in the path); or content (an article is opened by a pass, an escrow holds funds until the buyer accepts): `errors` names content",
                400,
              ),
            },
          },
          authenticated("payments"),
          bodyProblems,
        ),
      },
      "/v1/checkouts/{id}": {
        get: operation(
          { summary: "Get a checkout", parameters: [sellerCheckoutId], responses: { "200": json("Checkout", ref("Checkout")), "404": use("NotFound") } },
          authenticated("read_only"),
        ),
        patch: operation(
          {
            summary: "Change offer-card fields (null clears one; price_usd and pay_to never change)",
            description:
              "A gated article (cnt_…) also takes `payload` (the article, replaced whole) and `content` (the whole declaration, replacing the stored one): both are live for the next read. Any other checkout refuses them (422).",
            parameters: [sellerCheckoutId],
            requestBody: body("CheckoutOfferPatch"),
            responses: { "200": json("The updated checkout", ref("Checkout")), "404": use("NotFound"), "409": use("Conflict") },
          },
          authenticated("payments"),
          bodyProblems,
        ),
        delete: operation(
          {
            summary: "Void the checkout: its faces answer 410, receipts still resolve (never blocked by liabilities)",
            parameters: [sellerCheckoutId],
            responses: { "200": json("What was voided, and the liabilities still held", ref("VoidAnswer")), "404": use("NotFound") },
          },
          authenticated("payments"),
        ),
      },
      "/v1/checkouts/{id}/restore": {
        post: operation(
          {
            summary: "Undo a void; the status is recomputed (a sold single-shot comes back paid)",
            parameters: [sellerCheckoutId],
            responses: { "200": json("The checkout", ref("RestoreAnswer")), "404": use("NotFound") },
          },
          authenticated("payments"),
        ),
      },
      "/v1/checkouts/{id}/extend": {
        post: operation(
          {
            summary: "Move or clear the deadline: an expired checkout sells again under the same URL (refused for void and paid)",
            parameters: [sellerCheckoutId],
            requestBody: body("CheckoutExtend"),
            responses: { "200": json("The checkout", ref("Checkout")), "404": use("NotFound"), "409": use("Conflict") },
          },
          authenticated("payments"),
          bodyProblems,
        ),
      },
      "/v1/checkouts/{id}/go-live": {
        post: operation(
          {
            summary: "Arm the live face (idempotent)",
            parameters: [sellerCheckoutId],
            responses: {
              "200": json("Checkout plus rehearsal block", ref("GoLiveAnswer")),
              "404": use("NotFound"),
              "409": use("Conflict"),
              "410": use("Gone"),
            },
          },
          authenticated("payments"),
        ),
      },
      "/c/{id}": { get: orRetiredTwin(faceOperation("live")) },
      "/c/{id}/test": { get: faceOperation("rehearsal") },
      "/r/{slug}/{id}": { get: callUrlOperation("live") },
      "/r/{slug}/{id}/test": { get: callUrlOperation("rehearsal") },
      "/c/{id}/usage": {
        get: operation({
          summary: "A package's usage record (free; spends nothing): calls, what is left, the burn projection",
          parameters: [
            checkoutId,
            { ...packageKeyHeader, required: true, description: "Bearer <package_key>: the package bought on this checkout" },
            { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 100, default: 100 }, description: "Calls per page" },
            { name: "before", in: "query", required: false, schema: { type: "integer", minimum: 1 }, description: "The calls before this seq (the next page)" },
          ],
          responses: {
            "200": json("The usage record", ref("PackageUsage"), rateLimitHeaders()),
            "401": use("PackageKeyRefused"),
            "404": use("NotFound"),
            "422": use("InvalidRequest"),
            "429": use("RateLimited"),
            "503": use("Unavailable"),
          },
        }),
      },
      "/c/{id}/handoff/{nonce}": {
        get: orRetiredTwin(
          operation({
            summary: "The settled payment that arrived with a handoff nonce (404 until there is one; a wrong nonce looks the same)",
            parameters: [checkoutId, pathParam("nonce", { type: "string", pattern: HANDOFF_NONCE.source }, "Handoff nonce")],
            responses: {
              "200": json("The payment", ref("HandoffAnswer")),
              "400": use("BadRequest"),
              "404": use("NotFound"),
              "422": use("InvalidRequest"),
            },
          }),
        ),
      },
      "/c/{id}/qr.svg": { get: orRetiredTwin(qrOperation("live")) },
      "/c/{id}/test/qr.svg": { get: qrOperation("rehearsal") },
      "/c/{id}/pay": { post: orRetiredTwin(faceOperation("live", "post")) },
      "/c/{id}/test/pay": { post: faceOperation("rehearsal", "post") },
      "/c/{id}/prepare": { post: orRetiredTwin(prepareOperation("live")) },
      "/c/{id}/test/prepare": { post: prepareOperation("rehearsal") },
      ...escrowFacePaths(),
      "/v1/receipts": {
        get: operation(
          {
            summary: "The receipts ledger: the account's settled payments, newest first by settlement",
            description:
              "Real payments only unless test_mode=true (the rehearsal ledger). Rows carry sold_by; filters sold_by and a settlement range (from inclusive, to exclusive).",
            parameters: [...pageQuery, ...ledgerQuery],
            responses: { "200": json("A page of receipts", ref("ReceiptList")), "422": use("InvalidRequest") },
          },
          authenticated("read_only"),
        ),
      },
      "/v1/analytics": {
        get: operation(
          {
            summary: "Earnings, buyers, failed deliveries and package liabilities over the last `days` UTC days (today included)",
            parameters: [
              {
                name: "days",
                in: "query",
                required: false,
                schema: { type: "integer", minimum: 1, maximum: 366, default: 30 },
                description: "Window length in UTC days",
              },
              {
                name: "test_mode",
                in: "query",
                required: false,
                schema: { type: "string", enum: ["true", "false"], default: "false" },
                description: "true: the rehearsal ledger's sales and failures (liabilities are always real packages')",
              },
            ],
            responses: { "200": json("The figures (USDC atomic units, exact)", ref("Analytics")), "422": use("InvalidRequest") },
          },
          authenticated("read_only"),
        ),
      },
      "/v1/receipts/export": {
        get: operation(
          {
            summary: "The receipts ledger as CSV (RFC 4180), streamed: every row the filters keep, parties flattened into columns",
            description: `Columns: ${RECEIPT_CSV_COLUMNS.join(", ")}. A text cell a spreadsheet would take for a formula (=, +, -, @, a tab or carriage return first) starts with an apostrophe.`,
            parameters: ledgerQuery,
            responses: {
              "200": {
                description: "The CSV file (a header row, then one row per receipt)",
                headers: { "Content-Disposition": header("attachment; filename=receipts.csv (receipts-test.csv for the rehearsal ledger)", str) },
                content: { "text/csv": { schema: { type: "string" } } },
              },
              "422": use("InvalidRequest"),
            },
          },
          authenticated("read_only"),
        ),
      },
      "/v1/receipts/{payment_id}": {
        get: operation(
          {
            summary: "One of the account's receipts (another account's is 404)",
            parameters: [pathParam("payment_id", idOf("pay"), "The receipt's id")],
            responses: {
              "200": json("The receipt", ref("Receipt")),
              "202": json("Settlement broadcast but not confirmed yet", ref("ReceiptPending")),
              "404": use("NotFound"),
            },
          },
          authenticated("read_only"),
        ),
      },
      "/v1/receipts/awaiting-fulfilment": {
        get: operation(
          {
            summary: "Webhook sales still to fulfil, newest first by settlement",
            parameters: pageQuery,
            responses: { "200": json("A page of receipts", ref("ReceiptList")), "422": use("InvalidRequest") },
          },
          authenticated("read_only"),
        ),
      },
      "/v1/receipts/{payment_id}/fulfilled": {
        post: operation(
          {
            summary: "Mark a webhook sale fulfilled (a second call answers it unchanged, already_fulfilled true)",
            parameters: [pathParam("payment_id", idOf("pay"), "The receipt's id")],
            responses: {
              "200": json("The receipt, closed out", ref("FulfilledReceipt")),
              "404": use("NotFound"),
              "409": use("Conflict"),
            },
          },
          authenticated("payments"),
        ),
      },
      "/r/{payment_id}": {
        get: operation({
          summary: "Receipt: JSON, or HTML for browsers (Accept: text/html)",
          parameters: [pathParam("payment_id", idOf("pay"), "Payment id")],
          responses: {
            "200": { description: "Receipt", content: { "application/json": { schema: ref("Receipt") }, "text/html": html } },
            "202": json("Settlement pending", ref("ReceiptPending")),
            "400": use("BadRequest"),
            "404": use("NotFound"),
          },
        }),
      },
      "/r/{payment_id}/download": {
        get: operation({
          summary: "Self-contained receipt file (HTML)",
          parameters: [pathParam("payment_id", idOf("pay"), "Payment id")],
          responses: {
            "200": {
              description: "HTML file",
              headers: { "Content-Disposition": header("attachment; filename=…", { type: "string", pattern: "^attachment" }) },
              content: { "text/html": html },
            },
            "400": use("BadRequest"),
            "404": use("NotFound"),
          },
        }),
      },
      "/r/by-tx/{tx_hash}": {
        get: operation({
          summary: "Redirect to the receipt of a transaction",
          parameters: [pathParam("tx_hash", { type: "string", pattern: "^0x[0-9a-fA-F]{64}$" }, "Transaction hash")],
          responses: {
            "303": { description: "See the receipt", headers: { Location: header("The receipt's URL", url) } },
            "400": use("BadRequest"),
            "404": use("NotFound"),
          },
        }),
      },
      "/x402/{family}/supported": {
        get: operation({
          summary: "Facilitator: supported kinds (family base, stellar or solana)",
          parameters: [familyParam],
          responses: { "200": json("{kinds, extensions, signers}", ref("FacilitatorSupported")), "400": use("BadRequest"), "404": use("NotFound") },
        }),
      },
      "/x402/{family}/verify": { post: facilitatorOperation("verify a payment", "VerifyAnswer") },
      "/x402/{family}/settle": { post: facilitatorOperation("settle a payment on-chain", "SettleAnswer") },
      "/v1/account/platform": {
        get: operation(
          {
            operationId: "getPlatformSettings",
            summary: "The account's platform mode and standing fee",
            description: "Any seller credential. An account that never set it is not a platform: no fee, no fee wallet.",
            responses: { "200": json("The platform settings", ref("PlatformSettings")) },
          },
          authenticated("read_only"),
        ),
        put: operation(
          {
            operationId: "putPlatformSettings",
            summary: "Replace the account's platform settings (scope full)",
            description:
              "A fee above 0 needs `platform_account: true` and `platform_fee_to`, an EVM address (EIP-55 checksum when mixed case; stored checksummed). Checkouts created afterwards copy the settings (a create's own `platform_fee_bps` wins); existing checkouts keep the fee they were created with. A change is recorded as one `platform.updated` account event.",
            requestBody: body("PlatformSettingsPut"),
            responses: { "200": json("The new settings", ref("PlatformSettings")) },
          },
          authenticated("full"),
          bodyProblems,
        ),
      },
      "/v1/account/embed": {
        get: operation(
          {
            operationId: "getEmbedSettings",
            summary: "The origins allowed to frame your pay pages and receipts",
            description: "Any seller credential. Until an origin is allowlisted nothing may frame `/c/`, `/c/{id}/test` or `/r/` (`frame-ancestors 'none'`).",
            responses: { "200": json("The embed settings", ref("EmbedSettings")) },
          },
          authenticated("read_only"),
        ),
        put: operation(
          {
            operationId: "putEmbedSettings",
            summary: "Replace the origins allowed to frame your pay pages and receipts (scope full)",
            description:
              "The list replaces the one before. Origins only (https, or http on localhost or a loopback address; no path, no wildcard): 422 names each refused entry. The pay page (`Accept: text/html`) and the receipt page then answer `Content-Security-Policy: frame-ancestors <origins>` without `X-Frame-Options`; JSON answers stay unframeable. A change is recorded as one `embed.updated` account event.",
            requestBody: body("EmbedSettingsPut"),
            responses: { "200": json("The new settings", ref("EmbedSettings")) },
          },
          authenticated("full"),
          bodyProblems,
        ),
      },
      "/embed/check": {
        get: operation({
          operationId: "getEmbedCheck",
          summary: "Why an embed shows a checkout or stays blank on a page origin (public; the embed script's diagnostic)",
          description:
            "Answers whether browsers frame the checkout's pay page on `origin` (the seller's embed origins, PUT /v1/account/embed; an article's canonical origin too), whether the frame takes payment (wallet_button), and what to do, in `message`. Readable from any page (Access-Control-Allow-Origin: *); never cached. A missing, repeated or malformed parameter answers 422 naming it; an unknown checkout 404.",
          parameters: [
            { name: "checkout_id", in: "query", required: true, schema: checkoutOrArticleId, description: "The id in the mount's data-svc" },
            {
              name: "origin",
              in: "query",
              required: true,
              schema: { type: "string", minLength: 1, maxLength: 300 },
              description: "The embedding page's origin (location.origin), such as https://shop.example",
            },
          ],
          responses: {
            "200": json("The check", ref("EmbedCheck"), {
              "Access-Control-Allow-Origin": header("Any page may read it", { const: "*" }),
              "Cache-Control": header("Never cached", { const: "no-store" }),
            }),
            "400": use("BadRequest"),
            "404": use("NotFound"),
            "422": use("InvalidRequest"),
          },
        }),
      },
      "/v1/platform/quote": {
        get: operation({
          operationId: "getPlatformQuote",
          summary: "What a price splits into under a platform fee (no key)",
          description:
            "Exact integer maths in USDC atomic units, printed as USD with six decimals: the platform cut comes out of the price (percentages round down), the protocol fee (0.5% of the price + $0.01) goes on top for the buyer. A missing or malformed parameter answers 422 naming it; other parameters are ignored.",
          parameters: quoteQuery,
          responses: {
            "200": json("The split", ref("PlatformQuote"), {
              "Cache-Control": header("A pure function of the query: public, cacheable briefly", { type: "string", pattern: "^public, max-age=[0-9]+$" }),
            }),
            "400": use("BadRequest"),
            "422": use("InvalidRequest"),
          },
        }),
      },
      ...reportPaths({ operation, authenticated, bodyProblems, use, json, body, pathParam, checkoutId: sellerCheckoutId, pageQuery, rateLimitHeaders }),
      ...payoutPaths({ operation, authenticated, bodyProblems, use, json, body, checkoutId: sellerCheckoutId }),
      ...escrowPaths({ operation, authenticated, bodyProblems, use, json, body, pathParam, pageQuery }),
      ...schedulePaths({ operation, authenticated, bodyProblems, use, json, body, pathParam, pageQuery }),
      ...spendingWalletPaths({
        operation,
        authenticated,
        bodyProblems,
        use,
        problem: problemResponse,
        json,
        body,
        pathParam,
        pageQuery,
        rateLimitHeaders,
        header,
      }),
      ...contentPaths({
        operation,
        authenticated,
        bodyProblems,
        use,
        problem: problemResponse,
        shared: (name) => responses[name],
        json,
        header,
        body,
        pathParam,
        faceOperation,
        prepareOperation,
        base64,
        wholeNumber,
      }),
      ...originKeyPaths({ operation, authenticated, bodyProblems, use, json, body, pathParam, pageQuery }),
      ...webhookPaths({ operation, authenticated, bodyProblems, use, json, header, body, pathParam, pageQuery }),
      ...cataloguePaths({ operation, use, json, pathParam, pageQuery }),
    },
  });
}
