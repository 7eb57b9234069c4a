import { schemas } from "./request-schemas";

/**
 * The OpenAPI document served at /openapi.json. Request bodies are the very
 * schemas the gateway validates with; responses name their status codes.
 */
const problem = { description: "Problem document (RFC 9457)", content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } };
const json = (description: string, schema: Record<string, unknown> = { type: "object" }) => ({ description, content: { "application/json": { schema } } });
const body = (name: keyof typeof schemas) => ({ required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${name}` } } } });
const bearer = [{ apiKey: [] }];
const idParam = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });
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
    schema: { type: "string", pattern: "^[A-Za-z0-9_-]{16,64}$" },
    description: "Handoff nonce: a paid request carrying it can be found at /c/{id}/handoff/{nonce}",
  },
];
const faceResponses = {
  "200": json("Goods and receipt in one response; PAYMENT-RESPONSE header carries the settlement"),
  "202": json("Settlement broadcast but not confirmed yet: tx_hash and receipt_url to poll (never pay again)"),
  "402": {
    description:
      "Payment required: unpaid, the x402 v2 body (accepts[], offer, endpoint), or the v1 form with x402_version=1; a presented payment refused, a problem document with reason and accepts[]. The v2 requirements are in the PAYMENT-REQUIRED header",
    content: {
      "application/json": { schema: { type: "object" } },
      "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } },
    },
  },
  "404": problem,
  "410": problem,
  "422": problem,
  "431": problem,
  "503": problem,
};

function prepareOperation(face: "live" | "rehearsal") {
  return {
    summary: `Typed data to sign for the ${face} face`,
    parameters: [idParam("id")],
    requestBody: body("PaymentPrepare"),
    responses: { "200": json("typed_data, payload_stub, network"), "404": problem, "422": problem },
  };
}

/** The facilitator's POST operations share their request body; each answers 200 with its x402 shape. */
function facilitatorOperation(what: string, answer: string) {
  return {
    summary: `Facilitator: ${what}`,
    parameters: [idParam("family")],
    requestBody: body("FacilitatorRequest"),
    responses: { "200": json(answer), "404": problem, "422": problem },
  };
}

export function openApiDocument(baseUrl: string, version: string) {
  return {
    openapi: "3.1.0",
    info: { title: "Hosted x402 checkout service", version, description: "Pay-per-request checkouts on the x402 protocol." },
    servers: [{ url: baseUrl }],
    components: {
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "sk_test_… or sk_live_… API key" } },
      schemas: {
        ...schemas,
        Problem: {
          type: "object",
          required: ["type", "title", "status", "detail", "help"],
          properties: {
            type: { type: "string" },
            title: { type: "string" },
            status: { type: "integer" },
            detail: { type: "object", properties: { message: { type: "string" }, help: { type: "object" } } },
            help: { type: "object", properties: { fix: { type: "string" }, prepare: { type: ["string", "null"] }, retry_is_safe: { type: "boolean" } } },
            errors: { type: "array", items: { type: "object", properties: { field: { type: "string" }, reason: { type: "string" } } } },
          },
        },
      },
    },
    paths: {
      "/": { get: { summary: "Service map", responses: { "200": json("Self-describing map") } } },
      "/health": {
        get: {
          summary: "Liveness; ?deep=true checks every component",
          parameters: [{ name: "deep", in: "query", schema: { type: "boolean" } }],
          responses: { "200": json("Component state") },
        },
      },
      "/auth/wallet/challenge": {
        post: {
          summary: "Wallet sign-in: get a message to sign",
          requestBody: body("WalletChallenge"),
          responses: { "200": json("Challenge"), "422": problem, "429": problem },
        },
      },
      "/auth/wallet/verify": {
        post: {
          summary: "Wallet sign-in: verify the signature; returns the account and a key shown once",
          requestBody: body("WalletVerify"),
          responses: { "200": json("Signed in"), "201": json("Account created"), "401": problem, "422": problem, "429": problem },
        },
      },
      "/v1/keys": {
        post: {
          summary: "Create an API key (scope full)",
          security: bearer,
          requestBody: body("ApiKeyCreate"),
          responses: { "201": json("Key with its secret, shown once"), "401": problem, "403": problem, "422": problem },
        },
        get: { summary: "List keys (prefixes only)", security: bearer, responses: { "200": json("{keys: [...]}"), "401": problem } },
      },
      "/v1/keys/{key_id}": {
        delete: {
          summary: "Revoke a key",
          security: bearer,
          parameters: [idParam("key_id")],
          responses: { "204": { description: "Revoked" }, "401": problem, "403": problem, "404": problem },
        },
      },
      "/v1/checkouts": {
        post: {
          summary: "Create a checkout",
          security: bearer,
          parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } }],
          requestBody: body("CheckoutCreate"),
          responses: { "201": json("Checkout with url and test_url"), "401": problem, "403": problem, "409": problem, "422": problem },
        },
        get: {
          summary: "List checkouts, newest first",
          security: bearer,
          parameters: [{ name: "include_voided", in: "query", schema: { type: "boolean" } }],
          responses: { "200": json("{checkouts: [...]}"), "401": problem, "422": problem },
        },
      },
      "/v1/checkouts/{id}": {
        get: {
          summary: "Get a checkout",
          security: bearer,
          parameters: [idParam("id")],
          responses: { "200": json("Checkout"), "401": problem, "404": problem },
        },
      },
      "/v1/checkouts/{id}/go-live": {
        post: {
          summary: "Arm the live face (idempotent)",
          security: bearer,
          parameters: [idParam("id")],
          responses: { "200": json("Checkout plus rehearsal block"), "401": problem, "403": problem, "404": problem, "409": problem },
        },
      },
      "/c/{id}": { get: { summary: "Live face", parameters: [idParam("id"), ...paymentHeaders, ...faceQuery], responses: faceResponses } },
      "/c/{id}/test": {
        get: { summary: "Rehearsal face (simulated settlement)", parameters: [idParam("id"), ...paymentHeaders, ...faceQuery], responses: faceResponses },
      },
      "/c/{id}/handoff/{nonce}": {
        get: {
          summary: "The settled payment that arrived with a handoff nonce (404 until there is one; a wrong nonce looks the same)",
          parameters: [idParam("id"), idParam("nonce")],
          responses: { "200": json("{payment_id, receipt_url, escrow_state, test_mode}"), "404": problem, "422": problem },
        },
      },
      "/c/{id}/prepare": { post: prepareOperation("live") },
      "/c/{id}/test/prepare": { post: prepareOperation("rehearsal") },
      "/r/{payment_id}": {
        get: {
          summary: "Receipt: JSON, or HTML for browsers (Accept: text/html)",
          parameters: [idParam("payment_id")],
          responses: { "200": json("Receipt"), "202": json("Settlement pending"), "404": problem },
        },
      },
      "/x402/{family}/supported": {
        get: {
          summary: "Facilitator: supported kinds (family base, stellar or solana)",
          parameters: [idParam("family")],
          responses: { "200": json("{kinds, extensions, signers}"), "404": problem },
        },
      },
      "/x402/{family}/verify": { post: facilitatorOperation("verify a payment", "{isValid, invalidReason?, payer?}") },
      "/x402/{family}/settle": { post: facilitatorOperation("settle a payment on-chain", "{success, errorReason?, transaction, network, payer?}") },
      "/r/{payment_id}/download": {
        get: {
          summary: "Self-contained receipt file (HTML)",
          parameters: [idParam("payment_id")],
          responses: { "200": { description: "HTML file" }, "404": problem },
        },
      },
      "/r/by-tx/{tx_hash}": {
        get: {
          summary: "Redirect to the receipt of a transaction",
          parameters: [idParam("tx_hash")],
          responses: { "303": { description: "See the receipt" }, "404": problem },
        },
      },
    },
  };
}
