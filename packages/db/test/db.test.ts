import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { dbStatements } from "@c402/metrics";
import { DependencyUnavailableError, problemOf } from "@c402/problems";
import { runWithContext } from "@c402/request-context";
import { describeWith, freshPostgresDatabase, runScriptProcess } from "@c402/testkit";
import { PGlite, parse, protocol } from "@electric-sql/pglite";
import { EmbeddedPostgres, migrate, openPostgres, reusableStatement, sql, type ExpressionBuilder, type MigrationSet, type ServiceDatabase } from "../src";
import { parseBytea, serializeBytea } from "../src/pglite-bytea";
import { bindExecuteSync, PGliteStatements } from "../src/pglite-statements";
import { PGliteThread } from "../src/pglite-thread-session";

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
  "0002_things": {
    async up(db) {
      await db.schema
        .createTable("things")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("doc", "jsonb")
        .addColumn("raw", "bytea")
        .addColumn("at", "timestamptz")
        .addColumn("flag", "boolean")
        .addColumn("big", "bigint")
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
      `${ctx.a.schema}.things`,
      `${ctx.b.schema}.items`,
      `${ctx.b.schema}.kysely_migration`,
      `${ctx.b.schema}.kysely_migration_lock`,
      `${ctx.b.schema}.things`,
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

  it("round-trips every parameter type the services store", async () => {
    const thing = {
      id: "it's \\ a 'quoted' id",
      doc: JSON.stringify({ nested: { list: [1, "two", null] }, quote: "'\"" }),
      raw: Buffer.from([0, 1, 2, 255]),
      at: new Date("2026-01-02T03:04:05.678Z"),
      flag: true,
      big: 2n ** 62n,
    };
    await ctx.a.db.insertInto("things").values(thing).execute();
    await ctx.a.db.insertInto("things").values({ id: "nulls", doc: null, raw: null, at: null, flag: null, big: null }).execute();
    const rows = await ctx.a.db.selectFrom("things").selectAll().where("id", "in", [thing.id, "nulls"]).orderBy("id").execute();
    expect(rows).toEqual([
      { id: thing.id, doc: JSON.parse(thing.doc), raw: expect.anything(), at: thing.at, flag: true, big: 2n ** 62n },
      { id: "nulls", doc: null, raw: null, at: null, flag: null, big: null },
    ]);
    expect(Buffer.from(rows[0]!.raw as Uint8Array)).toEqual(thing.raw);
  });

  it("stores and reads bytes exactly: every byte value, empty, large, and a view into a larger buffer", async () => {
    const everyByte = Uint8Array.from({ length: 256 }, (_, i) => i);
    const large = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 31 + 7) % 256);
    const backing = Uint8Array.from([9, 9, 0xde, 0xad, 0xbe, 0xef, 9]);
    const values: [string, Uint8Array][] = [
      ["bytes-every", everyByte],
      ["bytes-empty", new Uint8Array(0)],
      ["bytes-large", large],
      ["bytes-view", backing.subarray(2, 6)],
    ];
    for (const [id, raw] of values) await ctx.a.db.insertInto("things").values({ id, raw }).execute();
    // What the server holds, by its own hex: the parameter was written exactly.
    const stored = await sql<{
      id: string;
      hex: string;
    }>`select id, encode(raw, 'hex') as hex from ${sql.id(ctx.a.schema, "things")} where id like 'bytes-%'`.execute(ctx.a.db);
    const hexById = new Map(stored.rows.map((r) => [r.id, r.hex]));
    const rows = await ctx.a.db.selectFrom("things").select(["id", "raw"]).where("id", "like", "bytes-%").execute();
    const rawById = new Map(rows.map((r) => [r.id, r.raw as Uint8Array]));
    for (const [id, raw] of values) {
      expect(hexById.get(id)).toBe(Buffer.from(raw).toString("hex"));
      const read = rawById.get(id);
      expect(read).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(read!).equals(Buffer.from(raw))).toBe(true);
    }
    expect(hexById.get("bytes-view")).toBe("deadbeef");
  });

  it("runs a reusable statement built once per database and shape, each call with its own values, in its own schema", async () => {
    let builds = 0;
    const upsert = reusableStatement(
      (db, v: { thing: { id: string; doc?: string | null; raw: Buffer; at: Date; flag: boolean; big: bigint }; note: string }) => {
        builds++;
        return db
          .with("written", (q) =>
            q
              .insertInto("things")
              .values(v.thing)
              .onConflict((oc) => oc.column("id").doNothing())
              .returning(["id", "doc"]),
          )
          .selectFrom("written")
          .select(["id", "doc", sql<string>`${v.note}::text`.as("note")]);
      },
    );
    const thing = (id: string, doc?: string | null) => ({
      id,
      ...(doc === undefined ? {} : { doc }),
      raw: Buffer.from(id),
      at: new Date("2026-11-27T10:00:00Z"),
      flag: id.length % 2 === 0,
      big: BigInt(id.length) * 2n ** 60n,
    });
    expect((await upsert(ctx.a.db, { thing: thing("r1", JSON.stringify({ n: 1 })), note: "first" })).rows).toEqual([
      { id: "r1", doc: { n: 1 }, note: "first" },
    ]);
    expect((await upsert(ctx.a.db, { thing: thing("r22", null), note: "second" })).rows).toEqual([{ id: "r22", doc: null, note: "second" }]);
    expect((await upsert(ctx.a.db, { thing: thing("r1", "{}"), note: "again" })).rows).toEqual([]); // the conflict: nothing written
    expect(builds).toBe(1);
    // Another shape (doc left out): built apart, the column left to its default.
    expect((await upsert(ctx.a.db, { thing: thing("r333"), note: "third" })).rows).toEqual([{ id: "r333", doc: null, note: "third" }]);
    // Another service's database: its own schema.
    expect((await upsert(ctx.b.db, { thing: thing("r1", "[]"), note: "b" })).rows).toEqual([{ id: "r1", doc: [], note: "b" }]);
    expect(builds).toBe(3);
    // doc present but undefined: a shape of its own (kysely leaves the column out), not the one where doc has a value.
    expect((await upsert(ctx.a.db, { thing: { ...thing("r4444"), doc: undefined }, note: "fourth" })).rows).toEqual([
      { id: "r4444", doc: null, note: "fourth" },
    ]);
    expect(builds).toBe(4);
    expect((await upsert(ctx.a.db, { thing: thing("r55555", "[5]"), note: "fifth" })).rows).toEqual([{ id: "r55555", doc: [5], note: "fifth" }]);
    expect(builds).toBe(4);
    const rows = await ctx.a.db.selectFrom("things").selectAll().where("id", "in", ["r1", "r22", "r333"]).orderBy("id").execute();
    expect(rows.map((r) => [r.id, r.doc, Buffer.from(r.raw as Uint8Array).toString(), r.flag, r.big])).toEqual([
      ["r1", { n: 1 }, "r1", true, 2n * 2n ** 60n],
      ["r22", null, "r22", false, 3n * 2n ** 60n],
      ["r333", null, "r333", true, 4n * 2n ** 60n],
    ]);
    expect(await ctx.b.db.selectFrom("things").select("doc").where("id", "=", "r1").executeTakeFirst()).toEqual({ doc: [] });
  });

  it("reports the server's error code and stays usable after it, inside a transaction too", async () => {
    await ctx.a.db.insertInto("items").values({ id: "dup", amount: 1n }).execute();
    await expect(ctx.a.db.insertInto("items").values({ id: "dup", amount: 2n }).execute()).rejects.toMatchObject({ code: "23505" });
    const inTransaction = ctx.a.db.transaction().execute(async (trx) => {
      await trx.insertInto("items").values({ id: "dup", amount: 3n }).execute();
    });
    await expect(inTransaction).rejects.toMatchObject({ code: "23505" });
    const row = await ctx.a.db.selectFrom("items").select("amount").where("id", "=", "dup").executeTakeFirstOrThrow();
    expect(row.amount).toBe(1n);
  });

  it("counts the rows an update or delete touched", async () => {
    await ctx.a.db
      .insertInto("items")
      .values([
        { id: "c1", amount: 7n },
        { id: "c2", amount: 7n },
      ])
      .execute();
    const updated = await ctx.a.db.updateTable("items").set({ amount: 8n }).where("amount", "=", 7n).executeTakeFirstOrThrow();
    expect(updated.numUpdatedRows).toBe(2n);
    const none = await ctx.a.db.updateTable("items").set({ amount: 9n }).where("id", "=", "missing").executeTakeFirstOrThrow();
    expect(none.numUpdatedRows).toBe(0n);
    const deleted = await ctx.a.db.deleteFrom("items").where("amount", "=", 8n).executeTakeFirstOrThrow();
    expect(deleted.numDeletedRows).toBe(2n);
    // A statement that starts with a CTE counts by the command it ends in, as PostgreSQL reports it.
    await ctx.a.db
      .insertInto("items")
      .values([
        { id: "w1", amount: 3n },
        { id: "w2", amount: 3n },
        { id: "w3", amount: 4n },
      ])
      .execute();
    const deletedWith = await ctx.a.db
      .with("threes", (db) => db.selectFrom("items").select("id").where("amount", "=", 3n))
      .deleteFrom("items")
      .where("id", "in", (eb: ExpressionBuilder<any, any>) => eb.selectFrom("threes").select("threes.id"))
      .executeTakeFirstOrThrow();
    expect(deletedWith.numDeletedRows).toBe(2n);
    await ctx.a.db.deleteFrom("items").where("id", "=", "w3").execute();
  });

  it("answers a repeated query with the table's current shape after the table changed", async () => {
    await ctx.b.db.insertInto("items").values({ id: "shape", amount: 1n }).execute();
    const before = () => ctx.b.db.selectFrom("items").selectAll().where("id", "=", "shape").executeTakeFirstOrThrow();
    expect(await before()).toEqual({ id: "shape", amount: 1n });
    await ctx.b.db.schema
      .alterTable("items")
      .addColumn("note", "text", (c) => c.defaultTo("added"))
      .execute();
    expect(await before()).toEqual({ id: "shape", amount: 1n, note: "added" });
  });

  it("answers ping", async () => {
    await expect(ctx.a.ping()).resolves.toBeUndefined();
  });

  it("counts each statement by the schema it names, its keyword and whether a request ran it", async () => {
    const count = async (labels: Record<"schema" | "operation" | "origin", string>) =>
      (await dbStatements.get()).values.find((v) => (Object.keys(labels) as (keyof typeof labels)[]).every((k) => v.labels[k] === labels[k]))?.value ?? 0;
    const labels = { schema: ctx.a.schema, operation: "select" };
    const [request, background] = [await count({ ...labels, origin: "request" }), await count({ ...labels, origin: "background" })];
    await ctx.a.db.selectFrom("items").selectAll().execute();
    await runWithContext({ requestId: "req_counted" }, () => ctx.a.db.selectFrom("items").selectAll().execute());
    expect([await count({ ...labels, origin: "request" }), await count({ ...labels, origin: "background" })]).toEqual([request + 1, background + 1]);
    // A statement whose first CTE reads no table is counted under the schema of the first table it reads.
    const withCte = { schema: ctx.a.schema, operation: "with", origin: "background" };
    const before = await count(withCte);
    await ctx.a.db
      .with("wanted", (qb) => qb.selectNoFrom(sql<string>`'x'`.as("id")))
      .selectFrom("wanted")
      .innerJoin("items", "items.id", "wanted.id")
      .select("items.id")
      .where("wanted.id", "=", "x")
      .execute();
    expect(await count(withCte)).toBe(before + 1);
  });
}

