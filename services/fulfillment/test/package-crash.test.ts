import { resolve } from "node:path";
import { migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { describeWith, freshPostgresDatabase, resultLine, runScriptProcess } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { FULFILLMENT_SCHEMA, fulfillmentMigrations, OriginKeys } from "../src";
import { Packages } from "../src/domain/packages";
import { DELIVERY_GRACE_MS, RelayDeliveries } from "../src/domain/relay-deliveries";
import { ORIGIN_TIMEOUT_MAX_MS } from "@c402/contracts";
import type { FulfillmentDb } from "../src/store/origin-keys-store";
import { PACKAGE_CALL_PREFIX, type PackageCallProcessInput } from "./support/package-call-process";

/**
 * A package call survives a kill -9: a fulfillment process takes one call
 * from the allowance, records it under way, and SIGKILLs itself before
 * calling the origin. Restarted, nothing is given back while the call could
 * still be running (its deadline and grace); after that the sweep gives it
 * back once, the usage record shows it uncounted (fault platform), the
 * origin was never called, and the buyer's next call is served. A process
 * that is not killed spends normally (the fixture is not what fails).
 */
const DRIVER = resolve(__dirname, "fixtures/package-call-process.ts");
const keyringText = generateKeyringText("k1");

describeWith("postgres")("package calls: kill -9 after the allowance was taken (PostgreSQL, a real origin)", () => {
  let postgres: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let db: FulfillmentDb;
  let origin: FakeOrigin;
  let fetch: GuardedFetch;
  let relay: RelayDeliveries;

  beforeAll(async () => {
    postgres = await freshPostgresDatabase();
    database = openPostgres({ url: postgres.url, schema: FULFILLMENT_SCHEMA });
    await migrate(database, fulfillmentMigrations);
    db = database.db as FulfillmentDb;
    origin = await startFakeOrigin();
    fetch = createGuardedFetch({ allowLoopback: true, resolve: async () => [] });
    const sealer = new SecretSealer(parseKeyring(keyringText));
    relay = new RelayDeliveries({ db, sealer, originKeys: new OriginKeys({ db, sealer }), fetch });
  });
  afterAll(async () => {
    await fetch.close();
    await origin.close();
    await database?.close();
    await postgres?.drop();
  });

  /** The fulfillment of the restarted process, its clock `afterMs` past now. */
  const restarted = (afterMs = 0) => new Packages({ db, relay, now: () => new Date(Date.now() + afterMs) });

  async function bought(calls: number) {
    const checkoutId = newId("checkout");
    const paymentId = newId("payment");
    const originUrl = `${origin.url}/echo`;
    await relay.deliver({
      paymentId,
      checkoutId,
      accountId: "acct_crash",
      originUrl,
      method: "GET",
      oneOffCredential: false,
      params: {},
      deadlineMs: 5_000,
      testMode: false,
      testDeliveryDailyCap: 25,
    });
    const { key } = await restarted().issue({
      paymentId,
      checkoutId,
      accountId: "acct_crash",
      testMode: false,
      callsIncluded: calls,
      ttlDays: 30,
      settledAt: new Date(),
      priceAtomic: 3_000_000n,
      target: { originUrl, method: "GET", oneOffCredential: false, testDeliveryDailyCap: 25 },
    });
    return { checkoutId, key: key as string };
  }

  const input = (p: { checkoutId: string; key: string }, city: string): PackageCallProcessInput => ({
    databaseUrl: postgres.url,
    schema: FULFILLMENT_SCHEMA,
    keyringText,
    checkoutId: p.checkoutId,
    packageKey: p.key,
    params: { city },
  });
  const originCallsFor = (city: string) => origin.callsTo("/echo").filter((c) => c.query.city === city).length;

  it("is given back once after its deadline, never before; the origin was not called and the next call is served", async () => {
    const p = await bought(3);
    const exit = await runScriptProcess(DRIVER, input(p, "Killed"), { failpoint: "package-call-started" });
    expect({ signal: exit.signal, result: resultLine(exit.stdout, PACKAGE_CALL_PREFIX) }).toEqual({ signal: "SIGKILL", result: undefined });
    expect(exit.stderr).toContain("failpoint package-call-started: SIGKILL");

    const crashed = await restarted().usage({ checkoutId: p.checkoutId, key: p.key, pageSize: 10 });
    expect(crashed.pkg.calls_used).toBe(2);
    expect(crashed.calls[0]).toMatchObject({ seq: 2, state: "calling" });

    // While the call could still be running, nothing is given back.
    expect(await restarted(ORIGIN_TIMEOUT_MAX_MS).sweep()).toBe(0);
    const later = ORIGIN_TIMEOUT_MAX_MS + DELIVERY_GRACE_MS + 1_000;
    expect(await restarted(later).sweep()).toBe(1);
    expect(await restarted(later).sweep()).toBe(0);

    const after = await restarted(later).usage({ checkoutId: p.checkoutId, key: p.key, pageSize: 10 });
    expect(after.pkg.calls_used).toBe(1);
    expect(after.calls.map((c) => [c.seq, c.state, c.counted, c.fault])).toEqual([
      [2, "done", false, "platform"],
      [1, "done", true, null],
    ]);
    expect(originCallsFor("Killed")).toBe(0);

    const next = await runScriptProcess(DRIVER, input(p, "Served"));
    expect(resultLine(next.stdout, PACKAGE_CALL_PREFIX)).toEqual({ seq: 3, callsUsed: 2 });
    expect(originCallsFor("Served")).toBe(1);
  });
});
