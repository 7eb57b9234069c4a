import { CHAIN_FAMILY } from "@c402/chain-addresses";
import { invalid, type FieldError } from "@c402/problems";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { validateBody } from "../http/validate";
import {
  CUSTODY_NOTE,
  arbiterReadinessView,
  escrowPolicyMessage,
  escrowPresetMessage,
  escrowReadinessView,
  escrowSettingsView,
} from "../views/escrow-settings";

/**
 * What GET and PUT /v1/account/escrow and GET /v1/account/escrow/readiness
 * answer (and the MCP tools get_escrow_settings, set_escrow_settings): the
 * escrow service's settings of the account. Reading takes any seller
 * credential; changing them is an account setting (full).
 */
export class EscrowSettingsOperations {
  constructor(private readonly deps: Pick<GatewayDeps, "clients">) {}

  async get(cred: Credential, opts: { checkBalances?: boolean } = {}) {
    ensureScope(cred, "read_only");
    const r = await this.deps.clients.escrow.getEscrowSettings({ accountId: cred.accountId });
    const view = escrowSettingsView(r.settings, r.presets);
    if (!opts.checkBalances) return view;
    const readiness = await this.deps.clients.escrow.getArbiterReadiness({ accountId: cred.accountId });
    return { ...view, readiness: arbiterReadinessView(readiness), custody_note: CUSTODY_NOTE };
  }

  async readiness(cred: Credential) {
    ensureScope(cred, "read_only");
    return escrowReadinessView(await this.deps.clients.escrow.getArbiterReadiness({ accountId: cred.accountId }));
  }

  /**
   * Changes the fields the body names. `arbiter: "payouts"` copies the
   * account's standing payout wallets (identity's) as the arbiters: Base's as
   * the EVM arbiter, Solana's as the Solana one (none: no arbiter there), a
   * snapshot sent as explicit values. A change of arbiters answers their
   * readiness.
   */
  async put(cred: Credential, raw: unknown) {
    ensureScope(cred, "full");
    const body = validateBody("EscrowSettingsPut", raw);
    let arbiterEvm = body.escrow_arbiter_evm;
    let arbiterSvm = body.escrow_arbiter_svm;
    if (body.arbiter === "payouts") {
      const errors: FieldError[] = [];
      for (const field of ["escrow_arbiter_evm", "escrow_arbiter_svm"] as const) {
        if (body[field] !== undefined) errors.push({ field, reason: 'cannot be sent with arbiter: "payouts", which sets both arbiters' });
      }
      if (errors.length) throw invalid(errors, "The escrow settings are not valid.");
      const { wallets } = await this.deps.clients.identity.getPayoutWallets({ accountId: cred.accountId });
      const standing = (family: string) => wallets.find((w) => w.isDefault && w.chainFamily === family)?.address ?? null;
      arbiterEvm = standing(CHAIN_FAMILY.base);
      arbiterSvm = standing(CHAIN_FAMILY.solana);
      if (arbiterEvm === null && arbiterSvm === null) {
        throw invalid(
          [
            {
              field: "arbiter",
              reason: "has no payout wallet to copy: the account has no standing Base or Solana payout wallet (PUT /v1/account/wallets first)",
            },
          ],
          "The escrow settings are not valid.",
        );
      }
    }
    const r = await this.deps.clients.escrow.putEscrowSettings({
      accountId: cred.accountId,
      ...(body.escrow_policy !== undefined ? { policy: escrowPolicyMessage(body.escrow_policy) } : {}),
      ...(body.escrow_default_preset !== undefined ? { defaultPreset: escrowPresetMessage(body.escrow_default_preset) } : {}),
      ...(arbiterEvm !== undefined ? { arbiterEvm: arbiterEvm === null ? {} : { address: arbiterEvm } } : {}),
      ...(arbiterSvm !== undefined ? { arbiterSvm: arbiterSvm === null ? {} : { address: arbiterSvm } } : {}),
      actor: cred.actor,
    });
    const view = { ...escrowSettingsView(r.settings, r.presets), changed: r.changed };
    if (!r.arbitersChanged) return view;
    const readiness = await this.deps.clients.escrow.getArbiterReadiness({ accountId: cred.accountId });
    return { ...view, readiness: arbiterReadinessView(readiness), custody_note: CUSTODY_NOTE };
  }
}
