/**
 * The receipts ledger at scale (issue 13's figures; see bench/README.md), on
 * the local PostgreSQL: a fresh database gets the payments schema and
 * BENCH_LEDGER_ROWS settled receipts of one account (1,000,000 by default),
 * then
 *  1. pages of GET /v1/receipts' query (the payments store's `ledger`, 51
 *     rows as the gateway asks for a page of 50) at random depths through
 *     the keyset cursor, alone and with each filter: p50/p99/max per kind
 *     (target p99 ≤ 20 ms for any page);
 *  2. the export's walk: every row of the filters in pages of 1,000, each
 *     made into its CSV line and dropped, with the heap sampled after each
 *     page: rows/s and how far the heap grew (constant memory: it must not
 *     grow with the rows).
 * The database is dropped at the end. Nothing here is enforced: it prints.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { migrate, openPostgres, sql } from "@c402/db";
import { paymentsMigrations, PAYMENTS_SCHEMA } from "@c402/payments";
import { receiptMessage } from "@c402/payments/src/domain/payment-wire";
import { paymentsStore, type PaymentsDb } from "@c402/payments/src/store/payments-store";
import pg from "pg";
import { receiptCsvLine } from "@c402/gateway/src/views/receipts-csv";
import { log, percentile, QUICK, runBenchmark } from "./lib/report";
import { BENCH_INFRASTRUCTURE } from "./lib/distributed-system";

const ROWS = Number(process.env.BENCH_LEDGER_ROWS ?? (QUICK ? 100_000 : 1_000_000));
const PAGES = Number(process.env.BENCH_LEDGER_PAGES ?? (QUICK ? 100 : 500));
const EXPORT_ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? (QUICK ? 20_000 : 100_000));
const ADMIN_URL = BENCH_INFRASTRUCTURE.postgres;
const ACCOUNT = "acct_benchLedger000000000000";
const PAGE = 51;
const TARGET_P99_MS = 20;

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** One settled receipt per row number: a year of sales, one in ten a rehearsal, one in five sold by a platform. */
async function seed(db: PaymentsDb, rows: number): Promise<void> {
  const batch = 100_000;
  for (let from = 1; from <= rows; from += batch) {
    const to = Math.min(rows, from + batch - 1);
    await sql`
      insert into ${sql.table("payments")} (id, checkout_id, account_id, checkout_title, network, asset, payer, nonce, "authorization",
        price_atomic, provider_amount, platform_amount, fee_amount, total, pay_to, subject, tx_hash, test_mode, status,
        delivery_outcome, sold_by, settled_at, parties)
      select 'pay_' || lpad(i::text, 24, '0'), 'chk_' || lpad((i % 50)::text, 24, '0'), ${ACCOUNT}, 'Offer ' || (i % 50),
        'eip155:84532', '0x036CbD53842c5426634e7929541eC2318f3dCF7e', '0x' || lpad(to_hex(i), 40, '0'), md5(i::text), '{}'::jsonb,
        100000, 100000, null, 10500, 110500, '0x1111111111111111111111111111111111111111', md5('s' || (i % 5000)::text),
        '0x' || md5(i::text) || md5((i + 1)::text), i % 10 = 0, 'settled', 'delivered',
        case when i % 5 = 0 then 'platform-' || (i % 3) end,
        timestamptz '2026-01-01' + (i * (interval '365 days' / ${rows})),
        '{"buyer":{"name":"=A1","ref":"b1"}}'::jsonb
      from generate_series(${from}::int, ${to}::int) as i`.execute(db);
    log(`seeded ${to.toLocaleString("en-US")} of ${rows.toLocaleString("en-US")} receipts`);
  }
  await sql`analyze ${sql.table("payments")}`.execute(db);
}

