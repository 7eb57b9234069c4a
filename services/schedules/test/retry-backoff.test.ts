import { dayLengthMs, DAY_MS, recheckDelayMs, retryDelayMs } from "../src";

describe("the retry backoff of a held period", () => {
  const policy = { baseMs: 30_000, maxMs: 3_600_000 };

  it("doubles from the base per attempt, up to the cap (live)", () => {
    expect([1, 2, 3, 4, 8, 50].map((n) => retryDelayMs(policy, n))).toEqual([30_000, 60_000, 120_000, 240_000, 3_600_000, 3_600_000]);
  });

  it("shrinks with a test-mode series' compressed day, never below a second", () => {
    const day = dayLengthMs({ validAfter: new Date(0), validBefore: new Date(7 * 60_000) }, 7);
    expect(day).toBe(60_000);
    expect(retryDelayMs(policy, 1, day)).toBe(1_000);
    expect(retryDelayMs(policy, 50, day)).toBe(2_500);
    expect(retryDelayMs(policy, 1, DAY_MS)).toBe(30_000);
    expect(recheckDelayMs()).toBe(15_000);
    expect(recheckDelayMs(day)).toBe(1_000);
  });
});
