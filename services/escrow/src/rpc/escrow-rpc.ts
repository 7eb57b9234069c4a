import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { actorOfRequest } from "@c402/account-events";
import { escrowV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import type { EscrowAccounts } from "../domain/account-settings";
import type { ArbiterSource } from "../domain/arbiters";
import type { EscrowPolicy, EscrowSettings, EscrowSettingsChange } from "../domain/settings";
import { ESCROW_PRESETS, PRESET_WINDOWS, type EscrowPresetName, type TermsPreset } from "../domain/windows";

const POLICY: Record<EscrowPolicy, escrowV1.EscrowPolicy> = {
  disabled: escrowV1.EscrowPolicy.DISABLED,
  seller_choice: escrowV1.EscrowPolicy.SELLER_CHOICE,
  always: escrowV1.EscrowPolicy.ALWAYS,
};
const PRESET: Record<TermsPreset, escrowV1.EscrowPreset> = {
  instant: escrowV1.EscrowPreset.INSTANT,
  standard: escrowV1.EscrowPreset.STANDARD,
  shipping: escrowV1.EscrowPreset.SHIPPING,
  custom: escrowV1.EscrowPreset.CUSTOM,
};
const SOURCE: Record<ArbiterSource, escrowV1.ArbiterSource> = {
  create: escrowV1.ArbiterSource.CREATE,
  account: escrowV1.ArbiterSource.ACCOUNT,
  service: escrowV1.ArbiterSource.SERVICE,
};

const keyOf = <K extends string, V>(table: Record<K, V>, value: V): K => (Object.keys(table) as K[]).find((k) => table[k] === value) as K;

/** A named preset of a request (the contract refuses unspecified and custom before the handler runs). */
const presetOf = (p: escrowV1.EscrowPreset) => keyOf(PRESET, p) as EscrowPresetName;

export function settingsMessage(s: EscrowSettings) {
  return {
    policy: POLICY[s.policy],
    defaultPreset: PRESET[s.defaultPreset],
    ...(s.arbiterEvm !== null ? { arbiterEvm: s.arbiterEvm } : {}),
    ...(s.arbiterSvm !== null ? { arbiterSvm: s.arbiterSvm } : {}),
    ...(s.updatedAt ? { updatedAt: timestampFromDate(s.updatedAt) } : {}),
  };
}

/** Every preset's windows, as the settings answers list them. */
const presets = () => ESCROW_PRESETS.map((p) => ({ preset: PRESET[p], windows: PRESET_WINDOWS[p] }));

/** Thin handlers: the rules are the domain's (domain/). */
export function escrowRpc(accounts: EscrowAccounts): ServiceImplementation<typeof escrowV1.EscrowService> {
  return {
    async getEscrowSettings(req) {
      return { settings: settingsMessage(await accounts.get(req.accountId)), presets: presets() };
    },
    async putEscrowSettings(req) {
      const change: EscrowSettingsChange = {
        ...(req.policy !== undefined ? { policy: keyOf(POLICY, req.policy) } : {}),
        ...(req.defaultPreset !== undefined ? { defaultPreset: presetOf(req.defaultPreset) } : {}),
        ...(req.arbiterEvm ? { arbiterEvm: req.arbiterEvm.address ?? null } : {}),
        ...(req.arbiterSvm ? { arbiterSvm: req.arbiterSvm.address ?? null } : {}),
      };
      const r = await accounts.put(req.accountId, change, actorOfRequest(req.actor));
      return { settings: settingsMessage(r.settings), changed: r.changed, arbitersChanged: r.arbitersChanged, presets: presets() };
    },
    async getArbiterReadiness(req) {
      const r = await accounts.readiness(req.accountId);
      return {
        ...(r.evm
          ? {
              evm: {
                arbiter: r.evm.arbiter,
                escrowOffered: r.evm.escrowOffered,
                ...(r.evm.network !== null ? { network: r.evm.network } : {}),
                ...(r.evm.gasBalance !== null ? { gasBalance: r.evm.gasBalance.toString() } : {}),
                ...(r.evm.rulingsAffordable !== null ? { rulingsAffordable: r.evm.rulingsAffordable } : {}),
                rulingsUseServiceGas: false,
                note: r.evm.note,
              },
            }
          : {}),
        ...(r.svm ? { svm: { arbiter: r.svm.arbiter, escrowOffered: false, rulingsUseServiceGas: true, note: r.svm.note } } : {}),
      };
    },
    async resolveEscrowTerms(req) {
      const terms = await accounts.resolveTerms(req.accountId, {
        ...(req.preset !== undefined ? { preset: presetOf(req.preset) } : {}),
        windows: {
          ...(req.settleSeconds !== undefined ? { settleSeconds: req.settleSeconds } : {}),
          ...(req.holdSeconds !== undefined ? { holdSeconds: req.holdSeconds } : {}),
          ...(req.backstopSeconds !== undefined ? { backstopSeconds: req.backstopSeconds } : {}),
        },
        arbiters: {
          ...(req.arbiterEvm !== undefined ? { evm: req.arbiterEvm } : {}),
          ...(req.arbiterSvm !== undefined ? { svm: req.arbiterSvm } : {}),
        },
        forSubSeller: req.forSubSeller,
      });
      return {
        terms: {
          preset: PRESET[terms.preset],
          windows: terms.windows,
          rails: terms.rails.map((r) => ({
            family: r.family,
            ...(r.arbiter !== undefined ? { arbiter: r.arbiter } : {}),
            source: r.source ? SOURCE[r.source] : escrowV1.ArbiterSource.UNSPECIFIED,
            offered: r.offered,
            reason: r.reason,
          })),
        },
      };
    },
    // The escrows themselves (ADR 19) are being built: until then these answer unavailable.
    deposit: notYet,
    getEscrow: notYet,
    listEscrows: notYet,
    prepareAction: notYet,
    submitAction: notYet,
    prepareRuling: notYet,
  };
}

function notYet(): never {
  throw new ProblemError("unavailable", "Escrows are not available yet.");
}
