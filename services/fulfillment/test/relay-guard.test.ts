import { EmbeddedPostgres, migrate } from "@c402/db";
import { newId } from "@c402/ids";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { blockedCorpus, GUARD_LAB_NAMES, installConnectSpy, isLoopbackIp, startLab, stubResolver, type Lab } from "@c402/testkit/outbound-lab";
import { fulfillmentMigrations, OriginKeys } from "../src";
import { Packages } from "../src/domain/packages";
import { RelayDeliveries, type DeliverRequest } from "../src/domain/relay-deliveries";
import type { FulfillmentDb } from "../src/store/origin-keys-store";

/**
 * Targets G19 and G20 for the fetchers built on the guard: relay deliveries,
 * mcp tool calls and package calls, with the guard on (loopback refused; the
 * lab's 127.0.0.1 plays the allowed public origin). No address of the
 * blocked corpus is accepted as an origin; names that resolve to a canary,
 * answers that change between lookups and redirects from the allowed origin
 * to a canary are never followed (the canaries on 127.0.0.2–.9 and ::1 count
 * every connection); nothing is charged for them; and every connection the
 * suite makes, recorded by a net.Socket#connect spy, stays on loopback.
 */

const spy = installConnectSpy();
/** The lab's allowed origin as URLs normalise it (IPv4, and IPv4-mapped IPv6). */
const ALLOWED_STAND_IN = new Set(["127.0.0.1", "[::ffff:7f00:1]"]);
const resolver = stubResolver(GUARD_LAB_NAMES);

let lab: Lab;
let fetch: GuardedFetch;
let relay: RelayDeliveries;
let packages: Packages;
let close: () => Promise<void>;

beforeAll(async () => {
  lab = await startLab();
  const pg = await EmbeddedPostgres.open();
  close = () => pg.close();
  const database = pg.forSchema("fulfillment");
  await migrate(database, fulfillmentMigrations);
  const db = database.db as FulfillmentDb;
  const sealer = new SecretSealer(parseKeyring(generateKeyringText("k1")));
  fetch = createGuardedFetch({ allowLoopback: false, allowAddresses: ["127.0.0.1"], resolve: resolver.resolve });
  relay = new RelayDeliveries({ db, sealer, originKeys: new OriginKeys({ db, sealer }), fetch });
  packages = new Packages({ db, relay });
});

afterEach(() => expect(lab.canaryAccepts()).toBe(0));

afterAll(async () => {
  await fetch.close();
  await lab.close();
  await close();
  spy.restore();
  expect(spy.attempts().filter((ip) => !isLoopbackIp(ip))).toEqual([]);
  expect(lab.canaryAccepts()).toBe(0);
});

const deliveryTo = (originUrl: string, over: Partial<DeliverRequest> = {}): DeliverRequest => ({
  paymentId: newId("payment"),
  checkoutId: newId("checkout"),
  accountId: "acct_guard",
  originUrl,
  method: "GET",
  oneOffCredential: false,
  params: {},
  deadlineMs: 5_000,
  testMode: false,
  testDeliveryDailyCap: 25,
  ...over,
});

describe("G19: relay and mcp origins cannot be turned against us", () => {
  it("refuses every address of the blocked corpus as an origin at create, before any socket", async () => {
    const corpus = blockedCorpus();
    expect(corpus.length).toBeGreaterThan(1_000);
    const mark = spy.records.length;
    const accepted: string[] = [];
    for (const host of corpus) {
      const literal = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
      let url: URL;
      try {
        url = new URL(`http://${literal}:${lab.port}/x`);
      } catch {
        continue; // not a URL at all: nothing could be called
      }
      // 127.0.0.1 is this suite's stand-in for a public origin (allowAddresses); its encodings are allowed here by design.
      if (ALLOWED_STAND_IN.has(url.hostname)) continue;
      const registered = await relay
        .register({ accountId: "acct_guard", checkoutId: newId("checkout"), originUrl: url.toString(), auth: { kind: "none" } })
        .then(() => true)
        .catch(() => false);
      if (registered) accepted.push(url.toString());
    }
    expect(accepted).toEqual([]);
    expect(spy.attempts(mark)).toEqual([]);
  });

  it.each([
    ["a name that resolves to a canary", "canary.test"],
    ["a name that resolves to ::1", "canary6.test"],
    ["an IPv4-mapped answer", "mapped.test"],
    ["the metadata address", "imds.test"],
    ["a private network address", "lan.test"],
    ["a mixed answer (allowed and canary)", "mixed.test"],
  ])("%s: the delivery is refused at connect time, not charged", async (_what, host) => {
    const d = await relay.deliver(deliveryTo(`http://${host}:${lab.port}/echo`));
    expect(d).toMatchObject({ outcome: "origin_failed", charged: false });
    expect(["blocked", "unreachable"]).toContain(d.reason);
  });

  it("an answer that changes between lookups (rebinding) never reaches the canary", async () => {
    for (let i = 0; i < 3; i++) {
      const d = await relay.deliver(deliveryTo(`http://rebind.test:${lab.port}/echo`));
      if (d.charged) expect(d.status).toBe(200); // the first answer was the allowed origin
    }
  });

  it("a redirect from the allowed origin to a canary is not followed (not charged)", async () => {
    for (const target of [`http://127.0.0.2:${lab.port}/`, `http://canary.test:${lab.port}/`, `http://[::1]:${lab.port}/`]) {
      const d = await relay.deliver(deliveryTo(`http://origin.test:${lab.port}/redirect?to=${encodeURIComponent(target)}`));
      expect([target, d.charged]).toEqual([target, false]);
    }
  });

  it("an mcp server behind a canary name is never called; nothing is charged", async () => {
    const d = await relay.deliver(deliveryTo(`http://canary.test:${lab.port}/mcp`, { method: "POST", mcp: { fixedTool: "forecast" } }));
    expect(d).toMatchObject({ outcome: "origin_failed", charged: false });
  });

  it("a package's calls go through the same guard: a canary origin is never reached and the call is given back", async () => {
    // A package whose purchase was delivered by the allowed origin, its target then pointing at a canary name.
    const paymentId = newId("payment");
    const checkoutId = newId("checkout");
    const first = await relay.deliver({ ...deliveryTo(`http://origin.test:${lab.port}/echo`), paymentId, checkoutId });
    expect(first.charged).toBe(true);
    const { key } = await packages.issue({
      paymentId,
      checkoutId,
      accountId: "acct_guard",
      testMode: false,
      callsIncluded: 3,
      ttlDays: 30,
      settledAt: new Date(),
      priceAtomic: 1_000_000n,
      target: { originUrl: `http://canary.test:${lab.port}/echo`, method: "GET", oneOffCredential: false, testDeliveryDailyCap: 25 },
    });
    await expect(packages.spend({ checkoutId, key: key as string, params: {} })).rejects.toMatchObject({
      slug: "upstream-failed",
      extensions: { charged: false, calls_remaining: 2 },
    });
  });
});
