import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { EmbeddedPostgres, migrate, openPostgres, sql, type MigrationSet, type ServiceDatabase } from "../src";

const migrations: MigrationSet = {
  "0001_items": {
    async up(db) {
      await db.schema
        .createTable("items")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("amount", "bigint", (c) => c.notNull())
        .execute();
    },
  },
};

function behavesLikeAServiceDatabase(open: () => Promise<{ a: ServiceDatabase; b: ServiceDatabase; close(): Promise<void> }>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.a, migrations);
    await migrate(ctx.b, migrations);
    await migrate(ctx.a, migrations); // idempotent
  });
  afterAll(() => ctx.close());

  it("keeps each service in its own schema, bookkeeping included", async () => {
    await ctx.a.db.insertInto("items").values({ id: "x", amount: 5n }).execute();
    expect(await ctx.b.db.selectFrom("items").selectAll().execute()).toEqual([]);
    const tables = await sql<{ table_schema: string; table_name: string }>`
      select table_schema, table_name from information_schema.tables
      where table_schema in (${ctx.a.schema}, ${ctx.b.schema}) order by 1, 2`.execute(ctx.a.db);
    expect(tables.rows.map((r) => `${r.table_schema}.${r.table_name}`)).toEqual([
      `${ctx.a.schema}.items`,
      `${ctx.a.schema}.kysely_migration`,
      `${ctx.a.schema}.kysely_migration_lock`,
      `${ctx.b.schema}.items`,
      `${ctx.b.schema}.kysely_migration`,
      `${ctx.b.schema}.kysely_migration_lock`,
    ]);
  });

  it("returns bigint for int8 columns", async () => {
    await ctx.a.db.insertInto("items").values({ id: "big", amount: 9_007_199_254_740_993n }).execute();
    const row = await ctx.a.db.selectFrom("items").select("amount").where("id", "=", "big").executeTakeFirstOrThrow();
    expect(row.amount).toBe(9_007_199_254_740_993n);
  });

  it("rolls back a failed transaction while another service commits", async () => {
    const failing = ctx.a.db.transaction().execute(async (trx) => {
      await trx.insertInto("items").values({ id: "rolled-back", amount: 1n }).execute();
      throw new Error("boom");
    });
    const committing = ctx.b.db.transaction().execute(async (trx) => {
      await trx.insertInto("items").values({ id: "committed", amount: 2n }).execute();
    });
    await expect(failing).rejects.toThrow("boom");
    await committing;
    expect(await ctx.a.db.selectFrom("items").select("id").where("id", "=", "rolled-back").execute()).toEqual([]);
    expect(await ctx.b.db.selectFrom("items").select("id").where("id", "=", "committed").execute()).toEqual([{ id: "committed" }]);
  });

  it("answers ping", async () => {
    await expect(ctx.a.ping()).resolves.toBeUndefined();
  });
}

describe("embedded PostgreSQL (PGlite)", () => {
  behavesLikeAServiceDatabase(async () => {
    const pg = await EmbeddedPostgres.open();
    return { a: pg.forSchema("svc_a"), b: pg.forSchema("svc_b"), close: () => pg.close() };
  });
});

describeWith("postgres")("PostgreSQL", () => {
  behavesLikeAServiceDatabase(async () => {
    const fresh = await freshPostgresDatabase();
    const a = openPostgres({ url: fresh.url, schema: "svc_a" });
    const b = openPostgres({ url: fresh.url, schema: "svc_b" });
    return {
      a,
      b,
      async close() {
        await a.close();
        await b.close();
        await fresh.drop();
      },
    };
  });
});
