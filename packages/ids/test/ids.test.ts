import { ID_PREFIX, isAnyId, isId, newId, type CheckoutId, type PaymentId } from "../src";

describe("ids", () => {
  it("uses the spec's prefixes", () => {
    expect(ID_PREFIX).toMatchObject({ checkout: "chk_", escrowCheckout: "esc_", contentCheckout: "cnt_", payment: "pay_", webhook: "wh_", subject: "sub_" });
  });

  it("mints unique well-formed ids", () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newId("payment")));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(isId("payment", id)).toBe(true);
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
