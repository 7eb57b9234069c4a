import { sql, type Kysely, type Migration } from "@c402/db";
import type { ColumnType } from "kysely";

/**
 * The database count of a signing key's nonces (ADR 11), one mechanism for every service that
 * signs transactions with a key all its replicas share (payments' facilitator, escrow's relayer):
 * a signature takes the key's row lock, and the nonce it used is counted in the same commit that
 * records the signed transaction, so replicas sign in turn and a crash leaves no nonce unused.
 */

export interface SenderNoncesTable {
  chain_id: ColumnType<bigint, bigint | string, bigint | string>;
  address: string;
  next_nonce: ColumnType<bigint, bigint | string, bigint | string>;
  updated_at: Date;
}

export interface SenderNoncesTables {
  sender_nonces: SenderNoncesTable;
}

/** The `sender_nonces` table: the next nonce of each key that signs here, per chain. */
export const senderNoncesMigration: Migration = {
  async up(db) {
    await db.schema
      .createTable("sender_nonces")
      .addColumn("chain_id", "bigint", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("next_nonce", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("sender_nonces_pk", ["chain_id", "address"])
      .execute();
  },
};

/** A signing key's shared nonce count, as `@c402/evm-sender`'s NonceReservation hands it over. */
export interface NonceKey {
  chainId: number;
  address: string;
  /** The chain passed the count (the key was used elsewhere): start from the chain's count. */
  behind: boolean;
  chainCount: () => Promise<number>;
}

/** Thrown inside the transaction to roll it back when nothing was recorded. */
class NothingRecorded extends Error {}

/**
 * Signs with the key's next nonce and records what was signed, in one transaction that holds the
 * key's row lock (the caller's, when `db` is one: the nonce is then counted in the caller's
 * commit). `record` answers undefined when a concurrent step got there first: then nothing is
 * counted, and the answer is undefined.
 */
export async function recordSigned<DB, T, S>(
  db: Kysely<DB>,
  key: NonceKey,
  sign: (nonce: number) => Promise<S>,
  record: (trx: Kysely<DB>, signed: S, nonce: number) => Promise<T | undefined>,
): Promise<T | undefined> {
  const nonces = db as unknown as Kysely<SenderNoncesTables>;
  const where = { chain_id: BigInt(key.chainId), address: key.address.toLowerCase() };
  const counted = await nonces
    .selectFrom("sender_nonces")
    .select("next_nonce")
    .where("chain_id", "=", where.chain_id)
    .where("address", "=", where.address)
    .executeTakeFirst();
  // Asked outside the lock: the chain's count is a floor, and a count already kept may be higher.
  const floor = !counted || key.behind ? await key.chainCount() : undefined;
  const work = async (trx: Kysely<SenderNoncesTables>) => {
    if (floor !== undefined) {
      await trx
        .insertInto("sender_nonces")
        .values({ ...where, next_nonce: String(floor), updated_at: new Date() })
        .onConflict((oc) => oc.columns(["chain_id", "address"]).doUpdateSet({ next_nonce: sql`greatest(sender_nonces.next_nonce, excluded.next_nonce)` }))
        .execute();
    }
    const row = await trx
      .selectFrom("sender_nonces")
      .select("next_nonce")
      .where("chain_id", "=", where.chain_id)
      .where("address", "=", where.address)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const nonce = Number(row.next_nonce);
    const recorded = await record(trx as unknown as Kysely<DB>, await sign(nonce), nonce);
    if (recorded === undefined) throw new NothingRecorded();
    await trx
      .updateTable("sender_nonces")
      .set({ next_nonce: String(nonce + 1), updated_at: new Date() })
      .where("chain_id", "=", where.chain_id)
      .where("address", "=", where.address)
      .execute();
    return recorded;
  };
  try {
    return await (nonces.isTransaction ? work(nonces) : nonces.transaction().execute(work));
  } catch (err) {
    if (err instanceof NothingRecorded) return undefined;
    throw err;
  }
}
