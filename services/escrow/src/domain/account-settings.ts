import { accountActivityRow, type Actor } from "@c402/account-events";
import { enqueueOutboxRow } from "@c402/bus";
import { invalid, ProblemError } from "@c402/problems";
import { settingsStore as store, type EscrowDb, type EscrowSettingsRow } from "../store/escrow-store";
import type { PerFamily } from "./arbiters";
import { applySettingsChange, arbitersChanged, DEFAULT_ESCROW_SETTINGS, sameSettings, type EscrowSettings, type EscrowSettingsChange } from "./settings";
import { resolveTerms, type EscrowTerms, type TermsRequest } from "./terms";
import type { GasReader } from "../chain/gas-reader";
import { arbiterReadiness, type Readiness } from "./readiness";

const settingsOf = (row: EscrowSettingsRow | undefined): EscrowSettings =>
  row
    ? {
        policy: row.policy as EscrowSettings["policy"],
        defaultPreset: row.default_preset as EscrowSettings["defaultPreset"],
        arbiterEvm: row.arbiter_evm,
        arbiterSvm: row.arbiter_svm,
        updatedAt: row.updated_at,
      }
    : DEFAULT_ESCROW_SETTINGS;

/** The account event's view of settings (docs/account-events.md, escrow_settings.updated). */
const detailOf = (s: EscrowSettings) => ({
  escrow_policy: s.policy,
  escrow_default_preset: s.defaultPreset,
  escrow_arbiter_evm: s.arbiterEvm,
  escrow_arbiter_svm: s.arbiterSvm,
});

export interface EscrowAccountsOptions {
  /** The service's default arbiters (ESCROW_DEFAULT_ARBITER_EVM, …), the last resort of the resolution order. */
  serviceArbiters?: Partial<PerFamily<string | undefined>>;
  /** Where arbiters' gas balances are read; undefined: they are not. */
  chain?: GasReader;
  now?: () => Date;
  /** Told when an event was written to the outbox (the relay publishes it sooner). */
  onOutbox?: () => void;
}

/**
 * Accounts' escrow settings, and the terms an escrow checkout of an account
 * would freeze. The account is identity's: this service keys its rows by the
 * id the gateway authenticated, and an account that never set anything has
 * the defaults.
 */
export class EscrowAccounts {
  private readonly serviceArbiters: Partial<PerFamily<string | undefined>>;
  private readonly chain: GasReader | undefined;
  private readonly now: () => Date;
  private readonly onOutbox: () => void;

  constructor(
    private readonly db: EscrowDb,
    opts: EscrowAccountsOptions = {},
  ) {
    this.serviceArbiters = opts.serviceArbiters ?? {};
    this.chain = opts.chain;
    this.now = opts.now ?? (() => new Date());
    this.onOutbox = opts.onOutbox ?? (() => undefined);
  }

  async get(accountId: string): Promise<EscrowSettings> {
    return settingsOf(await store.find(this.db, accountId));
  }

  /**
   * Changes the fields named (a PUT): arbiters checked per family and stored
   * normalised; one escrow_settings.updated account event, in the same
   * transaction, when anything changed.
   */
  async put(accountId: string, change: EscrowSettingsChange, actor: Actor): Promise<{ settings: EscrowSettings; changed: boolean; arbitersChanged: boolean }> {
    const result = await this.db.transaction().execute(async (trx) => {
      const current = settingsOf(await store.lock(trx, accountId));
      const applied = applySettingsChange(current, change);
      if (!applied.ok) throw invalid(applied.errors, "The escrow settings are not valid.");
      const next = applied.next;
      if (sameSettings(current, next)) return { settings: current, changed: false, arbitersChanged: false };
      const at = this.now();
      await store.upsert(trx, {
        account_id: accountId,
        policy: next.policy,
        default_preset: next.defaultPreset,
        arbiter_evm: next.arbiterEvm,
        arbiter_svm: next.arbiterSvm,
        updated_at: at,
      });
      await enqueueOutboxRow(
        trx,
        accountActivityRow({
          accountId,
          action: "escrow_settings.updated",
          objectId: accountId,
          detail: { ...detailOf(next), before: detailOf(current) },
          actor,
          testMode: false,
          at,
        }),
      );
      return { settings: { ...next, updatedAt: at }, changed: true, arbitersChanged: arbitersChanged(current, next) };
    });
    if (result.changed) this.onOutbox();
    return result;
  }

  /** Whether the account's arbiters can rule now (gas balances read from the chain, when the service reads one). */
  async readiness(accountId: string): Promise<Readiness> {
    return arbiterReadiness(await this.get(accountId), this.chain);
  }

  /** The terms an escrow checkout would freeze now (nothing written): 409 under a disabled policy, 422 naming each refused field. */
  async resolveTerms(accountId: string, request: TermsRequest): Promise<EscrowTerms> {
    const answer = resolveTerms(await this.get(accountId), request, this.serviceArbiters);
    if (answer.ok) return answer.terms;
    if ("policy" in answer)
      throw new ProblemError("conflict", { message: answer.policy, help: { fix: "Change the account's escrow policy, or create a plain checkout." } });
    throw invalid(answer.errors, "The escrow terms are not valid.");
  }
}
