import { migrate, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { describeOnEachDatabase } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { fulfillmentMigrations, OriginKeys } from "../src";
import { DELIVERY_GRACE_MS, RelayDeliveries, type DeliverRequest } from "../src/domain/relay-deliveries";
import type { FulfillmentDb } from "../src/store/origin-keys-store";

/**
 * Relay deliveries on both databases, against a real HTTP origin on
 * loopback: at most one origin call per payment (sequential and concurrent
 * duplicates get the recorded outcome), the rehearsal cap counted exactly
 * under concurrency, and a saga that resumes finding every delivery's fate.
 */

const CANARY = "canary-one-off-credential-4d2b";
const ACCOUNT = "acct_relay";

describeOnEachDatabase("relay deliveries", "fulfillment", (open) => {
  let database: ServiceDatabase;
  let close: () => Promise<void>;
  let origin: FakeOrigin;
  let fetch: GuardedFetch;
  let relay: RelayDeliveries;
  let keys: OriginKeys;
  let clock: Date | undefined;
  const sealer = new SecretSealer(parseKeyring(generateKeyringText("k1")));

  beforeAll(async () => {
    ({ database, close } = await open());
    await migrate(database, fulfillmentMigrations);
    origin = await startFakeOrigin();
    fetch = createGuardedFetch({ allowLoopback: true, resolve: async () => [] });
    const db = database.db as FulfillmentDb;
    keys = new OriginKeys({ db, sealer });
    relay = new RelayDeliveries({ db, sealer, originKeys: keys, fetch, now: () => clock ?? new Date() });
  });
  afterAll(async () => {
    await fetch.close();
    await origin.close();
    await close();
  });
  afterEach(() => (clock = undefined));

  const request = (checkoutId: string, path: string, over: Partial<DeliverRequest> = {}): DeliverRequest => ({
    paymentId: newId("payment"),
    checkoutId,
    accountId: ACCOUNT,
    originUrl: `${origin.url}${path}`,
    method: "GET",
    oneOffCredential: false,
    params: {},
    deadlineMs: 5_000,
    testMode: false,
    testDeliveryDailyCap: 25,
    ...over,
  });

  it("seals a one-off credential for its checkout alone and sends it; the row holds no trace of it", async () => {
    const checkoutId = newId("checkout");
    await relay.register({ accountId: ACCOUNT, checkoutId, originUrl: `${origin.url}/echo`, auth: { kind: "one_off", authType: "bearer", value: CANARY } });
    const row = await database.db
      .selectFrom("checkout_credentials" as never)
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(CANARY);
    const d = await relay.deliver(request(checkoutId, "/echo", { oneOffCredential: true, params: { q: "1" } }));
    expect(d).toMatchObject({ state: "done", outcome: "delivered", charged: true, status: 200 });
    expect(JSON.parse(Buffer.from(d.body as Buffer).toString("utf8"))).toMatchObject({ query: { q: "1" }, authorization: `Bearer ${CANARY}` });
    // Sealed under its checkout's id: the copy does not open for another checkout.
    const other = newId("checkout");
    await database.db
      .insertInto("checkout_credentials" as never)
      .values({ ...(row as object), checkout_id: other } as never)
      .execute();
    await expect(relay.deliver(request(other, "/echo", { oneOffCredential: true }))).rejects.toThrow();
  });

  it("refuses an origin it would never call, and another account's origin key, with 422 naming the field", async () => {
    const checkoutId = newId("checkout");
    await expect(relay.register({ accountId: ACCOUNT, checkoutId, originUrl: "http://127.0.0.1:8/x", auth: { kind: "none" } })).resolves.toBe(
      "http://127.0.0.1:8/x",
    );
    const strict = new RelayDeliveries({ db: database.db as FulfillmentDb, sealer, originKeys: keys, fetch: createGuardedFetch() });
    await expect(strict.register({ accountId: ACCOUNT, checkoutId, originUrl: "http://169.254.169.254/x", auth: { kind: "none" } })).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "origin_url", reason: expect.stringContaining("does not call") }],
    });
    const key = await keys.create({ accountId: "acct_other", actor: "key:sk_test_x", testMode: true, authType: "bearer", value: "v" });
    await expect(
      relay.register({ accountId: ACCOUNT, checkoutId, originUrl: `${origin.url}/echo`, auth: { kind: "origin_key", originKeyId: key.id } }),
    ).rejects.toMatchObject({
      errors: [{ field: "origin_auth_secret_id", reason: expect.any(String) }],
    });
  });

  it("calls the origin once per payment: a repeat, sequential or concurrent, gets the recorded outcome", async () => {
    const req = request(newId("checkout"), "/slow/300");
    const before = origin.callsTo("/slow/300").length;
    const all = await Promise.all(Array.from({ length: 8 }, () => relay.deliver(req)));
    const again = await relay.deliver(req);
    expect(origin.callsTo("/slow/300").length).toBe(before + 1);
    for (const d of [...all, again]) expect(d).toMatchObject({ payment_id: req.paymentId, outcome: "delivered", charged: true, status: 200 });
  });

  it("records the seller's failures uncharged and the buyer's request errors charged", async () => {
    const checkoutId = newId("checkout");
    expect(await relay.deliver(request(checkoutId, "/status/503"))).toMatchObject({
      outcome: "origin_failed",
      charged: false,
      reason: "origin_error",
      status: 503,
      body: null,
    });
    expect(await relay.deliver(request(checkoutId, "/status/404"))).toMatchObject({ outcome: "buyer_error", charged: true, status: 404 });
    expect(await relay.deliver(request(checkoutId, "/slow/2000", { deadlineMs: 200 }))).toMatchObject({ outcome: "origin_failed", reason: "timeout" });
  });

  it("reads a relay article for a pass holder: its credential sent, nothing recorded; the seller's failure is a 502; only cnt_ ids", async () => {
    const checkoutId = newId("contentCheckout");
    await relay.register({ accountId: ACCOUNT, checkoutId, originUrl: `${origin.url}/html`, auth: { kind: "one_off", authType: "bearer", value: CANARY } });
    const read = { checkoutId, accountId: ACCOUNT, originUrl: `${origin.url}/html`, method: "GET", oneOffCredential: true, params: { page: "2" } };
    const deliveriesBefore = await database.db
      .selectFrom("deliveries" as never)
      .selectAll()
      .execute();
    const outcome = await relay.readArticle(read);
    expect(outcome).toMatchObject({ kind: "delivered", status: 200, contentType: "text/html; charset=utf-8" });
    expect(Buffer.from(outcome.body).toString("utf8")).toContain("<p>page=2</p>");
    expect(origin.callsTo("/html").at(-1)?.headers.authorization).toBe(`Bearer ${CANARY}`);
    expect(
      await database.db
        .selectFrom("deliveries" as never)
        .selectAll()
        .execute(),
    ).toHaveLength(deliveriesBefore.length);
    expect(await relay.readArticle({ ...read, originUrl: `${origin.url}/status/404`, oneOffCredential: false })).toMatchObject({
      kind: "buyer_error",
      status: 404,
    });
    await expect(relay.readArticle({ ...read, originUrl: `${origin.url}/status/503` })).rejects.toMatchObject({
      slug: "upstream-failed",
      extensions: { fault: "seller", charged: false },
    });
    await expect(relay.readArticle({ ...read, checkoutId: newId("checkout") })).rejects.toMatchObject({ slug: "invalid-request" });
  });

  it("checks the buyer's parameters before anything is recorded", async () => {
    const req = request(newId("checkout"), "/echo", { params: { body: "{}" } });
    await expect(relay.deliver(req)).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "params.body", reason: expect.stringContaining("takes GET") }],
    });
    expect(
      await database.db
        .selectFrom("deliveries" as never)
        .selectAll()
        .where("payment_id" as never, "=", req.paymentId as never)
        .execute(),
    ).toEqual([]);
  });

  it("counts rehearsal deliveries exactly under concurrency: 10 at once against a cap of 3 call the origin 3 times", async () => {
    const checkoutId = newId("checkout");
    const before = origin.callsTo("/echo").length;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => relay.deliver(request(checkoutId, "/echo", { testMode: true, testDeliveryDailyCap: 3 }))),
    );
    expect(results.filter((d) => d.outcome === "delivered")).toHaveLength(3);
    expect(results.filter((d) => d.outcome === "test_cap_reached" && !d.charged)).toHaveLength(7);
    expect(origin.callsTo("/echo").length).toBe(before + 3);
    // Live deliveries are not metered.
    expect(await relay.deliver(request(checkoutId, "/echo", { testDeliveryDailyCap: 3 }))).toMatchObject({ outcome: "delivered" });
  });

  it("counts a gated article's rehearsal deliveries against its cap exactly under concurrency: 10 at once against 3, then 429; cnt_ ids only", async () => {
    const articleId = newId("contentCheckout");
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => relay.countRehearsalDelivery(articleId, 3)));
    const counted = results.filter((r) => r.status === "fulfilled").map((r) => (r as PromiseFulfilledResult<{ left: number }>).value.left);
    expect(counted.sort()).toEqual([0, 1, 2]);
    const refused = results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason as { slug: string; extensions: object });
    expect(refused).toHaveLength(7);
    for (const problem of refused) expect(problem).toMatchObject({ slug: "rate-limited", extensions: { reason: "test_delivery_daily_cap", charged: false } });
    await expect(relay.countRehearsalDelivery(newId("checkout"), 3)).rejects.toMatchObject({ slug: "invalid-request" });
  });

  it("concludes for a resuming saga: a delivery never started is abandoned for good; one running is left alone until its deadline passes", async () => {
    const never = request(newId("checkout"), "/echo");
    expect(await relay.conclude(never.paymentId)).toMatchObject({ state: "abandoned", outcome: "abandoned", charged: false });
    const before = origin.callsTo("/echo").length;
    expect(await relay.deliver(never)).toMatchObject({ outcome: "abandoned" });
    expect(origin.callsTo("/echo").length).toBe(before);

    const slow = request(newId("checkout"), "/slow/1500", { deadlineMs: 1_000 });
    const running = relay.deliver(slow);
    await new Promise((r) => setTimeout(r, 200));
    expect(await relay.conclude(slow.paymentId)).toBeUndefined();
    // Past its deadline and the grace, a delivery still marked running (its process died) is abandoned, and a late finish cannot overwrite that.
    clock = new Date(Date.now() + 1_000 + DELIVERY_GRACE_MS + 1);
    expect(await relay.conclude(slow.paymentId)).toMatchObject({ outcome: "abandoned" });
    clock = undefined;
    expect(await running).toMatchObject({ outcome: "abandoned", charged: false });
  });
});
