import { encodeHeader, signExactEvmPayment } from "@c402/x402";
import fc from "fast-check";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * Issue 9, points 3 and 4: no stored value can poison a later read, and
 * input that answered 500 before answers a 4xx problem naming what is wrong.
 */
describe("bounded input", () => {
  let key: string;
  beforeAll(async () => {
    key = (await newSeller()).key;
  });

  const listedIds = async () => {
    const r = await call("GET", "/v1/checkouts?limit=200", { key });
    expect(r.status).toBe(200);
    return (r.body.checkouts as { id: string }[]).map((c) => c.id);
  };
  /** `levels` containers deep, built without recursion. */
  const nested = (levels: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
    return value;
  };

  it("refuses free-form JSON nested too deep with 422 naming the field, writes nothing, and every read keeps working", async () => {
    const before = await listedIds();
    for (const [field, levels] of [
      ["payload", 2_400],
      ["input_schema", 2_000],
      ["example_output", 40],
    ] as const) {
      // Sent as text: the client's own JSON.stringify must not be the thing that overflows.
      const text = `{"title":"Deep","price_usd":"0.10","${field}":${"[".repeat(levels)}1${"]".repeat(levels)}}`;
      const r = await call("POST", "/v1/checkouts", { key, body: text });
      expect(r.status).toBe(422);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(r.body.errors).toEqual([{ field, reason: "nests deeper than 32 levels" }]);
    }
    const deepObject = await call("POST", "/v1/checkouts", { key, body: { title: "Deep", price_usd: "0.10", payload: nested(3_000) } });
    expect(deepObject.status).toBe(422);
    expect(await listedIds()).toEqual(before);
  });

  it("refuses U+0000 in any text with 422 naming the field (PostgreSQL text and jsonb refuse it)", async () => {
    for (const [field, body] of [
      ["title", { title: "Weather\u0000", price_usd: "0.10" }],
      ["description", { title: "Weather", price_usd: "0.10", description: "a\u0000b" }],
      ["payload.note", { title: "Weather", price_usd: "0.10", payload: { note: "\u0000" } }],
    ] as const) {
      const r = await call("POST", "/v1/checkouts", { key, body });
      expect(r.status).toBe(422);
      expect(r.body.errors).toEqual([{ field, reason: "must not contain the character U+0000" }]);
    }
    const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: "0x\u0000", network: "eip155:8453" } });
    expect(challenge.status).toBe(422);
  });

  it("refuses expires_in_minutes beyond what a checkout can live (1e20, 2^63) with 422", async () => {
    for (const value of ["1e20", "9223372036854775808", "0", "-5"]) {
      const r = await call("POST", "/v1/checkouts", { key, body: `{"title":"T","price_usd":"0.10","expires_in_minutes":${value}}` });
      expect(r.status).toBe(422);
      expect(r.body.errors).toEqual([expect.objectContaining({ field: "expires_in_minutes" })]);
    }
  });

  it("answers ids that cannot exist (a NUL, a wrong prefix) with 404, never a database error", async () => {
    for (const path of ["/v1/checkouts/%00", "/v1/checkouts/chk_%00%00", "/v1/checkouts/pay_abc", "/v1/checkouts/%00/go-live"]) {
      const r = await call(path.endsWith("go-live") ? "POST" : "GET", path, { key });
      expect([path, r.status]).toEqual([path, 404]);
    }
    for (const path of ["/c/%00", "/c/chk_%00/test", "/r/%00", "/r/pay_%00/download", "/c/%00/handoff/abcdefghijklmnop0000"]) {
      const r = await call("GET", path);
      expect([path, r.status]).toEqual([path, 404]);
      expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
  });

  it("refuses a payment header whose uint256 fields overflow 2^256 - 1 with a 402 problem, at both faces", async () => {
    const c = await newCheckout(key);
    const required = decoded((await call("GET", `/c/${c.id}/test`)).headers.get("payment-required"));
    const payment = await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), required.accepts[0]);
    for (const field of ["value", "validBefore", "validAfter"]) {
      const overflow = { ...payment, payload: { ...payment.payload, authorization: { ...payment.payload.authorization, [field]: (1n << 256n).toString() } } };
      for (const face of ["", "/test"]) {
        const r = await call("GET", `/c/${c.id}${face}`, { headers: { "PAYMENT-SIGNATURE": encodeHeader(overflow) } });
        expect(r.status).toBe(402);
        expect(r.body.reason).toBe("invalid_payload");
      }
    }
  });

  it("returns from list and read exactly what create accepted; what it refuses leaves nothing behind (fast-check)", async () => {
    const goods = fc.oneof(
      fc.jsonValue({ maxDepth: 40 }),
      fc.string().map((s) => `${s}\u0000`),
      fc.integer({ min: 25, max: 60 }).map((levels) => nested(levels)),
    );
    await fc.assert(
      fc.asyncProperty(goods, fc.boolean(), async (payload, asExample) => {
        const before = await listedIds();
        const field = asExample ? "example_output" : "payload";
        const created = await call("POST", "/v1/checkouts", { key, body: { title: "Property", price_usd: "0.25", [field]: payload } });
        expect(created.status).toBeLessThan(500);
        if (created.status !== 201) {
          expect(created.status).toBe(422);
          expect(created.body.errors[0].field.split(".")[0]).toBe(field);
          expect(await listedIds()).toEqual(before);
          return;
        }
        const expected = JSON.parse(JSON.stringify(payload ?? null)) as unknown;
        expect(created.body[field]).toEqual(expected);
        const read = await call("GET", `/v1/checkouts/${created.body.id}`, { key });
        expect(read.status).toBe(200);
        expect(read.body[field]).toEqual(expected);
        expect(await listedIds()).toEqual([created.body.id, ...before]);
      }),
      { numRuns: 40 },
    );
  });
});
