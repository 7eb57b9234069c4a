import type { FieldError } from "@c402/problems";
import { resolveArbiters, type EscrowRail, type PerFamily } from "./arbiters";
import { policyRefusal, type EscrowSettings } from "./settings";
import { termsWindows, type EscrowPresetName, type EscrowWindows, type TermsPreset } from "./windows";

/** What an escrow checkout freezes at create (spec, Escrow: terms, inside the buyer's signature). */
export interface EscrowTerms {
  preset: TermsPreset;
  windows: EscrowWindows;
  rails: EscrowRail[];
}

export interface TermsRequest {
  /** undefined: the account's default preset. */
  preset?: EscrowPresetName;
  windows: Partial<EscrowWindows>;
  arbiters: Partial<PerFamily<string | undefined>>;
  forSubSeller: boolean;
}

export type TermsAnswer = { ok: true; terms: EscrowTerms } | { ok: false; policy: string } | { ok: false; errors: FieldError[] };

/**
 * The terms an escrow checkout of an account would freeze now: refused by a
 * disabled policy; else the preset (named, or the account's default) with
 * each window given one by one overriding it, checked against the limits,
 * and the arbiters by the resolution order. Every field refusal at once.
 */
export function resolveTerms(settings: EscrowSettings, request: TermsRequest, serviceArbiters: Partial<PerFamily<string | undefined>>): TermsAnswer {
  const refusal = policyRefusal(settings.policy);
  if (refusal) return { ok: false, policy: refusal };
  const windows = termsWindows(request.preset ?? settings.defaultPreset, request.windows);
  const arbiters = resolveArbiters({
    explicit: request.arbiters,
    account: { evm: settings.arbiterEvm, svm: settings.arbiterSvm },
    service: serviceArbiters,
    forSubSeller: request.forSubSeller,
  });
  const errors = [...(windows.ok ? [] : windows.errors), ...(arbiters.ok ? [] : arbiters.errors)];
  if (!windows.ok || !arbiters.ok) return { ok: false, errors };
  return { ok: true, terms: { preset: windows.preset, windows: windows.windows, rails: arbiters.rails } };
}
