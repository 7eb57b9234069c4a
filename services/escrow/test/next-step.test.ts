import { nextStep, nextStepBeforeDeposit, sentenceDate } from "../src/domain/next-step";
import type { EscrowClock } from "../src/domain/transitions";
import { PRESET_WINDOWS } from "../src/domain/windows";

/** The "what happens next" sentence (GET /e/{id}/status, the 402's extra.escrow). */
describe("what happens next", () => {
  const windows = PRESET_WINDOWS.standard;
  const depositedAt = new Date("2026-12-01T12:00:00Z");
  const later = (h: number) => new Date(depositedAt.getTime() + h * 3_600_000);

  it("writes dates in UTC to the minute", () => {
    expect(sentenceDate(new Date("2026-12-04T09:05:59.999Z"))).toBe("4 December 2026 at 09:05 UTC");
  });

  it("says when the money goes where if nobody acts, in each open state", () => {
    const held: EscrowClock = { state: "held", depositedAt, windows };
    expect(nextStep(held, later(1))).toBe("If nobody acts, the payment is released to the seller on 4 December 2026 at 12:00 UTC.");
    expect(nextStep({ ...held, state: "on_hold", onHoldAt: later(24) }, later(30))).toBe(
      "The buyer paused the automatic release; if nobody acts, the payment is released to the seller on 9 December 2026 at 12:00 UTC.",
    );
    expect(nextStep({ ...held, state: "escalated", escalatedAt: later(48) }, later(49))).toBe(
      "The arbiter is asked to rule; without a ruling, the payment is refunded to the buyer on 2 January 2027 at 12:00 UTC.",
    );
  });

  it("once a window ended, says anyone may take the exit", () => {
    const held: EscrowClock = { state: "held", depositedAt, windows };
    expect(nextStep(held, later(72))).toBe("The release window has ended: anyone may now release the payment to the seller.");
    expect(nextStep({ ...held, state: "on_hold", onHoldAt: later(1) }, later(1 + 7 * 24))).toBe(
      "The buyer's hold has ended: anyone may now release the payment to the seller.",
    );
    expect(nextStep({ ...held, state: "escalated", escalatedAt: later(1) }, later(1 + 30 * 24))).toBe(
      "The arbiter did not rule in time: anyone may now refund the payment to the buyer.",
    );
  });

  it("in a final state, says where the money went", () => {
    expect(nextStep({ state: "released", depositedAt, windows }, later(100))).toBe("The payment was released to the seller; nothing more happens.");
    expect(nextStep({ state: "refunded", depositedAt, windows }, later(100))).toBe("The payment was refunded to the buyer; nothing more happens.");
  });

  it("before any deposit, says what a deposit made now becomes", () => {
    expect(nextStepBeforeDeposit(PRESET_WINDOWS.instant.settleSeconds, depositedAt)).toBe(
      "If nobody acts, the payment is released to the seller on 1 December 2026 at 13:00 UTC.",
    );
  });
});
