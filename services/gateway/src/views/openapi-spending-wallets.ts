import { SPENDING_CHAINS } from "./spending-wallets";
import { anyJson, atomic, bool, caip2, idOf, object, orNull, ref, str, strOrNull, timestamp, timestampOrNull, url, usd, type Schema } from "./openapi-schema";

/**
 * Spending wallets (ADR 21) in the OpenAPI document: /v1/spending-wallets/*
 * and /v1/rehearsal-checkout. openapi.ts merges them in and hands over its
 * operation helpers (as for openapi-schedules.ts). "Session only" operations
 * say so in their description and answer 403 to any key or OAuth token; their
 * x-credential is `session` (as for logout); pay's is `live` (a live key, an
 * OAuth token or a session: a test key is 403).
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };

export interface SpendingWalletOperationKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  authenticated: (minimumScope: "read_only" | "payments" | "full") => Part;
  bodyProblems: Part;
  use: (
    name: "NotFound" | "Conflict" | "InvalidRequest" | "InvalidOrPayoutAccountMissing" | "Unavailable" | "Forbidden" | "RateLimited" | "UpstreamFailed",
  ) => unknown;
  problem: (description: string, status: 402) => unknown;
  json: (description: string, schema: Schema, headers?: Record<string, unknown>) => unknown;
  body: (name: "SpendingPay" | "SpendingLimitsPut" | "SpendingAgentKeyCreate") => unknown;
  pathParam: (name: string, schema: Schema, description?: string) => unknown;
  pageQuery: unknown[];
  rateLimitHeaders: (required?: boolean) => Record<string, unknown>;
  header: (description: string, schema: Schema, required?: boolean) => unknown;
}

/** Request bodies a client could send as they are. */
export const SPENDING_WALLET_EXAMPLES = {
  SpendingPay: { url: "https://pay.example/c/chk_WeatherParis000000000000", max_usd: "0.25", params: { city: "Paris" } },
  SpendingLimitsPut: { per_payment_usd: "1.00", per_day_usd: "10.00" },
  SpendingAgentKeyCreate: { name: "agent" },
};

const chain: Schema = { enum: [...SPENDING_CHAINS] };

