import type { EscrowWindows } from "./windows";

/**
 * The escrow state machine (spec, States and transitions: Escrow), as data:
 * the rows the escrow contract enforces on-chain, so the service, its faces
 * and its sweeper answer exactly what the chain will accept. Only two
 * outcomes exist: released (seller paid: seller, platform cut and fee) and
 * refunded (everything deposited back to the buyer).
 */

export const ESCROW_STATES = ["held", "on_hold", "escalated", "released", "refunded"] as const;
export type EscrowState = (typeof ESCROW_STATES)[number];
export const FINAL_STATES: readonly EscrowState[] = ["released", "refunded"];

export function isEscrowState(text: string): text is EscrowState {
  return (ESCROW_STATES as readonly string[]).includes(text);
}

/** Who may pull a trigger: the contract authorizes by the signing wallet (buyer, seller, arbiter), or anyone once a window ended. */
export type Party = "buyer" | "seller" | "arbiter" | "anyone";

export const ESCROW_TRIGGERS = [
  "deposit",
  "hold",
  "approve",
  "request_refund",
  "cancel",
  "rule_to_seller",
  "rule_to_buyer",
  "settle_window_end",
  "hold_window_end",
  "backstop_end",
] as const;
export type EscrowTrigger = (typeof ESCROW_TRIGGERS)[number];

/** The timed triggers: pulled by anyone once the state's window ended. */
export const TIMED_TRIGGERS = ["settle_window_end", "hold_window_end", "backstop_end"] as const satisfies readonly EscrowTrigger[];

/**
 * When a row applies, against the current state's deadline (settle from the
 * deposit while held, hold from the buyer's hold while on_hold, backstop from
 * the escalation while escalated): strictly before it, at or after it, or at
 * any time.
 */
export type Condition = "before_deadline" | "deadline_passed" | "any_time";

export type EscrowEventName = "escrow.held" | "escrow.on_hold" | "escrow.escalated" | "escrow.released" | "escrow.refunded" | "checkout.paid";

export interface Transition {
  /** null: no escrow yet (the deposit creates it). */
  readonly from: EscrowState | null;
  readonly trigger: EscrowTrigger;
  readonly by: Party;
  readonly condition: Condition;
  readonly to: EscrowState;
  /** The events it emits, in order. */
  readonly events: readonly EscrowEventName[];
  /** Where the money goes, for a final state. */
  readonly pays?: "seller" | "buyer";
}

const RELEASED = ["escrow.released", "checkout.paid"] as const;
const REFUNDED = ["escrow.refunded"] as const;

/**
 * The table. Rows the spec lists verbatim, plus the contract's timed exit
 * from on_hold (the hold window ending resumes the automatic release). A
 * buyer's hold or refund request counts only before the state's deadline:
 * once it passed, the timed exit is due and anyone may take it. The buyer's
 * approval (paying the seller, as the release would) and the seller's cancel
 * (conceding a refund) count at any time while held (approve) or held or on
 * hold (cancel); an arbiter rules only before the backstop. As the contract
 * (C402Escrow, ADR 18) enforces it.
 */
export const TRANSITIONS: readonly Transition[] = [
  { from: null, trigger: "deposit", by: "buyer", condition: "any_time", to: "held", events: ["escrow.held"] },
  { from: "held", trigger: "hold", by: "buyer", condition: "before_deadline", to: "on_hold", events: ["escrow.on_hold"] },
  { from: "held", trigger: "approve", by: "buyer", condition: "any_time", to: "released", events: RELEASED, pays: "seller" },
  { from: "held", trigger: "request_refund", by: "buyer", condition: "before_deadline", to: "escalated", events: ["escrow.escalated"] },
  { from: "on_hold", trigger: "request_refund", by: "buyer", condition: "before_deadline", to: "escalated", events: ["escrow.escalated"] },
  { from: "held", trigger: "settle_window_end", by: "anyone", condition: "deadline_passed", to: "released", events: RELEASED, pays: "seller" },
  { from: "on_hold", trigger: "hold_window_end", by: "anyone", condition: "deadline_passed", to: "released", events: RELEASED, pays: "seller" },
  { from: "held", trigger: "cancel", by: "seller", condition: "any_time", to: "refunded", events: REFUNDED, pays: "buyer" },
  { from: "on_hold", trigger: "cancel", by: "seller", condition: "any_time", to: "refunded", events: REFUNDED, pays: "buyer" },
  { from: "escalated", trigger: "rule_to_seller", by: "arbiter", condition: "before_deadline", to: "released", events: RELEASED, pays: "seller" },
  { from: "escalated", trigger: "rule_to_buyer", by: "arbiter", condition: "before_deadline", to: "refunded", events: REFUNDED, pays: "buyer" },
  { from: "escalated", trigger: "backstop_end", by: "anyone", condition: "deadline_passed", to: "refunded", events: REFUNDED, pays: "buyer" },
];