async function main() {
  const name = `c402_bench_ledger_${randomBytes(4).toString("hex")}`;
  await withAdmin((c) => c.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const database = openPostgres({ url: url.toString(), schema: PAYMENTS_SCHEMA, maxConnections: 2 });
  try {
    await migrate(database, paymentsMigrations);
    const db = database.db as PaymentsDb;
    const seeding = performance.now();
    await seed(db, ROWS);
    log(`seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

    // Cursors at random depths of the real ledger: a random row's (settled_at, id), as a next_cursor names it.
    const sample = await sql<{ settled_at: Date; id: string }>`
      select settled_at, id from ${sql.table("payments")} where not test_mode order by random() limit ${PAGES}`.execute(db);
    const kinds: [string, (after: { settledAt: Date; id: string } | undefined) => Promise<unknown>][] = [
      ["real ledger", (after) => paymentsStore.ledger(db, ACCOUNT, { testMode: false }, { size: PAGE, ...(after ? { after } : {}) })],
      ["sold_by", (after) => paymentsStore.ledger(db, ACCOUNT, { testMode: false, soldBy: "platform-1" }, { size: PAGE, ...(after ? { after } : {}) })],
      [
        "a month's range",
        (after) =>
          paymentsStore.ledger(
            db,
            ACCOUNT,
            { testMode: false, from: new Date("2026-06-01T00:00:00Z"), to: new Date("2026-07-01T00:00:00Z") },
            { size: PAGE, ...(after ? { after } : {}) },
          ),
      ],
      ["rehearsal ledger", (after) => paymentsStore.ledger(db, ACCOUNT, { testMode: true }, { size: PAGE, ...(after ? { after } : {}) })],
    ];
    const lines: string[] = [];
    for (const [kind, page] of kinds) {
      for (let i = 0; i < 20; i++) await page(undefined); // warm-up: plans and buffers
      const ms: number[] = [];
      for (const row of [undefined, ...sample.rows.map((r) => ({ settledAt: r.settled_at, id: r.id }))]) {
        const t = performance.now();
        await page(row);
        ms.push(performance.now() - t);
      }
      ms.sort((a, b) => a - b);
      const p99 = percentile(ms, 99);
      lines.push(
        `ledger page    ${kind.padEnd(16)} p50 ${percentile(ms, 50).toFixed(2)} ms  p99 ${p99.toFixed(2)} ms  max ${ms.at(-1)!.toFixed(2)} ms  (${ms.length} pages of ${PAGE} at random depths; target p99 ≤ ${TARGET_P99_MS} ms) ${p99 <= TARGET_P99_MS ? "PASS" : "ABOVE TARGET"}`,
      );
    }

    // The export's walk: pages of 1,000 through the keyset, each row made into its CSV line, nothing kept.
    global.gc?.();
    const heapAtStart = process.memoryUsage().heapUsed;
    let heapMax = heapAtStart;
    let rows = 0;
    let bytes = 0;
    let after: { settledAt: Date; id: string } | undefined;
    const walking = performance.now();
    while (rows < EXPORT_ROWS) {
      const page = await paymentsStore.ledger(db, ACCOUNT, { testMode: false }, { size: 1000, ...(after ? { after } : {}) });
      for (const row of page) bytes += receiptCsvLine(receiptMessage(row)).length;
      rows += page.length;
      heapMax = Math.max(heapMax, process.memoryUsage().heapUsed);
      const last = page.at(-1);
      if (page.length < 1000 || !last) break;
      after = { settledAt: last.settled_at as Date, id: last.id };
    }
    const seconds = (performance.now() - walking) / 1000;
    lines.push(
      `export walk    ${rows.toLocaleString("en-US")} rows in ${seconds.toFixed(1)} s (${Math.round(rows / seconds).toLocaleString("en-US")} rows/s, ${(bytes / 1e6).toFixed(1)} MB of CSV); heap at most ${((heapMax - heapAtStart) / 1e6).toFixed(1)} MB above its start (uncollected garbage included; compare runs of different sizes: it does not grow with the rows)`,
    );
    process.stdout.write(
      [
        "",
        `receipts ledger on PostgreSQL (${ROWS.toLocaleString("en-US")} settled receipts of one account, one in ten a rehearsal; index payments_ledger)`,
        ...lines,
        "",
      ].join("\n"),
    );
  } finally {
    await database.close();
    await withAdmin((c) => c.query(`drop database if exists ${name} with (force)`));
  }
}

runBenchmark(main);
