import { EmbeddedPostgres, migrate } from "@c402/db";
import { createCapturingLogger } from "@c402/logging";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { blockedCorpus, GUARD_LAB_NAMES, installConnectSpy, isLoopbackIp, startLab, stubResolver, TLS_CERT, type Lab } from "@c402/testkit/outbound-lab";
import { webhooksMigrations } from "../src";
import { Dispatcher } from "../src/domain/dispatcher";
import { Endpoints } from "../src/domain/endpoints";
import { EVENT_SOURCES } from "../src/domain/event-catalogue";
import { SigningKeys } from "../src/domain/signing-keys";
import type { WebhooksDb } from "../src/store/webhooks-store";
import { paymentSettledEnvelope, SELLER } from "./webhook-fixtures";

/**
 * Targets G19 and G20 for the webhook fetcher, with the guard as a cluster
 * runs it (loopback refused; the lab's https origin on 127.0.0.1 plays an
 * allowed public receiver, trusted through its test certificate). No address
 * of the blocked corpus is accepted as a receiver; a receiver whose name
 * resolves to a canary, changes its answer, or redirects to a canary never
 * reaches one (the canaries on 127.0.0.2–.9 and ::1 count every
 * connection); and every connection the suite makes stays on loopback.
 */

const spy = installConnectSpy();
const resolver = stubResolver(GUARD_LAB_NAMES);
const paid = EVENT_SOURCES.find((s) => s.event === "checkout.paid")!;

let lab: Lab;
let fetch: GuardedFetch;
let endpoints: Endpoints;
let dispatcher: Dispatcher;
let db: WebhooksDb;
let close: () => Promise<void>;

beforeAll(async () => {
  lab = await startLab();
  const pg = await EmbeddedPostgres.open();
  close = () => pg.close();
  const database = pg.forSchema("webhooks");
  await migrate(database, webhooksMigrations);
  db = database.db as WebhooksDb;
  const sealer = new SecretSealer(parseKeyring(generateKeyringText("w1")));
  fetch = createGuardedFetch({
    allowLoopback: false,
    allowAddresses: ["127.0.0.1"],
    resolve: resolver.resolve,
    maxRedirects: 0,
    timeoutMs: 2_000,
    ca: TLS_CERT,
  });
  const keys = new SigningKeys({ db, sealer, clock: () => new Date(), rotateAfterMs: 86_400_000 });
  await keys.ensure();
  endpoints = new Endpoints({ db, sealer, clock: () => new Date(), refusal: (url) => fetch.refusalOf(url)?.message, allowPlainHttp: false });
  dispatcher = new Dispatcher({
    db,
    sealer,
    keys,
    fetch,
    baseUrl: "https://checkout.test",
    timeoutMs: 2_000,
    concurrency: 8,
    logger: createCapturingLogger({ service: "webhooks" }).logger,
  });
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

let accounts = 0;
/** Registers `url` for a fresh account, sells once, sends what is due; answers the delivery row. */
async function deliverTo(url: string) {
  const accountId = `acct_guard_${accounts++}`;
  const { endpoint } = await endpoints.register({ ...SELLER, accountId, url, events: ["checkout.paid"] });
  await dispatcher.fanOut(paid, paymentSettledEnvelope(accountId));
  await dispatcher.drain();
  return db.selectFrom("deliveries").selectAll().where("endpoint_id", "=", endpoint.id).executeTakeFirstOrThrow();
}

describe("G19: webhook receivers cannot be turned against us", () => {
  it("refuses every address of the blocked corpus as a receiver, before any socket", async () => {
    const corpus = blockedCorpus();
    expect(corpus.length).toBeGreaterThan(1_000);
    const mark = spy.records.length;
    const accepted: string[] = [];
    for (const host of corpus) {
      const literal = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
      let url: URL;
      try {
        url = new URL(`https://${literal}:${lab.tlsPort}/hook`);
      } catch {
        continue;
      }
      if (url.hostname === "127.0.0.1" || url.hostname === "[::ffff:7f00:1]") continue; // the allowed stand-in
      const registered = await endpoints
        .register({ ...SELLER, accountId: "acct_corpus", url: url.toString(), events: ["checkout.paid"] })
        .then(() => true)
        .catch(() => false);
      if (registered) accepted.push(url.toString());
    }
    expect(accepted).toEqual([]);
    expect(spy.attempts(mark)).toEqual([]);
  });

  it("delivers to the allowed receiver (the lab works)", async () => {
    expect(await deliverTo(`https://origin.test:${lab.tlsPort}/echo`)).toMatchObject({ status: "delivered", last_status_code: 200 });
  });

  it.each([
    ["a name that resolves to a canary", "canary.test"],
    ["a name that resolves to ::1", "canary6.test"],
    ["an IPv4-mapped answer", "mapped.test"],
    ["the metadata address", "imds.test"],
    ["a private network address", "lan.test"],
    ["a mixed answer (allowed and canary)", "mixed.test"],
  ])("%s: the attempt is refused at connect time and retried later", async (_what, host) => {
    const d = await deliverTo(`https://${host}:${lab.tlsPort}/echo`);
    expect(d).toMatchObject({ status: "pending", attempts: 1, last_status_code: null });
    expect(d.last_error).toMatch(/^(blocked-address|unreachable)/);
  });

  it("an answer that changes between lookups (rebinding) never reaches the canary", async () => {
    for (let i = 0; i < 3; i++) await deliverTo(`https://rebind.test:${lab.tlsPort}/echo`);
  });

  it("a redirect from the allowed receiver to a canary is never followed", async () => {
    for (const target of [`http://127.0.0.2:${lab.port}/`, `https://canary.test:${lab.tlsPort}/`, `http://[::1]:${lab.port}/`]) {
      const d = await deliverTo(`https://origin.test:${lab.tlsPort}/redirect?to=${encodeURIComponent(target)}`);
      expect([target, d.status, d.last_status_code]).toEqual([target, "pending", 302]);
    }
  });
});
