import type { PaymentRow, PaymentsDb } from "../src/store/payments-store";
import { answerByOf, originDeadlineMs, PaidOnDelivery, type OriginDelivery } from "../src/domain/settlement/paid-on-delivery";

describe("the origin's deadline (ADR 9)", () => {
  const now = Date.parse("2026-11-26T12:00:00Z");
  const inSeconds = (s: number) => now / 1000 + s;

  it("leaves the settlement wait and its margin before validBefore, at most 30 s, and refuses under 1 s", () => {
    const wait = 15_000;
    expect(originDeadlineMs(inSeconds(300), now, wait)).toBe(30_000);
    expect(originDeadlineMs(inSeconds(40), now, wait)).toBe(15_000);
    expect(originDeadlineMs(inSeconds(26), now, wait)).toBe(1_000);
    expect(originDeadlineMs(inSeconds(25.5), now, wait)).toBeUndefined();
    expect(originDeadlineMs(inSeconds(10), now, wait)).toBeUndefined();
    // A longer settlement wait keeps more of the validity for settling.
    expect(originDeadlineMs(inSeconds(40), now, 25_000)).toBe(5_000);
  });

  describe("inside the buyer's request (issue 43)", () => {
    // Nothing here touches the database or fulfillment: only the deadline arithmetic on a claim.
    const step = new PaidOnDelivery({ db: {} as PaymentsDb, delivery: {} as OriginDelivery, settleTimeoutMs: 15_000, now: () => new Date(now) });
    const claim = (answerByMs: number | null, validForSeconds = 300) =>
      ({
        valid_before: BigInt(inSeconds(validForSeconds)),
        answer_by: answerByMs === null ? null : new Date(now + answerByMs),
        updated_at: new Date(now),
      }) as PaymentRow;

    it("a request's deadline is its caller's, never more than 60 s away", () => {
      expect(answerByOf(undefined, new Date(now)).getTime()).toBe(now + 60_000);
      expect(answerByOf(new Date(now + 20_000), new Date(now)).getTime()).toBe(now + 20_000);
      expect(answerByOf(new Date(now + 600_000), new Date(now)).getTime()).toBe(now + 60_000);
    });

    it("gives the origin what the request leaves after the settlement wait, the way back and the hop (least of that and the validity's share)", () => {
      expect(step.deadlineFor(claim(60_000))).toBe(30_000);
      expect(step.deadlineFor(claim(null))).toBe(30_000);
      // 40 s left: 40 - 15 (settlement) - 3 (answer) - 5 (hop) = 17 s.
      expect(step.deadlineFor(claim(40_000))).toBe(17_000);
      // The validity's share is smaller: it wins.
      expect(step.deadlineFor(claim(60_000, 40))).toBe(15_000);
    });

    it("refuses, retry safe and before the origin is called, a request that leaves the origin under 1 s", () => {
      expect(() => step.deadlineFor(claim(23_500))).toThrow(
        expect.objectContaining({ slug: "unavailable", help: expect.objectContaining({ retry_is_safe: true }) }),
      );
    });

    it("settles a delivered claim only with the settlement wait and the way back still ahead of its deadline", () => {
      expect(step.canSettleInTime(claim(18_000))).toBe(true);
      expect(step.canSettleInTime(claim(17_999))).toBe(false);
    });
  });
});
