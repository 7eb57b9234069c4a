import type { Actor } from "@c402/account-events";
import { MAX_PLATFORM_FEE_BPS } from "@c402/money";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import { getAddress, isAddress } from "viem";
import { identityStore, type IdentityDb } from "../store/identity-store";
import { platformStore as store, type PlatformSettingsRow } from "../store/platform-store";
import { recordActivity } from "./account-events";

/**
 * Platform mode (spec, Platforms): an account that sells for sub-sellers
 * takes a cut of each price, paid on-chain by the split contract to
 * `platform_fee_to`. The settings are the defaults a checkout copies at
 * create (its own `platform_fee_bps` wins); a checkout keeps the fee it was
 * created with. The fee wallet is an EVM address: the only chain family this
 * service settles today (docs/decisions.md).
 */
export interface PlatformSettings {
  platformAccount: boolean;
  platformFeeBps: number;
  platformFeeTo: string | null;
}

export const NOT_A_PLATFORM: PlatformSettings = { platformAccount: false, platformFeeBps: 0, platformFeeTo: null };

/** Why a PUT body is refused (all the reasons at once), or an empty list. */
export function platformRefusals(input: PlatformSettings): FieldError[] {
  const errors: FieldError[] = [];
  const bps = input.platformFeeBps;
  if (!Number.isInteger(bps) || bps < 0 || bps > MAX_PLATFORM_FEE_BPS) {
    errors.push({ field: "platform_fee_bps", reason: `must be an integer from 0 to ${MAX_PLATFORM_FEE_BPS}` });
  } else if (bps > 0 && !input.platformAccount) {
    errors.push({ field: "platform_fee_bps", reason: "above 0 needs platform_account: true" });
  }
  const to = input.platformFeeTo;
  if (to !== null && !isAddress(to, { strict: true })) {
    errors.push({ field: "platform_fee_to", reason: "must be an EVM address (0x and 40 hex digits, with a valid EIP-55 checksum when mixed case)" });
  } else if (to === null && bps > 0) {
    errors.push({ field: "platform_fee_to", reason: "is required when platform_fee_bps is above 0: the wallet the platform cut is paid to" });
  }
  return errors;
}

const settingsOf = (row: PlatformSettingsRow | undefined): PlatformSettings =>
  row ? { platformAccount: row.platform_account, platformFeeBps: row.platform_fee_bps, platformFeeTo: row.platform_fee_to } : NOT_A_PLATFORM;

const sameSettings = (a: PlatformSettings, b: PlatformSettings) =>
  a.platformAccount === b.platformAccount && a.platformFeeBps === b.platformFeeBps && a.platformFeeTo === b.platformFeeTo;

export class Platforms {
  constructor(
    private readonly db: IdentityDb,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async get(accountId: string): Promise<PlatformSettings> {
    const row = await store.find(this.db, accountId);
    if (row) return settingsOf(row);
    if (!(await identityStore.findAccount(this.db, accountId))) throw new ProblemError("not-found", "No such account.");
    return NOT_A_PLATFORM;
  }

  /**
   * What receipts name as `sold_by` for a checkout this account creates in
   * platform mode: its public slug, or its account id while it has none.
   * Copied at create, like the fee.
   */
  async soldBy(accountId: string): Promise<string> {
    return (await identityStore.findProfile(this.db, accountId))?.slug ?? accountId;
  }

  /** Replaces the settings (a PUT): the fee wallet stored checksummed; one account event when anything changed. */
  async put(accountId: string, input: PlatformSettings, actor: Actor): Promise<{ settings: PlatformSettings; changed: boolean }> {
    const errors = platformRefusals(input);
    if (errors.length) throw invalid(errors, "The platform settings are not valid.");
    const next: PlatformSettings = { ...input, platformFeeTo: input.platformFeeTo === null ? null : getAddress(input.platformFeeTo) };
    const now = this.now();
    return this.db.transaction().execute(async (trx) => {
      if (!(await identityStore.findAccount(trx, accountId))) throw new ProblemError("not-found", "No such account.");
      const current = settingsOf(await store.lock(trx, accountId));
      if (sameSettings(current, next)) return { settings: current, changed: false };
      await store.upsert(trx, {
        account_id: accountId,
        platform_account: next.platformAccount,
        platform_fee_bps: next.platformFeeBps,
        platform_fee_to: next.platformFeeTo,
        updated_at: now,
      });
      await recordActivity(trx, {
        accountId,
        action: "platform.updated",
        objectId: accountId,
        detail: { platform_account: next.platformAccount, platform_fee_bps: next.platformFeeBps, platform_fee_to: next.platformFeeTo },
        actor,
        testMode: false,
        at: now,
      });
      return { settings: next, changed: true };
    });
  }
}
