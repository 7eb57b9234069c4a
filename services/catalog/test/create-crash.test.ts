import { resolve } from "node:path";
import { migrate, openPostgres, sql, type ServiceDatabase } from "@c402/db";
import type { FailpointName } from "@c402/failpoints";
import { describeWith, freshPostgresDatabase, resultLine, runScriptProcess } from "@c402/testkit";
import { catalogMigrations, CATALOG_SCHEMA } from "../src";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import { IDEMPOTENCY_CLAIM_LEASE_MS } from "../src/domain/idempotency";
import type { CatalogDb } from "../src/store/catalog-store";
import { CREATE_RESULT_PREFIX, type CreateProcessInput } from "./support/create-process";

/**
 * G4 with a real kill -9: a catalog process makes one idempotent create and
 * SIGKILLs itself either right after claiming the key (before calling any
 * other service) or right after its commit (before answering). A restarted
 * catalog then gets the retry with the same key. Killed before the commit,
 * nothing was made and the key is released once the claim's lease is over:
 * the retry executes, exactly once. Killed after it, the key is not
 * released: the retry replays the checkout the dead process made. Either
 * way there is one checkout, one account event in the outbox and one done key.
 */
const DRIVER = resolve(__dirname, "fixtures/create-process.ts");
const WALLET = "0x1111111111111111111111111111111111111111";
const START = new Date("2026-11-24T10:00:00Z");

describeWith("postgres")("G4: kill -9 in the middle of an idempotent create (PostgreSQL)", () => {
  let postgres: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let db: CatalogDb;

  beforeAll(async () => {
    postgres = await freshPostgresDatabase();
    database = openPostgres({ url: postgres.url, schema: CATALOG_SCHEMA });
    await migrate(database, catalogMigrations);
    db = database.db;
  });
  afterAll(async () => {
    await database?.close();
    await postgres?.drop();
  });

  const request = (accountId: string): CreateRequest => ({
    accountId,
    actor: "key:sk_test_abcd",
    idempotencyKey: "order-1",
    fingerprint: "fp-order-1",
    title: "Weather report",
    priceUsd: "0.25",
    payTo: WALLET,
    offer: {},
    createdWithLiveKey: false,
  });

  async function crashedCreate(accountId: string, failpoint: FailpointName) {
    const input: CreateProcessInput = { databaseUrl: postgres.url, schema: CATALOG_SCHEMA, request: request(accountId), now: START.toISOString() };
    const exit = await runScriptProcess(DRIVER, input, { failpoint });
    expect({ signal: exit.signal, result: resultLine(exit.stdout, CREATE_RESULT_PREFIX) }).toEqual({ signal: "SIGKILL", result: undefined });
    expect(exit.stderr).toContain(`failpoint ${failpoint}: SIGKILL`);
  }

  /** The catalog after the restart, its clock `afterMs` past the crash. */
  const restarted = (afterMs: number) => new Catalog({ db, payoutWallets: async () => [], now: () => new Date(START.getTime() + afterMs) });

  async function stateOf(accountId: string) {
    const checkouts = await db.selectFrom("checkouts").select("id").where("account_id", "=", accountId).execute();
    const events = await sql<{
      n: number;
    }>`select count(*)::int as n from outbox where key in (select id from checkouts where account_id = ${accountId})`.execute(db);
    const keys = await db.selectFrom("idempotency_keys").select(["state", "checkout_id"]).where("account_id", "=", accountId).execute();
    return { checkouts: checkouts.map((c) => c.id), events: events.rows[0]!.n, keys };
  }

  it("killed after claiming the key: nothing made; the key is released after the lease and the retry executes once", async () => {
    await crashedCreate("acct_g4_claim", "create-after-key-claim");
    expect(await stateOf("acct_g4_claim")).toEqual({ checkouts: [], events: 0, keys: [{ state: "in_flight", checkout_id: null }] });

    // Within the lease the claim may still be a create at work: 409, told when to come back.
    await expect(restarted(1_000).create(request("acct_g4_claim"))).rejects.toMatchObject({ slug: "conflict", retryAfterSeconds: 1 });
    await expect(restarted(IDEMPOTENCY_CLAIM_LEASE_MS - 5_000).create(request("acct_g4_claim"))).rejects.toMatchObject({ retryAfterSeconds: 5 });

    const retry = await restarted(IDEMPOTENCY_CLAIM_LEASE_MS + 1_000).create(request("acct_g4_claim"));
    expect(retry.replayed).toBe(false);
    const again = await restarted(IDEMPOTENCY_CLAIM_LEASE_MS + 2_000).create(request("acct_g4_claim"));
    expect(again).toMatchObject({ replayed: true, checkout: { id: retry.checkout.id } });
    expect(await stateOf("acct_g4_claim")).toEqual({ checkouts: [retry.checkout.id], events: 1, keys: [{ state: "done", checkout_id: retry.checkout.id }] });
  });

  it("killed after the commit: the key is not released; the retry replays the checkout the dead process made", async () => {
    await crashedCreate("acct_g4_commit", "create-after-commit");
    const made = await stateOf("acct_g4_commit");
    expect(made).toEqual({ checkouts: [expect.stringMatching(/^chk_/)], events: 1, keys: [{ state: "done", checkout_id: made.checkouts[0] }] });

    for (const afterMs of [0, IDEMPOTENCY_CLAIM_LEASE_MS + 1_000]) {
      const retry = await restarted(afterMs).create(request("acct_g4_commit"));
      expect(retry).toMatchObject({ replayed: true, checkout: { id: made.checkouts[0] } });
    }
    expect(await stateOf("acct_g4_commit")).toEqual(made);
  });

  it("refused for its body (422): the key is released at once and a corrected retry executes once", async () => {
    const bad = { ...request("acct_g4_invalid"), priceUsd: "-1", fingerprint: "fp-bad" };
    await expect(restarted(0).create(bad)).rejects.toMatchObject({ slug: "invalid-request" });
    expect(await stateOf("acct_g4_invalid")).toEqual({ checkouts: [], events: 0, keys: [] });
    const retry = await restarted(0).create(request("acct_g4_invalid"));
    expect(retry.replayed).toBe(false);
    expect(await stateOf("acct_g4_invalid")).toMatchObject({ checkouts: [retry.checkout.id], events: 1 });
  });
});
