import { ProblemError } from "@c402/problems";

/** The credential the gateway resolved (the contract's Caller, decoded). */
export interface WalletCaller {
  kind: "session" | "api_key" | "oauth";
  testMode: boolean;
  /** read_only, payments or full ("" when the gateway named none: a session). */
  scope: string;
  actor: string;
}

/** A refusal of the caller rules: the forbidden problem's `reason`, and the scope a key needed when that is why. */
export interface CallerRefusal {
  reason: "session_required" | "reveal_needs_session" | "test_key" | "insufficient_scope";
  neededScope?: "payments";
  message: string;
}

const SCOPE_RUNG: Record<string, number> = { read_only: 0, payments: 1, full: 2 };
const PAYMENTS_RUNG = 1;

/**
 * The spec's table (Authentication 13, Spending wallets): creating a wallet,
 * its limits, funding and archiving need a browser session.
 */
export function managementRefusal(caller: WalletCaller, action: string): CallerRefusal | undefined {
  if (caller.kind === "session") return undefined;
  return { reason: "session_required", message: `${action} needs a browser session: sign in to the dashboard (an API key or OAuth token cannot).` };
}

/** Reveal (the withdrawal) refuses any API key or OAuth token, even with a valid cookie. */
export function revealRefusal(caller: WalletCaller): CallerRefusal | undefined {
  if (caller.kind === "session") return undefined;
  return { reason: "reveal_needs_session", message: "Revealing a spending wallet's key needs a browser session; an API key or OAuth token never can." };
}

/** Pay: any credential but a test key; a key or token needs the payments rung. */
export function payRefusal(caller: WalletCaller): CallerRefusal | undefined {
  if (caller.kind === "session") return undefined;
  if (caller.testMode) return { reason: "test_key", message: "A test key cannot spend from a spending wallet: use a live key." };
  if ((SCOPE_RUNG[caller.scope] ?? -1) < PAYMENTS_RUNG) {
    return { reason: "insufficient_scope", neededScope: "payments", message: "Paying from a spending wallet needs a key of scope payments or full." };
  }
  return undefined;
}

/** The forbidden (403) problem of a refusal, its reason (and needed scope) as extensions the gateway passes on. */
export function forbiddenProblem(refusal: CallerRefusal): ProblemError {
  return new ProblemError("forbidden", {
    message: refusal.message,
    extensions: { reason: refusal.reason, ...(refusal.neededScope ? { needed_scope: refusal.neededScope } : {}) },
    help: { fix: refusal.neededScope ? `Use a key of scope ${refusal.neededScope} or full.` : "Use the dashboard, signed in.", retry_is_safe: false },
  });
}
