import { validateOpenApiDocument } from "@c402/testkit";
import { openApiDocument } from "../src/views/openapi";
import { derivedOperationId, withOperationIds } from "../src/views/openapi-conventions";

/**
 * The OpenAPI document as a document: valid OpenAPI 3.1 by the official
 * schema, an operationId on every operation (unique), response schemas that
 * say something, and the headers the service sends documented where it sends
 * them. Every check walks the whole document, so a route added later is held
 * to the same rules without touching this file.
 */

type Json = Record<string, any>;
const doc = openApiDocument("https://pay.test", "0.0.0", "c402") as unknown as Json;
const METHODS = ["get", "put", "post", "delete", "patch", "options", "head", "trace"];

/** Every operation: "METHOD /path" and the operation object. */
const operations: [string, Json][] = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((m): [string, Json] => [`${m.toUpperCase()} ${path}`, item[m]]),
);

const deref = (node: Json): Json => {
  let n = node;
  for (let i = 0; n && typeof n.$ref === "string" && i < 10; i++)
    n = n.$ref
      .split("/")
      .slice(1)
      .reduce((at: Json, k: string) => at[k.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  return n;
};
/** Each response of each operation, references resolved. */
const responses = operations.flatMap(([op, o]) => Object.entries<Json>(o.responses ?? {}).map(([status, r]) => ({ op, o, status, r: deref(r) })));
const headerNames = (r: Json) => Object.keys(r.headers ?? {}).map((h) => h.toLowerCase());
const takesHeader = (o: Json, name: string) => (o.parameters ?? []).map(deref).some((p: Json) => p.in === "header" && p.name.toLowerCase() === name);

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 by the official JSON Schema (@seriousme/openapi-schema-validator)", () => {
    const result = validateOpenApiDocument(doc);
    expect(result.errors).toBeNull();
    expect(result).toMatchObject({ valid: true, version: "3.1" });
  });

  it("the validator is not vacuous: it refuses a broken document", () => {
    const broken = JSON.parse(JSON.stringify(doc)) as Json;
    broken.paths["/"].get.responses = { "200": { content: {} } }; // a response without its required description
    expect(validateOpenApiDocument(broken).valid).toBe(false);
  });

  it("every operation has an operationId, and no two share one", () => {
    expect(operations.length).toBeGreaterThan(30);
    const ids = operations.map(([op, o]) => [op, o.operationId] as const);
    expect(ids.filter(([, id]) => typeof id !== "string" || !/^[a-z][A-Za-z0-9]*$/.test(id))).toEqual([]);
    const seen = new Map<string, string>();
    const clashes: string[] = [];
    for (const [op, id] of ids) {
      if (seen.has(id)) clashes.push(`${id}: ${seen.get(id)} and ${op}`);
      seen.set(id, op);
    }
    expect(clashes).toEqual([]);
    // The ones named by hand are kept.
    expect(doc.paths["/v1/platform/quote"].get.operationId).toBe("getPlatformQuote");
    expect(doc.paths["/v1/sellers/{slug}/offers"].get.operationId).toBe("getSellerOffers");
  });

  it("derives an operationId from the method and the path where an operation names none", () => {
    expect(derivedOperationId("get", "/")).toBe("getRoot");
    expect(derivedOperationId("post", "/v1/checkouts/{id}/go-live")).toBe("postCheckoutsByIdGoLive");
    expect(derivedOperationId("get", "/.well-known/c402")).toBe("getWellKnownC402");
    expect(derivedOperationId("get", "/r/by-tx/{tx_hash}")).toBe("getRByTxByTxHash");
    expect(derivedOperationId("delete", "/v1/keys/{key_id}")).toBe("deleteKeysByKeyId");
    const paths = { "/a": { get: { summary: "a" }, post: { operationId: "makeA", summary: "b" } } };
    expect(withOperationIds({ paths }).paths["/a"]).toEqual({ get: { operationId: "getA", summary: "a" }, post: { operationId: "makeA", summary: "b" } });
  });

  it("no response schema is a bare {type: object}: each says what its body holds", () => {
    const bare = responses.flatMap(({ op, status, r }) =>
      Object.entries<Json>(r.content ?? {})
        .filter(([media]) => media.includes("json"))
        .filter(([, m]) => {
          const s = deref(m.schema ?? {});
          const says = ["properties", "allOf", "anyOf", "oneOf", "additionalProperties", "items", "const", "enum"].some((k) => k in s);
          return !says && (s.type === "object" || s.type === undefined);
        })
        .map(([media]) => `${op} ${status} ${media}`),
    );
    expect(bare).toEqual([]);
  });

  it("documents WWW-Authenticate on every 401, and Retry-After on every 429 and 503", () => {
    const missing = responses
      .filter(({ status }) => ["401", "429", "503"].includes(status))
      .filter(({ status, r }) => !headerNames(r).includes(status === "401" ? "www-authenticate" : "retry-after"))
      .map(({ op, status }) => `${op} ${status}`);
    expect(missing).toEqual([]);
    expect(responses.filter(({ status }) => status === "503").length).toBeGreaterThan(0);
  });

  it("documents the x402 headers on the faces: PAYMENT-REQUIRED on a 402, PAYMENT-RESPONSE where a payment is taken", () => {
    const payable = operations.filter(([, o]) => takesHeader(o, "payment-signature"));
    expect(payable.map(([op]) => op)).toEqual(expect.arrayContaining(["GET /c/{id}", "GET /c/{id}/test", "POST /c/{id}/pay", "POST /c/{id}/test/pay"]));
    for (const [op, o] of payable) {
      expect([op, headerNames(deref(o.responses["402"]))]).toEqual([op, expect.arrayContaining(["payment-required", "payment-response"])]);
      for (const status of ["200", "202"])
        expect([op, status, headerNames(deref(o.responses[status]))]).toEqual([op, status, expect.arrayContaining(["payment-response"])]);
    }
  });

  it("documents Idempotency-Replayed on the success of every operation that takes an Idempotency-Key", () => {
    const creates = operations.filter(([, o]) => takesHeader(o, "idempotency-key"));
    expect(creates.map(([op]) => op)).toContain("POST /v1/checkouts");
    for (const [op, o] of creates) {
      const success = Object.entries<Json>(o.responses).filter(([s]) => /^2/.test(s));
      expect([op, success.every(([, r]) => headerNames(deref(r)).includes("idempotency-replayed"))]).toEqual([op, true]);
    }
  });

  it("documents X-RateLimit-* on the successes of every public operation that is metered (it answers 429 with no credential involved)", () => {
    const metered = operations.filter(([, o]) => !o.security && o.responses["429"]);
    expect(metered.map(([op]) => op)).toEqual(
      expect.arrayContaining(["POST /auth/wallet/challenge", "POST /auth/wallet/verify", "POST /x402/{family}/verify", "POST /v1/checkouts/{id}/reports"]),
    );
    for (const [op, o] of metered) {
      for (const [status, r] of Object.entries<Json>(o.responses).filter(([s]) => /^2/.test(s))) {
        expect([op, status, headerNames(deref(r))]).toEqual([
          op,
          status,
          expect.arrayContaining(["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]),
        ]);
      }
    }
  });
});
