import { ESCROW_LIMITS } from "@c402/evm-contracts";
import type { FieldError } from "@c402/problems";

/**
 * An escrow's windows (spec, Limits: "Escrow windows"), in seconds, as the
 * escrow contract counts them:
 *
 * - settle, from the deposit: still `held` with no action when it ends,
 *   anyone may release to the seller;
 * - hold, from the buyer's `hold`: still `on_hold` when it ends, the
 *   automatic release resumes and anyone may release;
 * - backstop, from the escalation: still `escalated` with no ruling when it
 *   ends, anyone may refund the buyer.
 */
export interface EscrowWindows {
  settleSeconds: number;
  holdSeconds: number;
  backstopSeconds: number;
}

const HOUR = 3_600;
const DAY = 24 * HOUR;

/**
 * The spec's limits, as the escrow contract enforces them (ESCROW_LIMITS, one source): every window at
 * least 1 hour; settle and hold at most 30 days; backstop at most 180 days and greater than hold.
 */
export const ESCROW_WINDOW_LIMITS = {
  minSeconds: Number(ESCROW_LIMITS.minWindow),
  settleMaxSeconds: Number(ESCROW_LIMITS.maxSettleWindow),
  holdMaxSeconds: Number(ESCROW_LIMITS.maxHoldWindow),
  backstopMaxSeconds: Number(ESCROW_LIMITS.maxBackstopWindow),
} as const;

export const ESCROW_PRESETS = ["instant", "standard", "shipping"] as const;
export type EscrowPresetName = (typeof ESCROW_PRESETS)[number];
/** What terms name as their preset: one of the three, or `custom` when a window was given one by one. */
export type TermsPreset = EscrowPresetName | "custom";

/**
 * The presets' windows (docs/decisions.md, "Escrow presets"): instant for
 * goods delivered at once (a download, a call), standard for a service
 * rendered within days, shipping for physical goods in the post.
 */
export const PRESET_WINDOWS: Readonly<Record<EscrowPresetName, EscrowWindows>> = {
  instant: { settleSeconds: HOUR, holdSeconds: DAY, backstopSeconds: 7 * DAY },
  standard: { settleSeconds: 3 * DAY, holdSeconds: 7 * DAY, backstopSeconds: 30 * DAY },
  shipping: { settleSeconds: 14 * DAY, holdSeconds: 14 * DAY, backstopSeconds: 60 * DAY },
};

/** The preset an account that never chose one gets. */
export const DEFAULT_PRESET: EscrowPresetName = "standard";

export function isEscrowPreset(text: string): text is EscrowPresetName {
  return (ESCROW_PRESETS as readonly string[]).includes(text);
}

/** The request fields of the windows, as POST /v1/escrow-checkouts names them (the field a refusal names). */
export const WINDOW_FIELDS = {
  settleSeconds: "escrow_settle_window",
  holdSeconds: "escrow_hold_window",
  backstopSeconds: "escrow_backstop_window",
} as const satisfies Record<keyof EscrowWindows, string>;

/** A number of seconds in words, as limits are named: 3600 → "1 hour", 2592000 → "30 days". */
export function durationText(seconds: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (seconds % DAY === 0) return unit(seconds / DAY, "day");
  if (seconds % HOUR === 0) return unit(seconds / HOUR, "hour");
  if (seconds % 60 === 0) return unit(seconds / 60, "minute");
  return unit(seconds, "second");
}

const limitText = (seconds: number) => `${seconds} seconds (${durationText(seconds)})`;

/**
 * Why windows are refused, one error per refused field naming the limit it
 * breaks (every refusal at once), or an empty list. Each must be a whole
 * number of seconds; `backstop > hold` is checked when both are otherwise
 * valid, and named on the backstop.
 */
export function windowRefusals(windows: Partial<EscrowWindows>): FieldError[] {
  const errors: FieldError[] = [];
  const field = (k: keyof EscrowWindows) => WINDOW_FIELDS[k];
  const max: Record<keyof EscrowWindows, number> = {
    settleSeconds: ESCROW_WINDOW_LIMITS.settleMaxSeconds,
    holdSeconds: ESCROW_WINDOW_LIMITS.holdMaxSeconds,
    backstopSeconds: ESCROW_WINDOW_LIMITS.backstopMaxSeconds,
  };
  const ok: Partial<Record<keyof EscrowWindows, boolean>> = {};
  for (const k of Object.keys(max) as (keyof EscrowWindows)[]) {
    const v = windows[k];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v)) errors.push({ field: field(k), reason: "must be a whole number of seconds" });
    else if (v < ESCROW_WINDOW_LIMITS.minSeconds) errors.push({ field: field(k), reason: `must be at least ${limitText(ESCROW_WINDOW_LIMITS.minSeconds)}` });
    else if (v > max[k]) errors.push({ field: field(k), reason: `must be at most ${limitText(max[k])}` });
    else ok[k] = true;
  }
  const { holdSeconds: hold, backstopSeconds: backstop } = windows;
  if (ok.holdSeconds && ok.backstopSeconds && backstop !== undefined && hold !== undefined && backstop <= hold) {
    errors.push({ field: field("backstopSeconds"), reason: `must be greater than the hold window (${limitText(hold)})` });
  }
  return errors;
}

/**
 * The windows of terms: the preset's, each overridden by a window given one
 * by one; the preset is named `custom` when an override changes anything.
 * Answers the refusals instead when the result breaks a limit.
 */
export function termsWindows(
  preset: EscrowPresetName,
  overrides: Partial<EscrowWindows>,
): { ok: true; preset: TermsPreset; windows: EscrowWindows } | { ok: false; errors: FieldError[] } {
  const base = PRESET_WINDOWS[preset];
  const windows: EscrowWindows = {
    settleSeconds: overrides.settleSeconds ?? base.settleSeconds,
    holdSeconds: overrides.holdSeconds ?? base.holdSeconds,
    backstopSeconds: overrides.backstopSeconds ?? base.backstopSeconds,
  };
  const errors = windowRefusals(windows).map((e) =>
    // A backstop the preset set, made too short by a given hold: the hold is what to change.
    e.field === WINDOW_FIELDS.backstopSeconds && overrides.backstopSeconds === undefined
      ? { field: WINDOW_FIELDS.holdSeconds, reason: `must be less than the backstop window (${limitText(windows.backstopSeconds)})` }
      : e,
  );
  if (errors.length) return { ok: false, errors };
  const same = windows.settleSeconds === base.settleSeconds && windows.holdSeconds === base.holdSeconds && windows.backstopSeconds === base.backstopSeconds;
  return { ok: true, preset: same ? preset : "custom", windows };
}