describe("embedded PostgreSQL (PGlite)", () => {
  behavesLikeAServiceDatabase(async () => {
    const pg = await EmbeddedPostgres.open();
    return { a: pg.forSchema("svc_a"), b: pg.forSchema("svc_b"), close: () => pg.close() };
  });
});

describe("embedded PostgreSQL on its own thread", () => {
  let pg: EmbeddedPostgres;
  let db: ServiceDatabase;
  beforeAll(async () => {
    pg = await EmbeddedPostgres.open({ upkeepIntervalMs: 3_600_000 });
    db = pg.forSchema("threaded");
    await migrate(db, migrations);
  });
  afterAll(() => pg.close());

  it("runs a statement beside this thread: timers fire while it runs", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      await sql`select pg_sleep(0.3)`.execute(db.db);
    } finally {
      clearInterval(timer);
    }
    // On this thread the WebAssembly would run synchronously and no timer could fire until it returned.
    expect(ticks).toBeGreaterThanOrEqual(10);
  });

  it("answers many statements in flight at once, each with its own rows", async () => {
    const values = Array.from({ length: 300 }, (_, i) => i);
    const answers = await Promise.all(values.map((v) => sql<{ v: number; text: string }>`select ${v}::int as v, ${`n${v}`}::text as text`.execute(db.db)));
    expect(answers.map((a) => a.rows[0])).toEqual(values.map((v) => ({ v, text: `n${v}` })));
  });

  it("keeps a transaction whole: a statement sent meanwhile waits until it ends and is not undone by its rollback", async () => {
    let outsideDone = false;
    let outside: Promise<unknown> | undefined;
    const transaction = db.db.transaction().execute(async (trx) => {
      await trx.insertInto("items").values({ id: "inside", amount: 1n }).execute();
      outside = db.db
        .insertInto("items")
        .values({ id: "outside", amount: 2n })
        .execute()
        .then(() => (outsideDone = true));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(outsideDone).toBe(false);
      // The transaction still has the session.
      expect(await trx.selectFrom("items").select("id").where("id", "in", ["inside", "outside"]).execute()).toEqual([{ id: "inside" }]);
      throw new Error("roll back");
    });
    await expect(transaction).rejects.toThrow("roll back");
    await outside;
    expect(await db.db.selectFrom("items").select("id").where("id", "in", ["inside", "outside"]).execute()).toEqual([{ id: "outside" }]);
  });

  it("carries a server error's fields back: its SQLSTATE, constraint and detail", async () => {
    await db.db.insertInto("items").values({ id: "dup", amount: 1n }).execute();
    const refused = db.db.insertInto("items").values({ id: "dup", amount: 2n }).execute();
    await expect(refused).rejects.toBeInstanceOf(Error);
    await expect(refused).rejects.toMatchObject({ code: "23505", constraint: "items_pkey", detail: expect.stringContaining("(id)=(dup)") });
  });

  it("answers nothing once closed, with an error that says so, and a close is not a loss", async () => {
    const onLost = jest.fn();
    const thread = await PGliteThread.open(undefined, onLost);
    expect((await thread.query("select 1 as one", [])).rows).toEqual([{ one: 1 }]);
    const closed = thread.close();
    const whileClosing = thread.query("select 1", []);
    await expect(whileClosing).rejects.toThrow("the embedded database is closing");
    await expect(whileClosing).rejects.toBeInstanceOf(DependencyUnavailableError);
    await closed;
    const afterClose = thread.query("select 1", []);
    await expect(afterClose).rejects.toThrow("the embedded database is closed");
    await expect(afterClose).rejects.toBeInstanceOf(DependencyUnavailableError);
    expect(onLost).not.toHaveBeenCalled();
  });

  it("refuses to open where PGlite cannot, with PGlite's reason, and a failed open is not a loss", async () => {
    const notADirectory = join(mkdtempSync(join(tmpdir(), "c402-pglite-")), "file");
    writeFileSync(notADirectory, "not a database");
    const onLost = jest.fn();
    await expect(PGliteThread.open(join(notADirectory, "pg"), onLost)).rejects.toThrow(/ENOTDIR|not a directory/i);
    expect(onLost).not.toHaveBeenCalled();
  });

  it("tells its owner once when the thread dies under it, and fails every statement from then on without hanging", async () => {
    const run = await runScriptProcess(join(__dirname, "fixtures/lost-database.ts"), null, { failpoint: "database-thread-exit" });
    expect(run.stderr).toContain("failpoint database-thread-exit: thread exit");
    expect(run.stdout).toBe(
      [
        "first statement failed: DependencyUnavailableError: the embedded database's thread exited (code 70)",
        "second statement failed: DependencyUnavailableError: the embedded database's thread exited (code 70)",
        `losses heard: ${JSON.stringify(["the embedded database's thread exited (code 70)"])}`,
        "closed",
        "",
      ].join("\n"),
    );
    expect(run.code).toBe(0);
  });

  it("does not keep a program alive once idle, and does while a statement is waiting for its answer", async () => {
    const program = join(__dirname, "fixtures/unclosed-database.ts");
    const { stdout } = await promisify(execFile)(process.execPath, ["--require", require.resolve("tsx/cjs"), program], { timeout: 60_000 });
    expect(stdout).toBe("answered 42\n");
  });
});

