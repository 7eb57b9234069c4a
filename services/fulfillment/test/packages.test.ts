import { migrate, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { ProblemError } from "@c402/problems";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { describeOnEachDatabase } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { fulfillmentMigrations, OriginKeys } from "../src";
import { burnOf, hashPackageKey, Packages, type IssueRequest } from "../src/domain/packages";
import { DELIVERY_GRACE_MS, RelayDeliveries } from "../src/domain/relay-deliveries";
import type { FulfillmentDb } from "../src/store/origin-keys-store";

/**
 * Packages of calls on both databases, against a real HTTP origin on
 * loopback: the key shown once and only its hash kept, every call taking one
 * from the allowance and a seller-side failure giving it back, exhaustion,
 * expiry, keys of other checkouts, the rehearsal cap, 50 concurrent calls
 * on 10 remaining, and calls a crash cut off given back by the sweep.
 */

const ACCOUNT = "acct_packages";
const DAY = 86_400_000;

describeOnEachDatabase("packages", "fulfillment", (open) => {
  let database: ServiceDatabase;
  let close: () => Promise<void>;
  let origin: FakeOrigin;
  let fetch: GuardedFetch;
  let relay: RelayDeliveries;
  let packages: Packages;
  let clock: Date | undefined;
  const now = () => clock ?? new Date();
  const sealer = new SecretSealer(parseKeyring(generateKeyringText("k1")));

  beforeAll(async () => {
    ({ database, close } = await open());
    await migrate(database, fulfillmentMigrations);
    origin = await startFakeOrigin();
    fetch = createGuardedFetch({ allowLoopback: true, resolve: async () => [] });
    const db = database.db as FulfillmentDb;
    relay = new RelayDeliveries({ db, sealer, originKeys: new OriginKeys({ db, sealer }), fetch, now });
    packages = new Packages({ db, relay, now });
  });
  afterAll(async () => {
    await fetch.close();
    await origin.close();
    await close();
  });
  afterEach(() => (clock = undefined));

  /** A package bought now: its purchase delivered through the real delivery step, then issued. */
  async function buy(over: { calls?: number; ttlDays?: number; testMode?: boolean; path?: string; cap?: number } = {}) {
    const checkoutId = newId("checkout");
    const paymentId = newId("payment");
    const originUrl = `${origin.url}${over.path ?? "/echo"}`;
    const testMode = over.testMode ?? false;
    const cap = over.cap ?? 25;
    await relay.deliver({
      paymentId,
      checkoutId,
      accountId: ACCOUNT,
      originUrl,
      method: "GET",
      oneOffCredential: false,
      params: { first: "1" },
      deadlineMs: 5_000,
      testMode,
      testDeliveryDailyCap: cap,
    });
    const req: IssueRequest = {
      paymentId,
      checkoutId,
      accountId: ACCOUNT,
      testMode,
      callsIncluded: over.calls ?? 5,
      ttlDays: over.ttlDays ?? 30,
      settledAt: now(),
      priceAtomic: 5_000_000n,
      target: { originUrl, method: "GET", oneOffCredential: false, testDeliveryDailyCap: cap },
    };
    const issued = await packages.issue(req);
    return { checkoutId, paymentId, req, key: issued.key as string, pkg: issued.pkg };
  }

  /**
   * The same package read by a restarted process, its stored origin re-pointed at another path of the fake
   * origin (a package's target never changes, so a running process keeps what it read).
   */
  async function repointed(bought: Awaited<ReturnType<typeof buy>>, path: string): Promise<Packages> {
    const base = bought.req.target.originUrl.replace(/\/echo$/, "");
    await database.db
      .updateTable("packages" as never)
      .set({ origin_url: `${base}${path}` } as never)
      .where("id" as never, "=", bought.pkg.id as never)
      .execute();
    return new Packages({ db: database.db as FulfillmentDb, relay, now });
  }

  const problemOf = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e as ProblemError,
    );

  it("shows the key once: only its SHA-256 is stored, the purchase's call is seq 1, and asking again answers the package without a key", async () => {
    const { key, pkg, req } = await buy({ calls: 5 });
    expect(key).toMatch(/^pk_live_[0-9A-Za-z]{32}$/);
    expect(pkg).toMatchObject({ calls_included: 5, calls_used: 1, key_hash: hashPackageKey(key) });
    const rows = await database.db
      .selectFrom("packages" as never)
      .selectAll()
      .execute();
    expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(key);
    const again = await packages.issue(req);
    expect(again.key).toBeUndefined();
    expect(again.pkg.id).toBe(pkg.id);
    const usage = await packages.usage({ checkoutId: req.checkoutId, key, pageSize: 100 });
    expect(usage.calls).toEqual([expect.objectContaining({ seq: 1, counted: true, status: 200, state: "done" })]);
  });

  it("spends calls with the buyer's parameters until none is left, then 402 with calls_used and calls_included", async () => {
    const { key, checkoutId } = await buy({ calls: 3 });
    const first = await packages.spend({ checkoutId, key, params: { q: "a" } });
    expect(first.outcome.kind).toBe("delivered");
    expect(JSON.parse(first.outcome.body.toString("utf8"))).toMatchObject({ query: { q: "a" } });
    expect(first).toMatchObject({ seq: 2, pkg: { calls_used: 2 } });
    await packages.spend({ checkoutId, key, params: {} });
    const err = await problemOf(packages.spend({ checkoutId, key, params: {} }));
    expect(err).toMatchObject({ slug: "payment-required", status: 402 });
    expect(err?.help).toMatchObject({ calls_used: 3, calls_included: 3 });
  });

  it("gives the call back when the origin failed on the seller's side (502, not charged); a buyer's request error is counted", async () => {
    const bought = await buy({ calls: 4 });
    const base = bought.req.target.originUrl.replace(/\/echo$/, "");
    // The same package, its origin now failing: the stored target re-pointed at a failing path, read by a
    // restarted process (a package's target never changes, so a running one keeps what it read).
    const restarted = () => new Packages({ db: database.db as FulfillmentDb, relay, now });
    await database.db
      .updateTable("packages" as never)
      .set({ origin_url: `${base}/status/500` } as never)
      .where("id" as never, "=", bought.pkg.id as never)
      .execute();
    const failed = await problemOf(restarted().spend({ checkoutId: bought.checkoutId, key: bought.key, params: {} }));
    expect(failed).toMatchObject({ slug: "upstream-failed", extensions: { fault: "seller", origin_status: 500, charged: false, calls_remaining: 3 } });
    await database.db
      .updateTable("packages" as never)
      .set({ origin_url: `${base}/status/404` } as never)
      .where("id" as never, "=", bought.pkg.id as never)
      .execute();
    const buyerError = await restarted().spend({ checkoutId: bought.checkoutId, key: bought.key, params: {} });
    expect(buyerError).toMatchObject({ outcome: { kind: "buyer_error", status: 404 }, pkg: { calls_used: 2 } });
    const usage = await packages.usage({ checkoutId: bought.checkoutId, key: bought.key, pageSize: 100 });
    expect(usage.calls.map((c) => [c.seq, c.status, c.counted, c.fault])).toEqual([
      [3, 404, true, "buyer"],
      [2, 500, false, "seller"],
      [1, 200, true, null],
    ]);
    expect(usage.pkg).toMatchObject({ calls_used: 2 });
  });

  it("gives the origin only what the caller's deadline leaves: a slower origin times out first, and the call is given back (502, not charged)", async () => {
    const bought = await buy({ calls: 4 });
    const restarted = await repointed(bought, "/slow/4000");
    const started = Date.now();
    // The caller waits 6.5 s: the origin gets 1.5 s (5 s kept for the way back), not the 4 s it needs.
    const failed = await problemOf(restarted.spend({ checkoutId: bought.checkoutId, key: bought.key, params: {}, answerBy: new Date(started + 6_500) }));
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(failed).toMatchObject({ slug: "upstream-failed", extensions: { reason: "timeout", charged: false, calls_remaining: 3 } });
    const usage = await packages.usage({ checkoutId: bought.checkoutId, key: bought.key, pageSize: 1 });
    expect(usage.calls[0]).toMatchObject({ seq: 2, counted: false, fault: "seller" });
  });

  it("gives a call back when its answer comes after the caller stopped waiting: counted only if it can reach the buyer", async () => {
    const bought = await buy({ calls: 4 });
    const restarted = await repointed(bought, "/slow/400");
    const answerBy = new Date(Date.now() + 10_000);
    // While the origin works, the caller's time runs out (as a stalled hop back would make it).
    const late = setTimeout(() => (clock = new Date(answerBy.getTime() - 500)), 150);
    const failed = await problemOf(restarted.spend({ checkoutId: bought.checkoutId, key: bought.key, params: {}, answerBy }));
    clearTimeout(late);
    expect(failed).toMatchObject({ slug: "unavailable", help: expect.objectContaining({ retry_is_safe: true }) });
    const usage = await packages.usage({ checkoutId: bought.checkoutId, key: bought.key, pageSize: 1 });
    expect(usage.calls[0]).toMatchObject({ seq: 2, status: 200, counted: false, fault: "platform" });
    expect(usage.pkg).toMatchObject({ calls_used: 1 });
  });

  it("issues nothing for a purchase whose delivery was not charged", async () => {
    await expect(buy({ path: "/status/503" })).rejects.toMatchObject({ slug: "internal" });
  });

  it("answers 401 alike for an unknown key, a malformed one and another checkout's; 422 for parameters the origin cannot take, spending nothing", async () => {
    const a = await buy();
    const b = await buy();
    for (const [checkoutId, key] of [
      [a.checkoutId, b.key],
      [a.checkoutId, `pk_live_${"x".repeat(32)}`],
      [a.checkoutId, "not-a-key"],
    ] as const) {
      const err = await problemOf(packages.spend({ checkoutId, key, params: {} }));
      expect(err).toMatchObject({ slug: "unauthenticated", status: 401, message: "This package key is not one of this checkout's." });
    }
    const bad = await problemOf(packages.spend({ checkoutId: a.checkoutId, key: a.key, params: { body: "{}" } }));
    expect(bad).toMatchObject({ slug: "invalid-request" });
    expect((await packages.usage({ checkoutId: a.checkoutId, key: a.key, pageSize: 10 })).pkg.calls_used).toBe(1);
  });

  it("expires package_ttl_days after settlement: calls answer 410 while usage still reads", async () => {
    const { key, checkoutId } = await buy({ ttlDays: 2 });
    clock = new Date(Date.now() + 2 * DAY + 1000);
    const err = await problemOf(packages.spend({ checkoutId, key, params: {} }));
    expect(err).toMatchObject({ slug: "gone", status: 410 });
    const usage = await packages.usage({ checkoutId, key, pageSize: 10 });
    expect(usage.pkg.calls_used).toBe(1);
  });

  it("a key minted before expiry existed (expires_at null) never expires: it spends years later, its usage reads null, and it stays a liability", async () => {
    const { key, checkoutId, pkg } = await buy({ calls: 4, ttlDays: 1 });
    await database.db
      .updateTable("packages" as never)
      .set({ expires_at: null } as never)
      .where("id" as never, "=", pkg.id as never)
      .execute();
    clock = new Date(Date.now() + 3 * 365 * DAY);
    expect(await packages.spend({ checkoutId, key, params: {} })).toMatchObject({ seq: 2 });
    const usage = await packages.usage({ checkoutId, key, pageSize: 10 });
    expect(usage.pkg).toMatchObject({ calls_used: 2, expires_at: null });
    expect(await packages.liabilities(checkoutId)).toEqual({ liveKeys: 1, callsUnspent: 2n, unearnedAtomic: 2_500_000n });
  });

  it("50 concurrent calls on a package with 10 left: exactly 10 succeed and the origin is called 10 times", async () => {
    const { key, checkoutId } = await buy({ calls: 11 });
    const before = origin.callsTo("/echo").length;
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => packages.spend({ checkoutId, key, params: {} })));
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused) expect(r.reason).toMatchObject({ slug: "payment-required" });
    expect(origin.callsTo("/echo").length - before).toBe(10);
    const seqs = ok.map((r) => (r as PromiseFulfilledResult<{ seq: number }>).value.seq).sort((x, y) => x - y);
    expect(seqs).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("meters a rehearsal package's calls by the checkout's daily cap (429 past it, the call given back)", async () => {
    const { key, checkoutId } = await buy({ testMode: true, cap: 2, calls: 10 });
    expect(key).toMatch(/^pk_test_/);
    await packages.spend({ checkoutId, key, params: {} });
    const capped = await problemOf(packages.spend({ checkoutId, key, params: {} }));
    expect(capped).toMatchObject({ slug: "rate-limited", extensions: { reason: "test_delivery_daily_cap" } });
    expect((await packages.usage({ checkoutId, key, pageSize: 10 })).pkg.calls_used).toBe(2);
  });

  it("gives back a call a crash left under way once its deadline and the grace have passed, once", async () => {
    const { key, checkoutId, pkg } = await buy({ calls: 3 });
    // What a crash after the allowance was taken leaves: the call under way, its deadline passed.
    const past = new Date(Date.now() - 60_000 - DELIVERY_GRACE_MS);
    await database.db
      .updateTable("packages" as never)
      .set({ calls_used: 2, last_seq: 2 } as never)
      .where("id" as never, "=", pkg.id as never)
      .execute();
    await database.db
      .insertInto("package_calls" as never)
      .values({
        package_id: pkg.id,
        seq: 2,
        at: past,
        state: "calling",
        counted: true,
        status: 0,
        fault: null,
        latency_ms: 0,
        bytes: 0,
        deadline_at: past,
      } as never)
      .execute();
    expect(await packages.sweep()).toBe(1);
    expect(await packages.sweep()).toBe(0);
    const usage = await packages.usage({ checkoutId, key, pageSize: 10 });
    expect(usage.pkg.calls_used).toBe(1);
    expect(usage.calls[0]).toMatchObject({ seq: 2, state: "done", counted: false, fault: "platform" });
  });

  it("owes, while live, the unspent calls' share of the price; rehearsal and expired packages owe nothing", async () => {
    const live = await buy({ calls: 5 });
    await packages.spend({ checkoutId: live.checkoutId, key: live.key, params: {} });
    expect(await packages.liabilities(live.checkoutId)).toEqual({ liveKeys: 1, callsUnspent: 3n, unearnedAtomic: 3_000_000n });
    const rehearsal = await buy({ testMode: true });
    expect(await packages.liabilities(rehearsal.checkoutId)).toEqual({ liveKeys: 0, callsUnspent: 0n, unearnedAtomic: 0n });
    clock = new Date(Date.now() + 31 * DAY);
    expect(await packages.liabilities(live.checkoutId)).toEqual({ liveKeys: 0, callsUnspent: 0n, unearnedAtomic: 0n });
  });

  it("pages the usage record's calls newest first", async () => {
    const { key, checkoutId } = await buy({ calls: 6 });
    for (let i = 0; i < 4; i++) await packages.spend({ checkoutId, key, params: {} });
    const first = await packages.usage({ checkoutId, key, pageSize: 2 });
    expect(first.calls.map((c) => c.seq)).toEqual([5, 4]);
    expect(first.hasMore).toBe(true);
    const second = await packages.usage({ checkoutId, key, pageSize: 2, beforeSeq: 4 });
    expect(second.calls.map((c) => c.seq)).toEqual([3, 2]);
    const last = await packages.usage({ checkoutId, key, pageSize: 2, beforeSeq: 2 });
    expect(last).toMatchObject({ hasMore: false });
    expect(last.calls.map((c) => c.seq)).toEqual([1]);
  });
});

