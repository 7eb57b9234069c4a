import { sql, type ColumnType, type Kysely, type Selectable } from "kysely";
import type { WalletChain } from "../domain/ports";

/** The service's schema: raw SQL names its tables in it (kysely's withSchema qualifies only what its builder writes). */
export const SPENDING_WALLETS_SCHEMA = "spending_wallets";
const walletsTable = sql.id(SPENDING_WALLETS_SCHEMA, "wallets");
const spendsTable = sql.id(SPENDING_WALLETS_SCHEMA, "spends");
const limitsTable = sql.id(SPENDING_WALLETS_SCHEMA, "limits");

export type SpendingWalletsDb = Kysely<SpendingWalletsTables>;

export interface SpendingWalletsTables {
  wallets: WalletsTable;
  limits: LimitsTable;
  spends: SpendsTable;
  wallet_events: WalletEventsTable;
}

export type WalletStatus = "active" | "archived";
export type SpendStatus = "reserved" | "confirmed" | "released" | "unknown";
export type WalletEventKind = "created" | "spent" | "revealed" | "flagged" | "revoked" | "refused";

export interface WalletsTable {
  id: string;
  account_id: string;
  chain: WalletChain;
  network: string;
  address: string;
  sealed_secret: string;
  key_id: string;
  status: WalletStatus;
  created_at: Date;
  revealed_at: Date | null;
  revealed_by: string | null;
  archived_at: Date | null;
  balance_flagged: boolean;
}

/** A bigint column: read back as bigint (@c402/db's int8 parser), written as bigint or its decimal text. */
type Atomic = ColumnType<bigint, bigint | string, bigint | string>;

/** Atomic units. */
export interface LimitsTable {
  account_id: string;
  chain: WalletChain;
  per_payment: Atomic;
  per_day: Atomic;
  updated_at: Date;
}