/** An escrow as the rules need it: its state, the moments its windows count from, and its windows. */
export interface EscrowClock {
  state: EscrowState;
  depositedAt: Date;
  /** When the buyer put it on hold (counts the hold window). */
  onHoldAt?: Date | null;
  /** When the buyer asked the arbiter to rule (counts the backstop). */
  escalatedAt?: Date | null;
  windows: EscrowWindows;
}

/**
 * The current state's deadline: settle from the deposit (held), the later of
 * that and the hold window from the buyer's hold (on_hold), backstop from the
 * escalation (escalated); none in a final state. Throws for an escrow missing the moment its state counts from.
 */
export function deadlineOf(e: EscrowClock): Date | undefined {
  const after = (from: Date | null | undefined, seconds: number, what: string) => {
    if (!from) throw new Error(`an ${e.state} escrow needs ${what}`);
    return new Date(from.getTime() + seconds * 1000);
  };
  switch (e.state) {
    case "held":
      return after(e.depositedAt, e.windows.settleSeconds, "its deposit time");
    case "on_hold": {
      // A hold pauses the release, never brings it forward: the later of the settle window's end and the hold's.
      const settleEnd = after(e.depositedAt, e.windows.settleSeconds, "its deposit time");
      const holdEnd = after(e.onHoldAt, e.windows.holdSeconds, "the time of the buyer's hold");
      return holdEnd > settleEnd ? holdEnd : settleEnd;
    }
    case "escalated":
      return after(e.escalatedAt, e.windows.backstopSeconds, "the time of the escalation");
    default:
      return undefined;
  }
}

export type Refusal = "final" | "not_from_state" | "deadline_passed" | "deadline_not_reached";

export type Decision =
  { ok: true; transition: Transition; to: EscrowState; events: readonly EscrowEventName[] } | { ok: false; refusal: Refusal; reason: string };

const humanTrigger: Record<EscrowTrigger, string> = {
  deposit: "a deposit",
  hold: "the buyer's hold",
  approve: "the buyer's approval",
  request_refund: "the buyer's refund request",
  cancel: "the seller's cancel",
  rule_to_seller: "a ruling for the seller",
  rule_to_buyer: "a ruling for the buyer",
  settle_window_end: "the release at the end of the settle window",
  hold_window_end: "the release at the end of the hold window",
  backstop_end: "the refund at the backstop",
};

/**
 * May `trigger` apply to the escrow (null: none yet) at `now`, and what
 * results: the row, the state it leads to and the events it emits; or why
 * not (a final state, a trigger that state does not take, a deadline that
 * passed or is not reached yet).
 */
export function decide(escrow: EscrowClock | null, trigger: EscrowTrigger, now: Date): Decision {
  const from = escrow?.state ?? null;
  if (from !== null && FINAL_STATES.includes(from)) return { ok: false, refusal: "final", reason: `The escrow is ${from}: nothing more can happen to it.` };
  const row = TRANSITIONS.find((t) => t.from === from && t.trigger === trigger);
  if (!row) {
    return {
      ok: false,
      refusal: "not_from_state",
      reason: from === null ? `There is no escrow yet: only a deposit creates one.` : `A ${from} escrow does not take ${humanTrigger[trigger]}.`,
    };
  }
  if (escrow && row.condition !== "any_time") {
    const deadline = deadlineOf(escrow) as Date;
    const passed = now.getTime() >= deadline.getTime();
    if (row.condition === "before_deadline" && passed) {
      return { ok: false, refusal: "deadline_passed", reason: `Too late for ${humanTrigger[trigger]}: the window ended at ${deadline.toISOString()}.` };
    }
    if (row.condition === "deadline_passed" && !passed) {
      return { ok: false, refusal: "deadline_not_reached", reason: `Too early for ${humanTrigger[trigger]}: the window ends at ${deadline.toISOString()}.` };
    }
  }
  return { ok: true, transition: row, to: row.to, events: row.events };
}

/** The timed exit due now (its window ended: anyone may take it), if any. */
export function dueTimedExit(escrow: EscrowClock, now: Date): Transition | undefined {
  for (const trigger of TIMED_TRIGGERS) {
    const d = decide(escrow, trigger, now);
    if (d.ok) return d.transition;
  }
  return undefined;
}

/** Every row that may apply now, by whom: what a status page offers. */
export function triggersNow(escrow: EscrowClock, now: Date): Transition[] {
  return TRANSITIONS.filter((t) => t.from === escrow.state && decide(escrow, t.trigger, now).ok);
}
