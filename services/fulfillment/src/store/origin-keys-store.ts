import type { OriginAuthTypeName } from "@c402/contracts";
import { sql, type Kysely, type Selectable } from "kysely";
import type { PackageTables } from "./packages-store";
import type { RelayTables } from "./relay-store";

interface OriginKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  auth_type: OriginAuthTypeName;
  header_name: string | null;
  /** The value sealed with the key's id as associated data (never read back out to a caller). */
  sealed_value: string;
  created_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
}

interface OriginKeyUsesTable {
  origin_key_id: string;
  checkout_id: string;
}

export interface FulfillmentTables extends RelayTables, PackageTables {
  origin_keys: OriginKeysTable;
  origin_key_uses: OriginKeyUsesTable;
}

export type FulfillmentDb = Kysely<FulfillmentTables>;
export type OriginKeyRecord = Selectable<OriginKeysTable>;
/** An origin key as it may be shown: everything but the sealed value, with how many checkouts reference it. */
export type OriginKeyRow = Omit<OriginKeyRecord, "sealed_value"> & { checkouts_using: number };

/** One page of a newest-first list: at most `size` keys after `after` in (created_at, id) order. */
export interface OriginKeyPage {
  size: number;
  after?: { createdAt: Date; id: string };
}

function shown(db: FulfillmentDb) {
  return db
    .selectFrom("origin_keys as k")
    .select(["k.id", "k.account_id", "k.name", "k.auth_type", "k.header_name", "k.created_at", "k.rotated_at", "k.revoked_at"])
    .select((eb) =>
      eb
        .selectFrom("origin_key_uses as u")
        .select(sql<number>`count(*)::int`.as("n"))
        .whereRef("u.origin_key_id", "=", "k.id")
        .as("checkouts_using"),
    );
}

export async function insertOriginKey(db: FulfillmentDb, row: OriginKeyRecord): Promise<void> {
  await db.insertInto("origin_keys").values(row).execute();
}

/** The account's key by id, as it may be shown (another account's is not found). */
export async function findOriginKey(db: FulfillmentDb, accountId: string, id: string): Promise<OriginKeyRow | undefined> {
  const row = await shown(db).where("k.account_id", "=", accountId).where("k.id", "=", id).executeTakeFirst();
  return row && { ...row, checkouts_using: Number(row.checkouts_using ?? 0) };
}

/** Locks the account's key row for a change in `trx`; answers whether it exists and when it was revoked. */
export async function lockOriginKey(trx: FulfillmentDb, accountId: string, id: string): Promise<Pick<OriginKeyRecord, "auth_type" | "revoked_at"> | undefined> {
  return trx
    .selectFrom("origin_keys")
    .select(["auth_type", "revoked_at"])
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
}

/** What a forward needs of the account's key: its sealed value and how it is sent, and whether it is revoked. */
export async function findSealedCredential(
  db: FulfillmentDb,
  accountId: string,
  id: string,
): Promise<Pick<OriginKeyRecord, "auth_type" | "header_name" | "sealed_value" | "revoked_at"> | undefined> {
  return db
    .selectFrom("origin_keys")
    .select(["auth_type", "header_name", "sealed_value", "revoked_at"])
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

export async function listOriginKeys(db: FulfillmentDb, accountId: string, page: OriginKeyPage): Promise<OriginKeyRow[]> {
  let q = shown(db).where("k.account_id", "=", accountId);
  const after = page.after;
  if (after) q = q.where((eb) => eb(eb.refTuple("k.created_at", "k.id"), "<", eb.tuple(after.createdAt, after.id)));
  const rows = await q.orderBy("k.created_at", "desc").orderBy("k.id", "desc").limit(page.size).execute();
  return rows.map((r) => ({ ...r, checkouts_using: Number(r.checkouts_using ?? 0) }));
}

export async function replaceSealedValue(trx: FulfillmentDb, id: string, sealedValue: string, at: Date): Promise<void> {
  await trx.updateTable("origin_keys").set({ sealed_value: sealedValue, rotated_at: at }).where("id", "=", id).execute();
}

export async function markRevoked(trx: FulfillmentDb, id: string, at: Date): Promise<void> {
  await trx.updateTable("origin_keys").set({ revoked_at: at }).where("id", "=", id).execute();
}