export interface SpendsTable {
  id: string;
  account_id: string;
  chain: WalletChain;
  wallet_id: string;
  amount: Atomic;
  status: SpendStatus;
  /** YYYY-MM-DD, the UTC day. */
  day: string;
  url: string;
  network: string;
  pay_to: string;
  actor: string;
  idempotency_key: string | null;
  transaction: string | null;
  receipt_url: string | null;
  reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface WalletEventsTable {
  id: string;
  wallet_id: string;
  account_id: string;
  chain: WalletChain;
  kind: WalletEventKind;
  actor: string;
  reason: string | null;
  url: string | null;
  amount: ColumnType<bigint | null, bigint | string | null, bigint | string | null>;
  transaction: string | null;
  spend_id: string | null;
  at: Date;
}

export type WalletRow = Selectable<WalletsTable>;
export type LimitsRow = Selectable<LimitsTable>;
export type SpendRow = Selectable<SpendsTable>;
export type WalletEventRow = Selectable<WalletEventsTable>;

/** Limits an account has before it sets any: $1 per payment, $10 per day (the spec's defaults). */
export const DEFAULT_LIMITS = { perPayment: 1_000_000n, perDay: 10_000_000n } as const;

/** The statuses that count against the day: everything not released (an unknown outcome may have paid). */
const COUNTING: readonly SpendStatus[] = ["reserved", "confirmed", "unknown"];

export const walletStore = {
  insertWallet: (db: SpendingWalletsDb, row: WalletRow) => db.insertInto("wallets").values(row).execute(),

  active: (db: SpendingWalletsDb, accountId: string, chain: WalletChain) =>
    db.selectFrom("wallets").selectAll().where("account_id", "=", accountId).where("chain", "=", chain).where("status", "=", "active").executeTakeFirst(),

  /** The active wallet, locked for a change in the caller's transaction. */
  lockActive: (db: SpendingWalletsDb, accountId: string, chain: WalletChain) =>
    db
      .selectFrom("wallets")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("chain", "=", chain)
      .where("status", "=", "active")
      .forUpdate()
      .executeTakeFirst(),

  /** A wallet by id, locked (the budget's reservation and the vault's read go through it). */
  lockById: (db: SpendingWalletsDb, id: string) => db.selectFrom("wallets").selectAll().where("id", "=", id).forUpdate().executeTakeFirst(),

  byId: (db: SpendingWalletsDb, id: string) => db.selectFrom("wallets").selectAll().where("id", "=", id).executeTakeFirst(),

  list(db: SpendingWalletsDb, accountId: string, includeArchived: boolean) {
    let q = db.selectFrom("wallets").selectAll().where("account_id", "=", accountId);
    if (!includeArchived) q = q.where("status", "=", "active");
    return q.orderBy("created_at", "desc").orderBy("id", "desc").execute();
  },

  markRevealed: (db: SpendingWalletsDb, id: string, at: Date, by: string) =>
    db.updateTable("wallets").set({ revealed_at: at, revealed_by: by }).where("id", "=", id).returningAll().executeTakeFirstOrThrow(),

  archive: (db: SpendingWalletsDb, id: string, at: Date) =>
    db.updateTable("wallets").set({ status: "archived", archived_at: at }).where("id", "=", id).returningAll().executeTakeFirstOrThrow(),

  setBalanceFlagged: (db: SpendingWalletsDb, id: string, flagged: boolean) =>
    db.updateTable("wallets").set({ balance_flagged: flagged }).where("id", "=", id).where("balance_flagged", "=", !flagged).returning("id").executeTakeFirst(),

  /** How many wallets are sealed under a key other than `currentKeyId`, and which keys. */
  async retiredKeyUse(db: SpendingWalletsDb, currentKeyId: string): Promise<{ count: number; keyIds: string[] }> {
    const rows = await db
      .selectFrom("wallets")
      .select(["key_id", (eb) => eb.fn.countAll<string>().as("n")])
      .where("key_id", "<>", currentKeyId)
      .groupBy("key_id")
      .orderBy("key_id")
      .execute();
    return { count: rows.reduce((sum, r) => sum + Number(r.n), 0), keyIds: rows.map((r) => r.key_id) };
  },

  /** One wallet still under a retired key, locked; a row another replica is re-wrapping is skipped. */
  async claimOneToRewrap(db: SpendingWalletsDb, currentKeyId: string): Promise<WalletRow | undefined> {
    const { rows } = await sql<WalletRow>`
      select * from ${walletsTable}
      where key_id <> ${currentKeyId}
      order by id
      limit 1
      for update skip locked`.execute(db);
    return rows[0];
  },

  rewrapped: (db: SpendingWalletsDb, id: string, sealed: string, keyId: string) =>
    db.updateTable("wallets").set({ sealed_secret: sealed, key_id: keyId }).where("id", "=", id).execute(),
};

export const limitsStore = {
  get: (db: SpendingWalletsDb, accountId: string, chain: WalletChain) =>
    db.selectFrom("limits").selectAll().where("account_id", "=", accountId).where("chain", "=", chain).executeTakeFirst(),

  /**
   * The limits row, created with the defaults when missing, and locked: the
   * one lock every reservation of the (account, chain) budget takes, whatever
   * wallet it pays from.
   */
  async lock(db: SpendingWalletsDb, accountId: string, chain: WalletChain, now: Date): Promise<LimitsRow> {
    const { rows } = await sql<LimitsRow>`
      insert into ${limitsTable} (account_id, chain, per_payment, per_day, updated_at)
      values (${accountId}, ${chain}, ${DEFAULT_LIMITS.perPayment.toString()}, ${DEFAULT_LIMITS.perDay.toString()}, ${now})
      on conflict (account_id, chain) do update set account_id = excluded.account_id
      returning *`.execute(db);
    return rows[0] as LimitsRow;
  },

  set: (db: SpendingWalletsDb, accountId: string, chain: WalletChain, perPayment: bigint, perDay: bigint, now: Date) =>
    db
      .insertInto("limits")
      .values({ account_id: accountId, chain, per_payment: perPayment, per_day: perDay, updated_at: now })
      .onConflict((oc) => oc.columns(["account_id", "chain"]).doUpdateSet({ per_payment: perPayment, per_day: perDay, updated_at: now }))
      .execute(),
};

export const spendStore = {
  /** What counts against the (account, chain) budget on one UTC day. */
  async countingOn(db: SpendingWalletsDb, accountId: string, chain: WalletChain, day: string): Promise<bigint> {
    const { rows } = await sql<{ total: string | null }>`
      select sum(amount)::text as total from ${spendsTable}
      where account_id = ${accountId} and chain = ${chain} and day = ${day}::date and status in (${sql.join(COUNTING)})`.execute(db);
    return BigInt(rows[0]?.total ?? "0");
  },

  byIdempotencyKey: (db: SpendingWalletsDb, accountId: string, key: string) =>
    db.selectFrom("spends").selectAll().where("account_id", "=", accountId).where("idempotency_key", "=", key).executeTakeFirst(),

  insert: (db: SpendingWalletsDb, row: SpendRow) => db.insertInto("spends").values(row).execute(),

  lock: (db: SpendingWalletsDb, id: string) => db.selectFrom("spends").selectAll().where("id", "=", id).forUpdate().executeTakeFirst(),

  settle: (db: SpendingWalletsDb, id: string, change: Partial<Pick<SpendRow, "status" | "transaction" | "receipt_url" | "reason">>, now: Date) =>
    db
      .updateTable("spends")
      .set({ ...change, updated_at: now })
      .where("id", "=", id)
      .execute(),
};

export const eventStore = {
  insert: (db: SpendingWalletsDb, row: WalletEventRow) => db.insertInto("wallet_events").values(row).execute(),

  list(db: SpendingWalletsDb, f: { accountId: string; chain: WalletChain; after?: { at: Date; id: string }; limit: number }) {
    let q = db.selectFrom("wallet_events").selectAll().where("account_id", "=", f.accountId).where("chain", "=", f.chain);
    if (f.after) {
      const { at, id } = f.after;
      q = q.where(sql<boolean>`(at, id) < (${at}, ${id})`);
    }
    return q.orderBy("at", "desc").orderBy("id", "desc").limit(f.limit).execute();
  },
};
