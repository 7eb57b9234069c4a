import { QuoteCache } from "../src/faces/quote-cache";

describe("QuoteCache (unpaid 402 answers, kept briefly)", () => {
  let now = 1_000_000;
  const cache = () => new QuoteCache<string>(1_000, 3, () => now);

  it("keeps an answer for the TTL and forgets it after", () => {
    const c = cache();
    c.set("chk_a", "live:2", "x");
    now += 999;
    expect(c.get("chk_a", "live:2")).toBe("x");
    now += 1;
    expect(c.get("chk_a", "live:2")).toBeUndefined();
  });

  it("never keeps an answer past the checkout's expiry", () => {
    const c = cache();
    c.set("chk_a", "live:2", "x", now + 10);
    now += 10;
    expect(c.get("chk_a", "live:2")).toBeUndefined();
  });

  it("invalidate drops every named variant of that checkout only", () => {
    const c = cache();
    c.set("chk_a", "live:2", "a2");
    c.set("chk_a", "test:1", "a1");
    c.set("chk_b", "live:2", "b2");
    c.invalidate("chk_a", ["live:2", "test:1"]);
    expect([c.get("chk_a", "live:2"), c.get("chk_a", "test:1"), c.get("chk_b", "live:2")]).toEqual([undefined, undefined, "b2"]);
  });

  it("is bounded: the oldest entry goes first", () => {
    const c = cache();
    for (const id of ["a", "b", "c", "d"]) c.set(`chk_${id}`, "live:2", id);
    expect(c.get("chk_a", "live:2")).toBeUndefined();
    expect(c.get("chk_d", "live:2")).toBe("d");
  });
});
