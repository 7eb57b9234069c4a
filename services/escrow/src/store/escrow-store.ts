import type { Kysely, Selectable } from "kysely";

/** escrow's schema: account escrow settings, escrows (filled by the deposits of a later slice), and the bus's outbox. */
export type EscrowDb = Kysely<{ escrow_settings: EscrowSettingsTable; escrows: EscrowsTable }>;

export interface EscrowSettingsTable {
  account_id: string;
  policy: string;
  default_preset: string;
  /** Checksummed EVM address; null: none. */
  arbiter_evm: string | null;
  /** Base58 Solana address; null: none. */
  arbiter_svm: string | null;
  updated_at: Date;
}

export type EscrowSettingsRow = Selectable<EscrowSettingsTable>;

export interface EscrowsTable {
  payment_id: string;
  checkout_id: string;
  account_id: string;
  network: string;
  contract_address: string;
  payer: string;
  total: string;
  preset: string;
  settle_seconds: number;
  hold_seconds: number;
  backstop_seconds: number;
  arbiter: string;
  state: string;
  handoff_id: string | null;
  test_mode: boolean;
  deposit_tx_hash: string;
  deposited_at: Date;
  on_hold_at: Date | null;
  escalated_at: Date | null;
  closed_at: Date | null;
  deadline_at: Date | null;
  updated_at: Date;
}

export const settingsStore = {
  find: (db: EscrowDb, accountId: string) => db.selectFrom("escrow_settings").selectAll().where("account_id", "=", accountId).executeTakeFirst(),

  /** The account's settings row, locked for a change in the caller's transaction. */
  lock: (db: EscrowDb, accountId: string) => db.selectFrom("escrow_settings").selectAll().where("account_id", "=", accountId).forUpdate().executeTakeFirst(),

  upsert: (db: EscrowDb, row: EscrowSettingsRow) =>
    db
      .insertInto("escrow_settings")
      .values(row)
      .onConflict((oc) =>
        oc.column("account_id").doUpdateSet({
          policy: row.policy,
          default_preset: row.default_preset,
          arbiter_evm: row.arbiter_evm,
          arbiter_svm: row.arbiter_svm,
          updated_at: row.updated_at,
        }),
      )
      .execute(),
};
