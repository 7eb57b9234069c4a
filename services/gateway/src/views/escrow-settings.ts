import { timestampDate } from "@bufbuild/protobuf/wkt";
import { escrowV1 } from "@c402/contracts";

/**
 * The answers of GET and PUT /v1/account/escrow and GET
 * /v1/account/escrow/readiness (and the MCP tools get_escrow_settings,
 * set_escrow_settings), from the escrow service's messages.
 */

const POLICY: Partial<Record<escrowV1.EscrowPolicy, string>> = {
  [escrowV1.EscrowPolicy.DISABLED]: "disabled",
  [escrowV1.EscrowPolicy.SELLER_CHOICE]: "seller_choice",
  [escrowV1.EscrowPolicy.ALWAYS]: "always",
};
const PRESET: Partial<Record<escrowV1.EscrowPreset, string>> = {
  [escrowV1.EscrowPreset.INSTANT]: "instant",
  [escrowV1.EscrowPreset.STANDARD]: "standard",
  [escrowV1.EscrowPreset.SHIPPING]: "shipping",
  [escrowV1.EscrowPreset.CUSTOM]: "custom",
};

export const escrowPolicyMessage = (name: string): escrowV1.EscrowPolicy =>
  Number(Object.entries(POLICY).find(([, n]) => n === name)?.[0] ?? escrowV1.EscrowPolicy.UNSPECIFIED) as escrowV1.EscrowPolicy;
export const escrowPresetMessage = (name: string): escrowV1.EscrowPreset =>
  Number(Object.entries(PRESET).find(([, n]) => n === name)?.[0] ?? escrowV1.EscrowPreset.UNSPECIFIED) as escrowV1.EscrowPreset;

/** A preset's name as the API spells it ("custom" for windows given one by one). */
export const escrowPresetName = (preset: escrowV1.EscrowPreset): string => PRESET[preset] ?? "custom";

const SETTINGS_NOTE =
  "Escrow checkouts copy these settings at create and never follow them later. Escrow runs on Base only here: a Solana arbiter is kept, but no Solana escrow rail is offered.";

/** The windows of a preset, in seconds, as escrow checkouts name them. */
export function windowsView(w: Pick<escrowV1.EscrowWindows, "settleSeconds" | "holdSeconds" | "backstopSeconds"> | undefined) {
  return { settle_window: w?.settleSeconds ?? 0, hold_window: w?.holdSeconds ?? 0, backstop_window: w?.backstopSeconds ?? 0 };
}

export function escrowSettingsView(settings: escrowV1.EscrowSettings | undefined, presets: readonly escrowV1.PresetWindows[]) {
  return {
    object: "escrow_settings",
    escrow_policy: POLICY[settings?.policy ?? escrowV1.EscrowPolicy.SELLER_CHOICE] ?? "seller_choice",
    escrow_default_preset: PRESET[settings?.defaultPreset ?? escrowV1.EscrowPreset.STANDARD] ?? "standard",
    escrow_arbiter_evm: settings?.arbiterEvm ?? null,
    escrow_arbiter_svm: settings?.arbiterSvm ?? null,
    updated_at: settings?.updatedAt ? timestampDate(settings.updatedAt).toISOString() : null,
    presets: Object.fromEntries(presets.map((p) => [PRESET[p.preset] ?? "custom", windowsView(p.windows)])),
    note: SETTINGS_NOTE,
  };
}

/** Who holds an arbiter's key, and what the service can and cannot do with it. */
export const CUSTODY_NOTE =
  "The service holds no arbiter key: a ruling is an unsigned transaction the arbiter wallet signs (on Base it also broadcasts it and pays its gas). Whoever holds the arbiter's key decides escalated escrows, and the escrow contract can only pay the seller or refund the buyer.";

/**
 * Each chain family's readiness to rule (the escrow service's answer): null
 * where no arbiter is named. On EVM the arbiter's gas balance in wei and the
 * rulings it pays for (null when not read); on Solana the statement that
 * rulings use the service's gas.
 */
export function arbiterReadinessView(r: escrowV1.GetArbiterReadinessResponse) {
  return {
    evm: r.evm
      ? {
          arbiter: r.evm.arbiter,
          escrow_offered: true,
          network: r.evm.network ?? null,
          gas_balance: r.evm.gasBalance ?? null,
          rulings_affordable: r.evm.rulingsAffordable ?? null,
          note: r.evm.note,
        }
      : null,
    svm: r.svm ? { arbiter: r.svm.arbiter, escrow_offered: false, rulings_use_service_gas: true, note: r.svm.note } : null,
  };
}

export function escrowReadinessView(r: escrowV1.GetArbiterReadinessResponse) {
  return { object: "escrow_readiness", readiness: arbiterReadinessView(r), custody_note: CUSTODY_NOTE };
}
