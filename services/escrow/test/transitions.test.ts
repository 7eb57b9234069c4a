import {
  deadlineOf,
  decide,
  dueTimedExit,
  ESCROW_STATES,
  ESCROW_TRIGGERS,
  FINAL_STATES,
  TRANSITIONS,
  triggersNow,
  type EscrowClock,
} from "../src/domain/transitions";
import { PRESET_WINDOWS } from "../src/domain/windows";

/** The escrow state machine (spec, States and transitions: Escrow), as the escrow contract enforces it. */
describe("escrow transitions", () => {
  const windows = PRESET_WINDOWS.standard; // settle 3 d, hold 7 d, backstop 30 d
  const depositedAt = new Date("2026-12-01T12:00:00Z");
  const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);
  const held: EscrowClock = { state: "held", depositedAt, windows };
  const onHoldAt = at(depositedAt, 3_600);
  const onHold: EscrowClock = { state: "on_hold", depositedAt, onHoldAt, windows };
  const escalatedAt = at(depositedAt, 7_200);
  const escalated: EscrowClock = { state: "escalated", depositedAt, escalatedAt, windows };
  const settleEnd = at(depositedAt, windows.settleSeconds);
  const holdEnd = at(onHoldAt, windows.holdSeconds);
  const backstopEnd = at(escalatedAt, windows.backstopSeconds);
  const before = (d: Date) => at(d, -1);

  it("has the spec's rows, and the contract's resumed release at the end of a hold", () => {
    const rows = TRANSITIONS.map((t) => `${t.from ?? "(none)"} --${t.trigger}/${t.by}/${t.condition}--> ${t.to} [${t.events.join(", ")}]`);
    expect(rows).toEqual([
      "(none) --deposit/buyer/any_time--> held [escrow.held]",
      "held --hold/buyer/before_deadline--> on_hold [escrow.on_hold]",
      "held --approve/buyer/any_time--> released [escrow.released, checkout.paid]",
      "held --request_refund/buyer/before_deadline--> escalated [escrow.escalated]",
      "on_hold --request_refund/buyer/before_deadline--> escalated [escrow.escalated]",
      "held --settle_window_end/anyone/deadline_passed--> released [escrow.released, checkout.paid]",
      "on_hold --hold_window_end/anyone/deadline_passed--> released [escrow.released, checkout.paid]",
      "held --cancel/seller/any_time--> refunded [escrow.refunded]",
      "on_hold --cancel/seller/any_time--> refunded [escrow.refunded]",
      "escalated --rule_to_seller/arbiter/before_deadline--> released [escrow.released, checkout.paid]",
      "escalated --rule_to_buyer/arbiter/before_deadline--> refunded [escrow.refunded]",
      "escalated --backstop_end/anyone/deadline_passed--> refunded [escrow.refunded]",
    ]);
  });

  it("has only two outcomes: released pays the seller, refunded the buyer; every row ends in a state of the machine", () => {
    for (const t of TRANSITIONS) {
      expect(ESCROW_STATES).toContain(t.to);
      if (t.to === "released") expect(t.pays).toBe("seller");
      else if (t.to === "refunded") expect(t.pays).toBe("buyer");
      else expect(t.pays).toBeUndefined();
    }
    expect(FINAL_STATES).toEqual(["released", "refunded"]);
    // checkout.paid (the receipt) fires only when the seller is paid.
    for (const t of TRANSITIONS) expect(t.events.includes("checkout.paid")).toBe(t.to === "released");
  });

  it("counts each state's deadline from its own moment: settle from the deposit, hold from the hold, backstop from the escalation", () => {
    expect(deadlineOf(held)).toEqual(settleEnd);
    expect(deadlineOf(onHold)).toEqual(holdEnd);
    expect(deadlineOf(escalated)).toEqual(backstopEnd);
    expect(deadlineOf({ ...held, state: "released" })).toBeUndefined();
    expect(() => deadlineOf({ state: "on_hold", depositedAt, windows })).toThrow(/time of the buyer's hold/);
  });

  it("a deposit creates a held escrow, and only a deposit does", () => {
    expect(decide(null, "deposit", depositedAt)).toMatchObject({ ok: true, to: "held", events: ["escrow.held"] });
    expect(decide(null, "approve", depositedAt)).toMatchObject({ ok: false, refusal: "not_from_state" });
    expect(decide(held, "deposit", depositedAt)).toMatchObject({ ok: false, refusal: "not_from_state" });
  });

  it("held: the buyer may hold or ask for a refund until the settle window ends, approve at any time; then anyone may release", () => {
    expect(decide(held, "hold", before(settleEnd))).toMatchObject({ ok: true, to: "on_hold", events: ["escrow.on_hold"] });
    expect(decide(held, "approve", before(settleEnd))).toMatchObject({ ok: true, to: "released", events: ["escrow.released", "checkout.paid"] });
    expect(decide(held, "request_refund", before(settleEnd))).toMatchObject({ ok: true, to: "escalated", events: ["escrow.escalated"] });
    expect(decide(held, "settle_window_end", before(settleEnd))).toMatchObject({ ok: false, refusal: "deadline_not_reached" });
    for (const trigger of ["hold", "request_refund"] as const) {
      expect(decide(held, trigger, settleEnd)).toMatchObject({ ok: false, refusal: "deadline_passed" });
    }
    // Approving pays the seller, as the release does: it counts at any time while held.
    expect(decide(held, "approve", at(settleEnd, 86_400))).toMatchObject({ ok: true, to: "released" });
    expect(decide(held, "settle_window_end", settleEnd)).toMatchObject({ ok: true, to: "released", events: ["escrow.released", "checkout.paid"] });
    expect(dueTimedExit(held, before(settleEnd))).toBeUndefined();
    expect(dueTimedExit(held, settleEnd)?.trigger).toBe("settle_window_end");
  });

  it("on_hold: auto-release is paused; the buyer may still ask for a refund until the hold ends; then anyone may release", () => {
    // The settle window passing changes nothing while on hold.
    expect(dueTimedExit(onHold, settleEnd)).toBeUndefined();
    expect(decide(onHold, "settle_window_end", at(settleEnd, 60))).toMatchObject({ ok: false, refusal: "not_from_state" });
    expect(decide(onHold, "approve", before(holdEnd))).toMatchObject({ ok: false, refusal: "not_from_state" });
    expect(decide(onHold, "hold", before(holdEnd))).toMatchObject({ ok: false, refusal: "not_from_state" });
    expect(decide(onHold, "request_refund", before(holdEnd))).toMatchObject({ ok: true, to: "escalated" });
    expect(decide(onHold, "request_refund", holdEnd)).toMatchObject({ ok: false, refusal: "deadline_passed" });
    expect(decide(onHold, "hold_window_end", before(holdEnd))).toMatchObject({ ok: false, refusal: "deadline_not_reached" });
    expect(dueTimedExit(onHold, holdEnd)).toMatchObject({ trigger: "hold_window_end", to: "released" });
  });

  it("a hold never brings the release forward: a short hold late in the settle window ends with the settle window", () => {
    const shortHold = { ...windows, holdSeconds: 3_600 };
    const lateHold: EscrowClock = { state: "on_hold", depositedAt, onHoldAt: at(depositedAt, 86_400), windows: shortHold };
    expect(deadlineOf(lateHold)).toEqual(settleEnd);
    expect(dueTimedExit(lateHold, at(depositedAt, 86_400 + 3_600))).toBeUndefined();
    expect(dueTimedExit(lateHold, settleEnd)).toMatchObject({ trigger: "hold_window_end" });
  });

  it("the seller may cancel (a refund) while held or on hold, even after a window ended; never once escalated", () => {
    for (const e of [held, onHold]) {
      expect(decide(e, "cancel", depositedAt)).toMatchObject({ ok: true, to: "refunded", events: ["escrow.refunded"] });
      expect(decide(e, "cancel", at(holdEnd, 86_400))).toMatchObject({ ok: true, to: "refunded" });
    }
    expect(decide(escalated, "cancel", escalatedAt)).toMatchObject({ ok: false, refusal: "not_from_state" });
  });

  it("escalated: the arbiter rules either way until the backstop; after it, anyone may refund", () => {
    expect(decide(escalated, "rule_to_seller", before(backstopEnd))).toMatchObject({ ok: true, to: "released", events: ["escrow.released", "checkout.paid"] });
    expect(decide(escalated, "rule_to_buyer", before(backstopEnd))).toMatchObject({ ok: true, to: "refunded", events: ["escrow.refunded"] });
    expect(decide(escalated, "backstop_end", before(backstopEnd))).toMatchObject({ ok: false, refusal: "deadline_not_reached" });
    expect(decide(escalated, "rule_to_seller", backstopEnd)).toMatchObject({ ok: false, refusal: "deadline_passed" });
    expect(decide(escalated, "backstop_end", backstopEnd)).toMatchObject({ ok: true, to: "refunded" });
    for (const buyer of ["hold", "approve", "request_refund"] as const) expect(decide(escalated, buyer, escalatedAt)).toMatchObject({ ok: false });
  });

  it("a final state takes nothing", () => {
    for (const state of FINAL_STATES) {
      for (const trigger of ESCROW_TRIGGERS) {
        expect(decide({ ...escalated, state }, trigger, escalatedAt)).toMatchObject({ ok: false, refusal: "final" });
      }
    }
  });

  it("lists what may happen now, by whom", () => {
    const now = (e: EscrowClock, t: Date) => triggersNow(e, t).map((x) => `${x.by}:${x.trigger}`);
    expect(now(held, depositedAt)).toEqual(["buyer:hold", "buyer:approve", "buyer:request_refund", "seller:cancel"]);
    expect(now(held, settleEnd)).toEqual(["buyer:approve", "anyone:settle_window_end", "seller:cancel"]);
    expect(now(onHold, onHoldAt)).toEqual(["buyer:request_refund", "seller:cancel"]);
    expect(now(escalated, backstopEnd)).toEqual(["anyone:backstop_end"]);
  });
});
