import { ID_PREFIX, isId, newId } from "../src";

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
});