describe("PGlite bytea codec", () => {
  it("decodes PostgreSQL's hex into an array of its own and encodes any Uint8Array view, refusing anything else", () => {
    const decoded = parseBytea("\\x00ff10");
    expect([...decoded]).toEqual([0, 255, 16]);
    // Its own memory, not a slice of Node's shared buffer pool.
    expect(decoded.byteOffset).toBe(0);
    expect(decoded.buffer.byteLength).toBe(3);
    expect(parseBytea("\\x")).toEqual(new Uint8Array(0));
    expect(() => parseBytea("\\000")).toThrow(/hex/);
    expect(serializeBytea(Uint8Array.from([1, 2, 0xab, 4]).subarray(1, 3))).toBe("\\x02ab");
    expect(serializeBytea(Buffer.from("hi"))).toBe("\\x6869");
    expect(() => serializeBytea("6869")).toThrow("Invalid input for bytea type");
  });
});

describe("PGlite prepared statements", () => {
  it("binds text, multi-byte UTF-8, NULL and bytes byte for byte as PGlite's own serializer, and the server reads each back exactly", async () => {
    const bytes = Uint8Array.from([0, 1, 0x5c, 0x78, 255]);
    const values = ["plain", "é € 😀 \\x00 'quoted'", null, "", bytes];
    const { serialize } = protocol;
    const theirs = [serialize.bind({ statement: "c402_7", values }), serialize.execute({}), serialize.sync()];
    expect(Buffer.from(bindExecuteSync("c402_7", values))).toEqual(Buffer.concat(theirs));

    const pglite = await PGlite.create();
    try {
      const statements = new PGliteStatements(pglite, { serialize: protocol.serialize, parseResults: parse.parseResults });
      const { rows } = await statements.query<Record<string, unknown>>(
        "select $1::text as a, $2::text as b, $3::text as c, $4::text as d, encode($5::bytea, 'hex') as e, length($2::text) as chars",
        values,
      );
      expect(rows).toEqual([{ a: "plain", b: values[1], c: null, d: "", e: "00015c78ff", chars: [...(values[1] as string)].length }]);
    } finally {
      await pglite.close();
    }
  });

  it("keeps at most its limit of statements prepared on the server and still answers evicted ones", async () => {
    const pglite = await PGlite.create();
    try {
      const statements = new PGliteStatements(pglite, { serialize: protocol.serialize, parseResults: parse.parseResults }, 3);
      for (let round = 0; round < 3; round++) {
        for (let n = 1; n <= 6; n++) {
          const { rows } = await statements.query<{ v: number }>(`select $1::int + ${n} as v`, [round]);
          expect(rows).toEqual([{ v: round + n }]);
        }
      }
      const { rows } = await statements.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements", []);
      expect(rows[0]!.n).toBeLessThanOrEqual(3);
    } finally {
      await pglite.close();
    }
  });

  it("runs transaction control and DDL directly, and refuses bad SQL without keeping it", async () => {
    const pglite = await PGlite.create();
    try {
      const statements = new PGliteStatements(pglite, { serialize: protocol.serialize, parseResults: parse.parseResults });
      await statements.query("create table t (id int primary key)", []);
      await statements.query("begin", []);
      await statements.query("insert into t values ($1)", [1]);
      await statements.query("rollback", []);
      await expect(statements.query("selec nothing", [])).rejects.toMatchObject({ code: "42601" });
      await expect(statements.query("select * from missing_table", [])).rejects.toMatchObject({ code: "42P01" });
      expect((await statements.query("select count(*)::int as n from t", [])).rows).toEqual([{ n: 0 }]);
      const { rows } = await statements.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements", []);
      // The insert, the count of t and this query: nothing of the DDL, the transaction control or the refused SQL.
      expect(rows[0]!.n).toBe(3);
    } finally {
      await pglite.close();
    }
  });
});

