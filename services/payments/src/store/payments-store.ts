import type { Kysely, Selectable } from "kysely";

interface PaymentsTable {
  id: string;
  checkout_id: string;
  account_id: string;
  checkout_title: string;
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  authorization: Record<string, string>;
  price_atomic: bigint;
  provider_amount: bigint;
  platform_amount: bigint | null;
  fee_amount: bigint;
  total: bigint;
  pay_to: string;
  subject: string;
  tx_hash: string;
  test_mode: boolean;
  status: "settled";
  delivery_outcome: string;
  handoff_id: string | null;
  sold_by: string | null;
  settled_at: Date;
}

export interface PaymentsTables {
  payments: PaymentsTable;
}

export type PaymentRow = Selectable<PaymentsTable>;
export type PaymentsDb = Kysely<PaymentsTables>;

export const paymentsStore = {
  /** Inserts the payment unless its authorization was already used; true when inserted. */
  insertIfNew: async (db: PaymentsDb, row: PaymentRow) =>
    (await db
      .insertInto("payments")
      .values({ ...row, authorization: JSON.stringify(row.authorization) as unknown as Record<string, string> })
      .onConflict((oc) => oc.columns(["test_mode", "network", "asset", "payer", "nonce"]).doNothing())
      .returning("id")
      .executeTakeFirst()) !== undefined,

  findByAuthorization: (db: PaymentsDb, key: Pick<PaymentRow, "test_mode" | "network" | "asset" | "payer" | "nonce">) =>
    db
      .selectFrom("payments")
      .selectAll()
      .where("test_mode", "=", key.test_mode)
      .where("network", "=", key.network)
      .where("asset", "=", key.asset)
      .where("payer", "=", key.payer)
      .where("nonce", "=", key.nonce)
      .executeTakeFirst(),

  findById: (db: PaymentsDb, id: string) => db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirst(),
};