export function spendingWalletResponseSchemas(): Record<string, Schema> {
  const limits = object(
    {
      per_payment_usd: usd,
      per_day_usd: usd,
      spent_today_usd: { ...usd, description: "Confirmed spends and reservations not yet settled, this UTC day" },
      left_today_usd: usd,
      day_resets_at: { ...timestampOrNull, description: "When the UTC day ends" },
    },
    { closed: true, description: "The wallet's limits and what is spent and left of the UTC day" },
  );
  return {
    SpendingWallet: object(
      {
        id: idOf("swl"),
        object: { const: "spending_wallet" },
        chain,
        network: caip2,
        address: { ...str, description: "Checksummed on Base, base58 on Solana" },
        status: { enum: ["active", "archived"] },
        created_at: timestamp,
        revealed_at: { ...timestampOrNull, description: "When its key was last revealed (the owner's too from then on)" },
        archived_at: timestampOrNull,
      },
      { closed: true, description: "A spending wallet: addresses only, never the secret" },
    ),
    SpendingWalletList: object({ wallets: { type: "array", items: ref("SpendingWallet") } }, { closed: true }),
    SpendingWalletSecret: object(
      {
        phrase: { ...str, description: "The BIP-39 phrase (12 words)" },
        private_key: { ...str, description: "0x hex on Base; base58 of the 64-byte secret key on Solana" },
        derivation_path: str,
      },
      { closed: true, description: "The wallet's secret: shown at creation and at each reveal, never otherwise" },
    ),
    SpendingLimits: limits,
    SpendingWalletCreated: object(
      { wallet: ref("SpendingWallet"), secret: ref("SpendingWalletSecret"), limits: ref("SpendingLimits"), note: str },
      { closed: true, description: "The new wallet with its secret, shown once" },
    ),
    SpendingWalletRevealed: object({ wallet: ref("SpendingWallet"), secret: ref("SpendingWalletSecret") }, { closed: true }),
    SpendingWalletArchived: object({ wallet: ref("SpendingWallet") }, { closed: true }),
    SpendingBalance: object(
      {
        chain,
        network: orNull(caip2),
        address: strOrNull,
        usdc: { ...atomic, description: "USDC in atomic units (6 decimals)" },
        usd: { ...usd, description: "The same in USD" },
        native: { ...atomic, description: "The gas coin in its atomic unit (wei, lamports)" },
        native_symbol: str,
        asset: { ...str, description: "The USDC contract or mint read" },
        nagging: { ...bool, description: "The wallet holds more than $999" },
        warning: strOrNull,
      },
      { closed: true, description: "What the wallet holds, read from the chain" },
    ),
    SpendingReceipt: object(
      {
        spend_id: idOf("spd"),
        network: caip2,
        transaction: { ...str, description: "The settlement's hash or signature" },
        payer: str,
        pay_to: str,
        amount: atomic,
        amount_usd: usd,
        receipt_url: { ...orNull(url), description: "The seller's receipt, when its answer named one" },
        paid_at: timestampOrNull,
      },
      { closed: true, description: "The payment: the seller's settlement and the service's record of the spend" },
    ),
    SpendingPaid: object(
      {
        paid: { ...bool, description: "false when the URL answered without asking for payment" },
        url,
        status: { type: ["integer", "null"], description: "The seller's HTTP status" },
        content_type: strOrNull,
        receipt: orNull(ref("SpendingReceipt")),
        goods: {
          ...anyJson,
          description: "The seller's answer: parsed JSON for a JSON content type, a string for text/*, otherwise {content_type, base64}",
        },
        limits: ref("SpendingLimits"),
      },
      { closed: true, description: "The goods and the receipt" },
    ),
    SpendingFunding: object(
      {
        token: { const: "USDC" },
        asset: str,
        chain,
        network: caip2,
        address: str,
        amount_usd: orNull(usd),
        amount: orNull(atomic),
        uri: { ...str, description: "EIP-681 (Base) or Solana Pay (Solana)" },
        links: { type: "array", items: object({ app: str, url: str }, { closed: true, description: "The request in a wallet app" }) },
      },
      { closed: true, description: "A payment request that funds the wallet" },
    ),
    SpendingWalletEvent: object(
      {
        id: idOf("evt"),
        wallet_id: idOf("swl"),
        kind: { enum: ["created", "spent", "revealed", "flagged", "revoked", "refused"] },
        actor: { ...str, description: "session, key:<prefix>, oauth:<client>" },
        reason: { ...strOrNull, description: "Why, for a refused event (test_key, over_limit, insufficient_balance…)" },
        url: strOrNull,
        amount_usd: orNull(usd),
        transaction: strOrNull,
        spend_id: orNull(idOf("spd")),
        at: timestampOrNull,
      },
      { closed: true },
    ),
    SpendingWalletEventList: object({ events: { type: "array", items: ref("SpendingWalletEvent") }, has_more: bool, next_cursor: strOrNull }, { closed: true }),
    SpendingHealth: object(
      {
        ok: bool,
        problems: { type: "array", items: object({ component: str, message: str }, { closed: true }) },
        chains: { type: "array", items: chain },
      },
      { closed: true, description: "The service's self-check: what is wrong, by component" },
    ),
    RehearsalCheckout: object(
      {
        url: { ...url, description: "The rehearsal face (BASE_URL/c/{id}/test): any x402 client pays it free" },
        ask: { ...str, description: "An instruction an owner can paste to an agent" },
      },
      { closed: true },
    ),
  };
}

