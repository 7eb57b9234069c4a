import type { SenderNoncesTables } from "@c402/sender-nonces";
import type { Kysely, Selectable } from "kysely";

/** escrow's schema: account escrow settings, escrows and their transactions, the relayer's nonce count (sender_nonces), the chain cursor, and the bus's outbox. */
export type EscrowDb = Kysely<EscrowTables>;

export interface EscrowTables extends SenderNoncesTables {
  escrow_settings: EscrowSettingsTable;
  escrows: EscrowsTable;
  escrow_transactions: EscrowTransactionsTable;
  chain_cursors: ChainCursorsTable;
}

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

/** A state the row may hold: the spec's five, plus `depositing` (recorded, not confirmed) and `failed` (the chain refused the deposit). */
export type EscrowRowState = "depositing" | "held" | "on_hold" | "escalated" | "released" | "refunded" | "failed";

/** The terms as the buyer signed them (the contract's EscrowTerms; amounts and windows as decimal text). */
export interface StoredTerms {
  buyer: string;
  seller: string;
  platform: string;
  feeTo: string;
  arbiter: string;
  amount: string;
  platformAmount: string;
  fee: string;
  settleWindow: string;
  holdWindow: string;
  backstopWindow: string;
  preset: number;
  salt: string;
}

export interface StoredAuthorization {
  validAfter: string;
  validBefore: string;
  nonce: string;
  signature: string;
}

export interface EscrowsTable {
  payment_id: string;
  checkout_id: string;
  account_id: string;
  network: string;
  contract_address: string;
  escrow_id: string;
  payer: string;
  seller: string;
  /** Total deposited, USDC atomic units (bigint, read back as text). */
  total: string;
  preset: string;
  settle_seconds: number;
  hold_seconds: number;
  backstop_seconds: number;
  arbiter: string;
  terms: StoredTerms;
  authorization: StoredAuthorization;
  state: EscrowRowState;
  handoff_id: string | null;
  test_mode: boolean;
  action_nonce: number;
  deposit_tx_hash: string | null;
  close_tx_hash: string | null;
  closed_by: string | null;
  failure_reason: string | null;
  created_at: Date;
  deposited_at: Date | null;
  on_hold_at: Date | null;
  escalated_at: Date | null;
  closed_at: Date | null;
  deadline_at: Date | null;
  updated_at: Date;
}

export type EscrowRow = Selectable<EscrowsTable>;

export type TransactionKind = "deposit" | "action" | "release" | "refund";
export type TransactionStatus = "signed" | "sent" | "confirmed" | "failed";