describeWith("postgres")("PostgreSQL", () => {
  it("runs the hot path's statements as prepared statements, prepared again when their table changes shape (refused once inside a transaction)", async () => {
    const fresh = await freshPostgresDatabase();
    const service = openPostgres({ url: fresh.url, schema: "svc_p", maxConnections: 1 });
    try {
      const { db } = service;
      await sql`create schema svc_p`.execute(db);
      await sql`create table svc_p.items (id int primary key, name text not null)`.execute(db);
      await sql`insert into svc_p.items values (1, 'one'), (2, 'two')`.execute(db);
      const find = reusableStatement((d: typeof db, v: { id: number }) => d.selectFrom("items").selectAll().where("id", "=", v.id));
      const prepared = async () =>
        (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db)).rows.filter((r) =>
          r.statement.includes('"items"'),
        );

      expect((await find(db, { id: 1 })).rows).toEqual([{ id: 1, name: "one" }]);
      expect((await find(db, { id: 2 })).rows).toEqual([{ id: 2, name: "two" }]);
      expect(await prepared()).toEqual([{ name: expect.stringMatching(/^c402_\d+_0$/), statement: expect.stringContaining('from "svc_p"."items"') }]);
      // Not one of the hot path's: unnamed, as before.
      await sql`select name from svc_p.items where id = ${1}`.execute(db);
      expect(await prepared()).toHaveLength(1);

      // select * now answers three columns: the server refuses the prepared statement once, and it is prepared afresh.
      await sql`alter table svc_p.items add column note text not null default 'n'`.execute(db);
      expect((await find(db, { id: 1 })).rows).toEqual([{ id: 1, name: "one", note: "n" }]);
      expect((await prepared()).map((r) => r.name)).toEqual(expect.arrayContaining([expect.stringMatching(/_1$/)]));

      await sql`alter table svc_p.items drop column note`.execute(db);
      await expect(db.transaction().execute((trx) => find(trx, { id: 1 }))).rejects.toMatchObject({ code: "0A000" });
      expect((await find(db, { id: 1 })).rows).toEqual([{ id: 1, name: "one" }]);
    } finally {
      await service.close();
      await fresh.drop();
    }
  });

  it("reports a database it cannot reach as unavailable, with the socket's error as the cause", async () => {
    // A loopback port nothing listens on any more: the connection is refused.
    const listener = createServer();
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const { port } = listener.address() as AddressInfo;
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    const service = openPostgres({ url: `postgres://postgres@127.0.0.1:${port}/postgres`, schema: "svc_gone" });
    try {
      const failed = await service.ping().catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(DependencyUnavailableError);
      expect((failed as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
      expect(problemOf(failed)).toMatchObject({ slug: "unavailable", status: 503, help: { retry_is_safe: true } });
    } finally {
      await service.close();
    }
  });

  it("reports a connection lost under a statement as unavailable, and a refused statement as the server's own error", async () => {
    const fresh = await freshPostgresDatabase();
    const service = openPostgres({ url: fresh.url, schema: "svc_t", maxConnections: 2 });
    const other = openPostgres({ url: fresh.url, schema: "svc_t", maxConnections: 1 });
    try {
      const { db } = service;
      const refused = await sql`select 1 / 0`.execute(db).catch((err: unknown) => err);
      expect(refused).not.toBeInstanceOf(DependencyUnavailableError);
      expect(refused).toMatchObject({ code: "22012" });
      const lost = await db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // The server ends this connection (as on a restart) while its statement runs.
          setTimeout(() => void sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(other.db), 200);
          await sql`select pg_sleep(10)`.execute(trx);
        })
        .catch((err: unknown) => err);
      expect(lost).toBeInstanceOf(DependencyUnavailableError);
      // The statement's own error, or the rollback's after it, on the connection the server ended.
      expect((lost as Error).cause).toMatchObject({ message: expect.stringMatching(/terminat|not queryable/i) });
      // The pool makes a new connection for the next statement.
      expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
      // Its connection now idle in the pool, the server ends it too: nothing crashes, and the next statement gets a new one.
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
      await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(other.db);
      await new Promise((r) => setTimeout(r, 200));
      expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
    } finally {
      await other.close();
      await service.close();
      await fresh.drop();
    }
  });

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