export function spendingWalletPaths(k: SpendingWalletOperationKit): Record<string, Record<string, unknown>> {
  const CHAIN = k.pathParam("chain", chain, "The wallet's chain (any other is 404)");
  const refused = { "403": k.use("Forbidden") };
  const onWallet = { "404": k.use("NotFound"), "503": k.use("Unavailable") };
  const sessionOnly = "A signed-in session only (cookie or session token): any API key or OAuth token is 403.";
  // x-credential session: no key reaches it whatever its scope (the permission matrix calls it with a session); 403 is among its answers.
  const sessionAuth = { ...k.authenticated("full"), "x-minimum-scope": "read_only", "x-credential": "session" };
  const keyOrSession = "Any API key or a session; an OAuth token is 403.";
  const amountQuery = {
    name: "amount",
    in: "query",
    required: false,
    schema: { type: "string", pattern: "^(0|[1-9][0-9]{0,8})(\\.[0-9]{1,6})?$" },
    description: "USD to ask for (a decimal string)",
  };
  return {
    "/v1/spending-wallets/health": {
      get: k.operation({
        operationId: "getSpendingWalletsHealth",
        summary: "The spending wallets' self-check (no credential)",
        description: "Names what is wrong: the keyring, each chain's RPC, wallets sealed under a retired key. 503 with the same body when not ok.",
        responses: {
          "200": k.json("All is well", ref("SpendingHealth")),
          "503": k.json("Something is wrong: `problems` names it", ref("SpendingHealth"), {
            "Retry-After": k.header("Seconds before asking again", { type: "string", pattern: "^[0-9]+$" }),
          }),
        },
      }),
    },
    "/v1/spending-wallets": {
      get: k.operation(
        {
          operationId: "listSpendingWallets",
          summary: "The account's spending wallets (addresses only)",
          description: `${keyOrSession} Never reads the chain, never shows a secret.`,
          responses: { "200": k.json("The wallets", ref("SpendingWalletList")), ...refused, "503": k.use("Unavailable") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/spending-wallets/keys": {
      post: k.operation(
        {
          operationId: "createSpendingAgentKey",
          summary: "Mint a live `payments` key for an agent (session only)",
          description: `${sessionOnly} The key is shown once; no payout wallet is needed. The body is optional: {name} (default "agent").`,
          requestBody: { ...(k.body("SpendingAgentKeyCreate") as Record<string, unknown>), required: false },
          responses: { "201": k.json("The key with its secret, shown once", ref("ApiKeyWithSecret")), "503": k.use("Unavailable") },
        },
        sessionAuth,
        k.bodyProblems,
      ),
    },
    "/v1/spending-wallets/{chain}": {
      post: k.operation(
        {
          operationId: "createSpendingWallet",
          summary: "Generate the chain's spending wallet (session only)",
          description: `${sessionOnly} Answers the secret (phrase and key) once, no-store. One active wallet per chain: a second is 409.`,
          parameters: [CHAIN],
          responses: { "201": k.json("The wallet with its secret, shown once", ref("SpendingWalletCreated")), "409": k.use("Conflict"), ...onWallet },
        },
        sessionAuth,
      ),
      delete: k.operation(
        {
          operationId: "archiveSpendingWallet",
          summary: "Archive the chain's spending wallet (session only)",
          description: `${sessionOnly} Its funds stay where they are, at its address; reveal it first to keep its key.`,
          parameters: [CHAIN],
          responses: { "200": k.json("The archived wallet", ref("SpendingWalletArchived")), ...onWallet },
        },
        sessionAuth,
      ),
    },
    "/v1/spending-wallets/{chain}/balance": {
      get: k.operation(
        {
          operationId: "getSpendingWalletBalance",
          summary: "What the wallet holds (reads the chain)",
          description: `${keyOrSession} nagging: true plus a warning above $999.`,
          parameters: [CHAIN],
          responses: { "200": k.json("The balance", ref("SpendingBalance")), ...refused, "502": k.use("UpstreamFailed"), ...onWallet },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/spending-wallets/{chain}/pay": {
      post: k.operation(
        {
          operationId: "paySpendingWallet",
          summary: "Pay an x402 URL from the wallet",
          description:
            "A live key, an OAuth token or a session (a test key is 403, recorded as a refused event). The ceiling is the smallest of max_usd, the per-payment limit and what is left of the day (over it: 403). A short wallet is 402 and spends no gas. An Idempotency-Key header (1 to 255 visible ASCII characters) makes a repeat answer the first attempt's outcome, never a second payment (the service keeps the outcome; the answer does not say it is a repeat). At most a number of pays a minute per account and chain (429).",
          parameters: [CHAIN],
          requestBody: k.body("SpendingPay"),
          responses: {
            "200": k.json("The goods and the receipt", ref("SpendingPaid"), k.rateLimitHeaders()),
            "402": k.problem("The wallet's balance is short of the price: nothing was signed", 402),
            ...refused,
            "409": k.use("Conflict"),
            "429": k.use("RateLimited"),
            "502": k.use("UpstreamFailed"),
            ...onWallet,
          },
        },
        { ...k.authenticated("payments"), "x-credential": "live" },
        k.bodyProblems,
      ),
    },
    "/v1/spending-wallets/{chain}/limits": {
      get: k.operation(
        {
          operationId: "getSpendingLimits",
          summary: "The wallet's limits, with what is spent and left today (UTC)",
          description: keyOrSession,
          parameters: [CHAIN],
          responses: { "200": k.json("The limits", ref("SpendingLimits")), ...refused, ...onWallet },
        },
        k.authenticated("read_only"),
      ),
      put: k.operation(
        {
          operationId: "putSpendingLimits",
          summary: "Replace the wallet's limits (session only)",
          description: `${sessionOnly} Both limits, decimal strings.`,
          parameters: [CHAIN],
          requestBody: k.body("SpendingLimitsPut"),
          responses: { "200": k.json("The new limits", ref("SpendingLimits")), ...onWallet },
        },
        sessionAuth,
        k.bodyProblems,
      ),
    },
    "/v1/spending-wallets/{chain}/funding": {
      get: k.operation(
        {
          operationId: "getSpendingWalletFunding",
          summary: "A payment request that funds the wallet (session only)",
          description: `${sessionOnly} EIP-681 on Base, Solana Pay on Solana, with per-wallet-app links.`,
          parameters: [CHAIN, amountQuery],
          responses: { "200": k.json("The payment request", ref("SpendingFunding")), "422": k.use("InvalidRequest"), ...onWallet },
        },
        sessionAuth,
      ),
    },
    "/v1/spending-wallets/{chain}/funding.svg": {
      get: k.operation(
        {
          operationId: "getSpendingWalletFundingQr",
          summary: "The funding request as a QR code (session only)",
          description: `${sessionOnly} The funding answer's uri, drawn as SVG.`,
          parameters: [CHAIN, amountQuery],
          responses: {
            "200": { description: "The QR code", content: { "image/svg+xml": { schema: { type: "string" } } } },
            "422": k.use("InvalidRequest"),
            ...onWallet,
          },
        },
        sessionAuth,
      ),
    },
    "/v1/spending-wallets/{chain}/reveal": {
      post: k.operation(
        {
          operationId: "revealSpendingWallet",
          summary: "Reveal the wallet's key: the withdrawal (session only)",
          description: `${sessionOnly} A request carrying an API key is refused even with a valid session cookie, and the refusal is recorded. No-store.`,
          parameters: [CHAIN],
          responses: { "200": k.json("The wallet and its secret", ref("SpendingWalletRevealed")), ...onWallet },
        },
        sessionAuth,
      ),
    },
    "/v1/spending-wallets/{chain}/events": {
      get: k.operation(
        {
          operationId: "listSpendingWalletEvents",
          summary: "The wallet's event log, newest first",
          description: `${keyOrSession} created, spent, revealed, flagged, revoked, refused (with reason), each with its actor.`,
          parameters: [CHAIN, ...k.pageQuery],
          responses: { "200": k.json("A page of events", ref("SpendingWalletEventList")), ...refused, "422": k.use("InvalidRequest"), ...onWallet },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/rehearsal-checkout": {
      get: k.operation(
        {
          operationId: "getRehearsalCheckout",
          summary: "A checkout whose test face any agent can pay free",
          description: `${keyOrSession} The account's rehearsal checkout ($0.01, created once through the idempotent create) and an instruction to paste to an agent.`,
          responses: {
            "200": k.json("The rehearsal face and the ask", ref("RehearsalCheckout")),
            ...refused,
            "422": k.use("InvalidOrPayoutAccountMissing"),
            "503": k.use("Unavailable"),
          },
        },
        k.authenticated("read_only"),
      ),
    },
  };
}