export interface EscrowTransactionsTable {
  id: string;
  payment_id: string;
  kind: TransactionKind;
  action: string | null;
  raw_tx: string;
  tx_hash: string;
  nonce: string;
  status: TransactionStatus;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export type EscrowTransactionRow = Selectable<EscrowTransactionsTable>;

interface ChainCursorsTable {
  name: string;
  block: string;
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

/** The states a timed exit or an action can still move. */
export const OPEN_STATES: readonly EscrowRowState[] = ["held", "on_hold", "escalated"];

export const escrowsStore = {
  /** Inserts the escrow unless its payment already has one; answers whether it did. */
  async insert(db: EscrowDb, row: EscrowRow): Promise<boolean> {
    const inserted = await db
      .insertInto("escrows")
      .values({ ...row, terms: JSON.stringify(row.terms) as never, authorization: JSON.stringify(row.authorization) as never })
      .onConflict((oc) => oc.doNothing())
      .returning("payment_id")
      .executeTakeFirst();
    return inserted !== undefined;
  },

  find: (db: EscrowDb, paymentId: string) => db.selectFrom("escrows").selectAll().where("payment_id", "=", paymentId).executeTakeFirst(),

  lock: (db: EscrowDb, paymentId: string) => db.selectFrom("escrows").selectAll().where("payment_id", "=", paymentId).forUpdate().executeTakeFirst(),

  /** The live escrow of a contract id, locked for the caller's transaction. */
  lockByEscrowId: (db: EscrowDb, contract: string, escrowId: string) =>
    db
      .selectFrom("escrows")
      .selectAll()
      .where("contract_address", "=", contract.toLowerCase())
      .where("escrow_id", "=", escrowId.toLowerCase())
      .where("test_mode", "=", false)
      .forUpdate()
      .executeTakeFirst(),

  /** Moves an escrow on; `from` guards against a concurrent step (undefined when another got there first). */
  advance: (db: EscrowDb, paymentId: string, from: readonly EscrowRowState[], set: Partial<EscrowRow>) =>
    db
      .updateTable("escrows")
      .set({ ...set, updated_at: new Date() })
      .where("payment_id", "=", paymentId)
      .where("state", "in", [...from])
      .returningAll()
      .executeTakeFirst(),

  /** An account's escrows, newest first (created_at, then payment id), after a payment id's escrow. */
  async page(db: EscrowDb, accountId: string, opts: { state?: EscrowRowState; size: number; startingAfter?: string }) {
    let q = db.selectFrom("escrows").selectAll().where("account_id", "=", accountId).where("state", "not in", ["depositing", "failed"]);
    if (opts.state) q = q.where("state", "=", opts.state);
    if (opts.startingAfter) {
      const after = await db.selectFrom("escrows").select(["created_at", "payment_id"]).where("payment_id", "=", opts.startingAfter).executeTakeFirst();
      if (after) q = q.where((eb) => eb(eb.refTuple("created_at", "payment_id"), "<", eb.tuple(after.created_at, after.payment_id)));
    }
    const rows = await q
      .orderBy("created_at", "desc")
      .orderBy("payment_id", "desc")
      .limit(opts.size + 1)
      .execute();
    return { rows: rows.slice(0, opts.size), hasMore: rows.length > opts.size };
  },

  /**
   * Claims open escrows whose timed exit is due by `before` and has no transaction under way, each
   * locked until the caller's transaction ends and skipped by every other claimer meanwhile
   * (FOR UPDATE SKIP LOCKED): across replicas, one sweeper acts on each.
   */
  claimDue: (db: EscrowDb, testMode: boolean, before: Date, limit: number) =>
    db
      .selectFrom("escrows")
      .selectAll()
      .where("state", "in", [...OPEN_STATES])
      .where("test_mode", "=", testMode)
      .where("deadline_at", "<=", before)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("escrow_transactions as t")
              .select("t.id")
              .whereRef("t.payment_id", "=", "escrows.payment_id")
              .where("t.kind", "in", ["release", "refund"])
              .where("t.status", "<>", "failed"),
          ),
        ),
      )
      .orderBy("deadline_at")
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute(),
};

export const transactionsStore = {
  find: (db: EscrowDb, id: string) => db.selectFrom("escrow_transactions").selectAll().where("id", "=", id).executeTakeFirst(),

  byHash: (db: EscrowDb, txHash: string) => db.selectFrom("escrow_transactions").selectAll().where("tx_hash", "=", txHash.toLowerCase()).executeTakeFirst(),

  depositOf: (db: EscrowDb, paymentId: string) =>
    db.selectFrom("escrow_transactions").selectAll().where("payment_id", "=", paymentId).where("kind", "=", "deposit").executeTakeFirst(),

  insert: (db: EscrowDb, row: EscrowTransactionRow) =>
    db
      .insertInto("escrow_transactions")
      .values({ ...row, tx_hash: row.tx_hash.toLowerCase() })
      .onConflict((oc) => oc.doNothing())
      .returning("id")
      .executeTakeFirst(),

  mark: (db: EscrowDb, id: string, from: readonly TransactionStatus[], set: Partial<EscrowTransactionRow>) =>
    db
      .updateTable("escrow_transactions")
      .set({ ...set, updated_at: new Date() })
      .where("id", "=", id)
      .where("status", "in", [...from])
      .returningAll()
      .executeTakeFirst(),

  /** Transactions recorded or sent and not concluded, untouched since `before` (the sweep resumes them). */
  unfinished: (db: EscrowDb, before: Date, limit: number) =>
    db
      .selectFrom("escrow_transactions")
      .selectAll()
      .where("status", "in", ["signed", "sent"])
      .where("updated_at", "<=", before)
      .orderBy("updated_at")
      .limit(limit)
      .execute(),
};

export const cursorStore = {
  get: async (db: EscrowDb, name: string) => {
    const row = await db.selectFrom("chain_cursors").select("block").where("name", "=", name).executeTakeFirst();
    return row ? BigInt(row.block) : undefined;
  },
  set: (db: EscrowDb, name: string, block: bigint) =>
    db
      .insertInto("chain_cursors")
      .values({ name, block: block.toString(), updated_at: new Date() })
      .onConflict((oc) => oc.column("name").doUpdateSet({ block: block.toString(), updated_at: new Date() }))
      .execute(),
};
