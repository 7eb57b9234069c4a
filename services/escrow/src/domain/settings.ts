import type { FieldError } from "@c402/problems";
import { ARBITER_FAMILIES, checkArbiter, type ArbiterFamily } from "./arbiters";
import { DEFAULT_PRESET, type EscrowPresetName } from "./windows";

/**
 * An account's escrow settings (spec, Escrow: account-level settings),
 * copied by an escrow checkout at create and never followed later.
 */
export const ESCROW_POLICIES = ["disabled", "seller_choice", "always"] as const;
export type EscrowPolicy = (typeof ESCROW_POLICIES)[number];

/** What an account that never set one has: the seller chooses per checkout (docs/decisions.md). */
export const DEFAULT_POLICY: EscrowPolicy = "seller_choice";

export interface EscrowSettings {
  policy: EscrowPolicy;
  defaultPreset: EscrowPresetName;
  arbiterEvm: string | null;
  arbiterSvm: string | null;
  /** null while the account never changed them. */
  updatedAt: Date | null;
}

export const DEFAULT_ESCROW_SETTINGS: EscrowSettings = {
  policy: DEFAULT_POLICY,
  defaultPreset: DEFAULT_PRESET,
  arbiterEvm: null,
  arbiterSvm: null,
  updatedAt: null,
};

/** A change: the fields named; an arbiter null clears it. */
export interface EscrowSettingsChange {
  policy?: EscrowPolicy;
  defaultPreset?: EscrowPresetName;
  arbiterEvm?: string | null;
  arbiterSvm?: string | null;
}

const ARBITER_KEY: Record<ArbiterFamily, "arbiterEvm" | "arbiterSvm"> = { evm: "arbiterEvm", svm: "arbiterSvm" };
/** The REST field of each arbiter (what a refusal names). */
export const ARBITER_SETTING_FIELD: Record<ArbiterFamily, string> = { evm: "escrow_arbiter_evm", svm: "escrow_arbiter_svm" };

/**
 * The settings after a change, arbiters checked for their family and
 * normalised (EVM checksummed), or the refusals (each field at once).
 */
export function applySettingsChange(
  current: EscrowSettings,
  change: EscrowSettingsChange,
): { ok: true; next: EscrowSettings } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const next: EscrowSettings = { ...current };
  if (change.policy !== undefined) next.policy = change.policy;
  if (change.defaultPreset !== undefined) next.defaultPreset = change.defaultPreset;
  for (const family of ARBITER_FAMILIES) {
    const value = change[ARBITER_KEY[family]];
    if (value === undefined) continue;
    if (value === null) {
      next[ARBITER_KEY[family]] = null;
      continue;
    }
    const checked = checkArbiter(family, value);
    if (checked.ok) next[ARBITER_KEY[family]] = checked.address;
    else errors.push({ field: ARBITER_SETTING_FIELD[family], reason: checked.reason });
  }
  return errors.length ? { ok: false, errors } : { ok: true, next };
}

export function sameSettings(a: EscrowSettings, b: EscrowSettings): boolean {
  return a.policy === b.policy && a.defaultPreset === b.defaultPreset && a.arbiterEvm === b.arbiterEvm && a.arbiterSvm === b.arbiterSvm;
}

export function arbitersChanged(a: EscrowSettings, b: EscrowSettings): boolean {
  return a.arbiterEvm !== b.arbiterEvm || a.arbiterSvm !== b.arbiterSvm;
}

/** Why the policy refuses an escrow checkout (undefined: it does not). */
export function policyRefusal(policy: EscrowPolicy): string | undefined {
  return policy === "disabled"
    ? "The account's escrow policy is disabled: it creates no escrow checkouts (PUT /v1/account/escrow with escrow_policy seller_choice or always first)."
    : undefined;
}
