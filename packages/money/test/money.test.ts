import { breakdown, formatUsd, MoneyFormatError, parsePrice, parseUsd, priceFromTotal, protocolFee, platformCut, platformFeeBpsAtCreate } from "../src";

describe("money", () => {
  it("a price of 0.10 is 100000 atomic units (spec)", () => {
    expect(parseUsd("0.10")).toBe(100_000n);
    expect(parseUsd("0.1")).toBe(100_000n);
    expect(parseUsd("12")).toBe(12_000_000n);
    expect(parseUsd("1.234567")).toBe(1_234_567n);
  });

  it.each(["", "-1", "1.", ".5", "1e3", "0x10", " 1", "1.2345678", "01", "1,00"])("rejects %p", (text) => {
    expect(() => parseUsd(text)).toThrow(MoneyFormatError);
  });

  it("a price is more than zero and at most $1,000,000, with the reason when it is not", () => {
    expect(parsePrice("0.000001")).toBe(1n);
    expect(parsePrice("1000000")).toBe(1_000_000_000_000n);
    expect(() => parsePrice("0")).toThrow(new MoneyFormatError("must be greater than zero"));
    expect(() => parsePrice("0.000000")).toThrow(new MoneyFormatError("must be greater than zero"));
    expect(() => parsePrice("1000000.000001")).toThrow(new MoneyFormatError("must be at most 1000000"));
    expect(() => parsePrice("0.1234567")).toThrow(new MoneyFormatError("has more than 6 decimal places"));
    expect(() => parsePrice("abc")).toThrow(MoneyFormatError);
  });

  it("formats with six decimals", () => {
    expect(formatUsd(100_000n)).toBe("0.100000");
    expect(formatUsd(12_345_678n)).toBe("12.345678");
    expect(formatUsd(0n)).toBe("0.000000");
  });

  it("standard fee is 0.5% of price plus $0.01, added on top", () => {
    const b = breakdown(parseUsd("0.10"));
    expect(b.feeAmount).toBe(500n + 10_000n);
    expect(b.total).toBe(110_500n);
    expect(b.providerAmount).toBe(100_000n);
    expect(b.platformAmount).toBeNull();
    expect(breakdown(parseUsd("10.00")).feeAmount).toBe(60_000n);
  });

  it("escrow fee is 1% plus $0.02 and replaces the standard fee", () => {
    expect(protocolFee(parseUsd("10.00"), "escrow")).toBe(120_000n);
    expect(breakdown(parseUsd("10.00"), { rule: "escrow" }).total).toBe(10_120_000n);
  });

  it("platform cut comes out of the price; cut + seller amount equals the price exactly", () => {
    for (const price of [1n, 199n, 100_000n, 1_234_567n, 999_999_999n]) {
      for (const bps of [1, 250, 2000]) {
        const b = breakdown(price, { platformFeeBps: bps });
        expect((b.platformAmount ?? 0n) + b.providerAmount).toBe(price);
        expect(b.total).toBe(b.providerAmount + (b.platformAmount ?? 0n) + b.feeAmount);
      }
    }
    expect(platformCut(1_000_000n, 2000)).toBe(200_000n);
    expect(() => platformCut(1n, 2001)).toThrow(RangeError);
  });

  it("a create's platform fee: its own platform_fee_bps wins (0 included), else the standing fee in platform mode, else none", () => {
    const platform = { platformAccount: true, platformFeeBps: 300 };
    expect(platformFeeBpsAtCreate(undefined, platform)).toBe(300);
    expect(platformFeeBpsAtCreate(0, platform)).toBe(0);
    expect(platformFeeBpsAtCreate(2000, platform)).toBe(2000);
    expect(platformFeeBpsAtCreate(undefined, { platformAccount: false, platformFeeBps: 300 })).toBe(0);
  });

  it("the price is recoverable from the total at every rounding boundary", () => {
    for (const rule of ["standard", "escrow"] as const) {
      for (let p = 1n; p < 2_000n; p++) expect(priceFromTotal(breakdown(p, { rule }).total, rule)).toBe(p);
      for (const p of [999_999n, 1_000_000n, 1_000_001n, 123_456_789_012n]) {
        expect(priceFromTotal(breakdown(p, { rule }).total, rule)).toBe(p);
      }
    }
  });
});
