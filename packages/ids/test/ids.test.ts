import { hasIdShape, ID_PREFIX, isAnyId, isId, newId, pooledRandomBytes, SELLER_SLUG, type CheckoutId, type PaymentId } from "../src";

describe("ids", () => {
  it("uses the spec's prefixes", () => {
    expect(ID_PREFIX).toMatchObject({ checkout: "chk_", escrowCheckout: "esc_", contentCheckout: "cnt_", payment: "pay_", webhook: "wh_", subject: "sub_" });
  });

  it("mints unique well-formed ids", () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newId("payment")));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(isId("payment", id)).toBe(true);
  });

  it("hands out pooled random bytes once each, never overwritten by later draws across refills", () => {
    const draws = Array.from({ length: 1_000 }, () => pooledRandomBytes(24)); // 24,000 bytes: several 4 KiB pools
    const asDrawn = draws.map((bytes) => bytes.toString("hex"));
    for (const _ of Array.from({ length: 500 })) pooledRandomBytes(48);
    expect(draws.map((bytes) => bytes.toString("hex"))).toEqual(asDrawn);
    expect(new Set(asDrawn).size).toBe(1_000);
    expect(draws.every((bytes) => bytes.length === 24)).toBe(true);
    expect(pooledRandomBytes(10_000)).toHaveLength(10_000);
    // Not all zero: the pool is filled, not merely allocated.
    expect(asDrawn.filter((hex) => /^0+$/.test(hex))).toEqual([]);
  });

  it("rejects ids of another kind or shape", () => {
    expect(isId("checkout", newId("payment"))).toBe(false);
    expect(isId("checkout", "chk_short")).toBe(false);
    expect(isId("checkout", "chk_" + "a".repeat(23) + "-")).toBe(false);
  });

  it("recognises an id of any kind, and nothing with an unknown prefix", () => {
    for (const kind of Object.keys(ID_PREFIX) as (keyof typeof ID_PREFIX)[]) expect(isAnyId(newId(kind))).toBe(true);
    expect(isAnyId("zzz_" + "a".repeat(24))).toBe(false);
    expect(isAnyId("chk_\u0000")).toBe(false);
  });

  it("never takes a seller slug for an id, nor an id for a slug (/schedule/{x} is either)", () => {
    for (const kind of Object.keys(ID_PREFIX) as (keyof typeof ID_PREFIX)[]) {
      const id = newId(kind);
      expect([id, hasIdShape(id), SELLER_SLUG.test(id)]).toEqual([id, true, false]);
    }
    // A prefix not known yet (series) still has the shape of an id.
    expect(hasIdShape("sch_" + "a".repeat(24))).toBe(true);
    for (const slug of ["ada", "ada-weather", "a1", "x".repeat(39)]) expect([slug, SELLER_SLUG.test(slug), hasIdShape(slug)]).toEqual([slug, true, false]);
    for (const text of ["a", "-ada", "Ada", "ada_weather", "x".repeat(40), "sch_short"]) {
      expect([text, SELLER_SLUG.test(text), hasIdShape(text)]).toEqual([text, false, false]);
    }
  });

  it("types ids by kind: text becomes an id only once checked (the typecheck fails if the brand is lost)", () => {
    const payment: PaymentId = newId("payment");
    // @ts-expect-error a payment id is not a checkout id
    const wrong: CheckoutId = payment;
    const text: string = newId("checkout");
    // @ts-expect-error unchecked text is not an id
    const unchecked: CheckoutId = text;
    const checked: CheckoutId | undefined = isId("checkout", text) ? text : undefined;
    expect([wrong, unchecked, checked]).toEqual([payment, text, text]);
  });
});