describe("burn projection", () => {
  const now = new Date("2026-11-26T12:00:00Z");
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000);

  it("is insufficient under 3 counted calls or under an hour of history", () => {
    expect(burnOf({ counted: 2, windowStart: hoursAgo(48), now, remaining: 10, expiresAt: null, fullWindow: false })).toEqual({ basis: "insufficient_usage" });
    expect(burnOf({ counted: 9, windowStart: hoursAgo(0.5), now, remaining: 10, expiresAt: null, fullWindow: false })).toEqual({ basis: "insufficient_usage" });
  });

  it("projects calls per day since purchase, and which runs out first", () => {
    // 10 calls in 2 days: 5 a day; 20 left last 4 days, before an expiry 10 days out.
    const byCalls = burnOf({ counted: 10, windowStart: hoursAgo(48), now, remaining: 20, expiresAt: new Date(now.getTime() + 10 * DAY), fullWindow: false });
    expect(byCalls).toEqual({ basis: "since_purchase", callsPerDay: 5, projectedDaysRemaining: 4, runsOutFirst: "calls" });
    const byExpiry = burnOf({ counted: 14, windowStart: hoursAgo(168), now, remaining: 20, expiresAt: new Date(now.getTime() + 3 * DAY), fullWindow: true });
    expect(byExpiry).toEqual({ basis: "trailing_7_days", callsPerDay: 2, projectedDaysRemaining: 10, runsOutFirst: "expiry" });
  });
});
