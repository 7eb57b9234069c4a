import { originDeadlineMs } from "../src/domain/settlement/paid-on-delivery";

describe("the origin's deadline (ADR 9)", () => {
  it("leaves the settlement wait and its margin before validBefore, at most 30 s, and refuses under 1 s", () => {
    const now = Date.parse("2026-11-26T12:00:00Z");
    const inSeconds = (s: number) => now / 1000 + s;
    const wait = 15_000;
    expect(originDeadlineMs(inSeconds(300), now, wait)).toBe(30_000);
    expect(originDeadlineMs(inSeconds(40), now, wait)).toBe(15_000);
    expect(originDeadlineMs(inSeconds(26), now, wait)).toBe(1_000);
    expect(originDeadlineMs(inSeconds(25.5), now, wait)).toBeUndefined();
    expect(originDeadlineMs(inSeconds(10), now, wait)).toBeUndefined();
    // A longer settlement wait keeps more of the validity for settling.
    expect(originDeadlineMs(inSeconds(40), now, 25_000)).toBe(5_000);
  });
});
