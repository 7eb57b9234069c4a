import { migrate } from "@c402/db";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { getAddress } from "viem";
import { catalogMigrations } from "../src";
import { activityOf } from "./support/outbox-activity";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import { effectiveStatus } from "../src/domain/checkout-rules";
import { catalogStore, snapshotOf, type CatalogDb, type CheckoutPage, type CheckoutSummaryRow } from "../src/store/catalog-store";

const WALLET = "0x1111111111111111111111111111111111111111";
const ALL = { size: 1000 };
/** A checksummed address with one letter's case flipped: a wrong EIP-55 checksum. */
const CHECKSUMMED = getAddress("0x" + "ab".repeat(20));
const MISCHECKSUMMED = CHECKSUMMED.replace(/[a-f]/, (c) => c.toUpperCase());
const ACTOR = "key:sk_test_abcd";
const base = (over: Partial<CreateRequest> = {}): CreateRequest => ({
  accountId: "acct_a",
  actor: ACTOR,
  fingerprint: "fp1",
  title: "Weather report",
  priceUsd: "0.10",
  offer: {},
  createdWithLiveKey: false,
  ...over,
});

function catalogContract(open: () => Promise<TestDatabase>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  let catalog: Catalog;
  let clock = new Date("2026-11-22T10:00:00Z");
  let walletCalls = 0;
  /** While set, a create for acct_slow waits for it before it gets its payout wallet (a create that hangs mid-way). */
  let slowWallet: Promise<void> | undefined;

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, catalogMigrations);
    catalog = new Catalog({
      db: ctx.database.db,
      payoutWallets: async (accountId) => {
        walletCalls++;
        if (accountId === "acct_slow") await slowWallet;
        return accountId === "acct_nowallet" ? [] : [{ chainFamily: "eip155", address: WALLET, isDefault: true }];
      },
      now: () => clock,
    });
  });
  afterAll(() => ctx.close());

  it("names the live checkout of a retired test twin (imported rows), and nothing for any other id", async () => {
    const { checkout } = await catalog.create(base({ payloadJson: "{}", fingerprint: "twin-live" }));
    const twin = "chk_RetiredTwin0000000000000";
    await (ctx.database.db as CatalogDb).insertInto("retired_twins").values({ twin_id: twin, live_id: checkout.id }).execute();
    expect(await catalog.liveOfRetiredTwin(twin)).toBe(checkout.id);
    expect(await catalog.liveOfRetiredTwin(checkout.id)).toBeUndefined();
    // A twin names a checkout of this catalog or nothing.
    await expect(
      (ctx.database.db as CatalogDb)
        .insertInto("retired_twins")
        .values({ twin_id: "chk_Orphan000000000000000000", live_id: "chk_Missing00000000000000000" })
        .execute(),
    ).rejects.toThrow();
  });

  it("creates an inline checkout with pay_to copied from the standing payout wallet", async () => {
    const { checkout, replayed } = await catalog.create(base({ payloadJson: '{"temp":21}', description: "Today" }));
    expect(replayed).toBe(false);
    expect(checkout).toMatchObject({
      title: "Weather report",
      price_atomic: 100_000n,
      pay_to: WALLET,
      fulfillment: "inline",
      payload_json: '{"temp":21}',
      reusable: false,
      status: "open",
    });
    expect(checkout.id).toMatch(/^chk_/);
    expect(checkout.expires_at?.getTime()).toBe(clock.getTime() + 7 * 24 * 3600 * 1000);
  });

  it("refuses a create with no pay_to when the account has no payout wallet", async () => {
    await expect(catalog.create(base({ accountId: "acct_nowallet" }))).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "pay_to", reason: expect.any(String) }],
    });
  });

  it("arms by the key's mode unless test_mode says otherwise", async () => {
    expect((await catalog.create(base())).checkout.armed).toBe(false);
    expect((await catalog.create(base({ createdWithLiveKey: true }))).checkout.armed).toBe(true);
    expect((await catalog.create(base({ createdWithLiveKey: true, testMode: true }))).checkout.armed).toBe(false);
    expect((await catalog.create(base({ testMode: false }))).checkout.armed).toBe(true);
  });

  it.each([
    [{ title: "  " }, "title"],
    [{ title: "x".repeat(201) }, "title"],
    [{ priceUsd: "0" }, "price_usd"],
    [{ priceUsd: "abc" }, "price_usd"],
    [{ priceUsd: "0.0000001" }, "price_usd"],
    [{ priceUsd: "1000000.01" }, "price_usd"],
    [{ payTo: "0x123" }, "pay_to"],
    [{ payTo: "0x0000000000000000000000000000000000000000" }, "pay_to"],
    [{ fulfillment: "relay" }, "origin_url"],
    [{ fulfillment: "streaming" }, "fulfillment"],
    [{ expiresInMinutes: 0n }, "expires_in_minutes"],
    [{ payloadJson: JSON.stringify("x".repeat(300_000)) }, "payload"],
    [{ offer: { freshness: "x".repeat(2001) } }, "freshness"],
  ] as [Partial<CreateRequest>, string][])("rejects %# with 422 naming the field", async (over, field) => {
    await expect(catalog.create(base(over))).rejects.toMatchObject({
      slug: "invalid-request",
      errors: expect.arrayContaining([expect.objectContaining({ field })]),
    });
  });

  it("reports every invalid field at once", async () => {
    await expect(catalog.create(base({ title: "", priceUsd: "-1", payTo: "nope" }))).rejects.toMatchObject({
      errors: [expect.objectContaining({ field: "title" }), expect.objectContaining({ field: "price_usd" }), expect.objectContaining({ field: "pay_to" })],
    });
  });

  it("lists newest first and hides other accounts' checkouts", async () => {
    const a = (await catalog.create(base({ accountId: "acct_list", title: "first" }))).checkout;
    clock = new Date(clock.getTime() + 1000);
    const b = (await catalog.create(base({ accountId: "acct_list", title: "second" }))).checkout;
    expect((await catalog.list("acct_list", false, ALL)).map((c) => c.id)).toEqual([b.id, a.id]);
    await expect(catalog.get(a.id, "acct_other")).rejects.toMatchObject({ slug: "not-found" });
    await expect(catalog.get("chk_nope")).rejects.toMatchObject({ slug: "not-found" });
  });

  describe("checkout settings (parties, platform fee, payouts, embed, rehearsal budget)", () => {
    it("stores and reads back what was sent, with the defaults for the rest", async () => {
      const parties = { buyer: { name: "Ada", email: "ada@example.com", ref: "cust_1" }, seller: { name: "Shop", ref: "s-9" } };
      const { checkout } = await catalog.create(base({ partiesJson: JSON.stringify(parties), walletButton: true, testDeliveryDailyCap: 3, platformFeeBps: 0 }));
      expect(await catalog.get(checkout.id)).toMatchObject({
        parties,
        platform_fee_bps: 0,
        inherit_account_payouts: true,
        wallet_button: true,
        test_delivery_daily_cap: 3,
      });
      // Verbatim: in the order sent (jsonb would sort the keys), read back and in an idempotent replay.
      expect(JSON.stringify((await catalog.get(checkout.id)).parties)).toBe(JSON.stringify(parties));
      const keyed = await catalog.create(base({ partiesJson: JSON.stringify(parties), idempotencyKey: "k-parties" }));
      const replay = await catalog.create(base({ partiesJson: JSON.stringify(parties), idempotencyKey: "k-parties" }));
      expect(replay.replayed).toBe(true);
      expect(JSON.stringify(replay.checkout.parties)).toBe(JSON.stringify(keyed.checkout.parties));
      expect(JSON.stringify(replay.checkout.parties)).toBe(JSON.stringify(parties));
      const plain = (await catalog.create(base())).checkout;
      expect(await catalog.get(plain.id)).toMatchObject({
        parties: null,
        platform_fee_bps: 0,
        inherit_account_payouts: true,
        wallet_button: false,
        test_delivery_daily_cap: 25,
      });
    });

    it.each([
      [{ partiesJson: '{"buyer":{"name":"A"},"platform":{}}' }, "parties.platform"],
      [{ partiesJson: '{"buyer":{"phone":"1"}}' }, "parties.buyer.phone"],
      [{ partiesJson: '{"seller":{"email":"a@b.co"}}' }, "parties.seller.email"],
      [{ partiesJson: '{"buyer":{"email":"not-an-address"}}' }, "parties.buyer.email"],
      [{ partiesJson: `{"buyer":{"name":"${"n".repeat(201)}"}}` }, "parties.buyer.name"],
      [{ partiesJson: '{"buyer":{"ref":5}}' }, "parties.buyer.ref"],
      [{ partiesJson: "[1]" }, "parties"],
      [{ platformFeeBps: 2001 }, "platform_fee_bps"],
      [{ platformFeeBps: 250 }, "platform_fee_bps"],
      [{ inheritAccountPayouts: false }, "pay_to"],
      [{ testDeliveryDailyCap: 0 }, "test_delivery_daily_cap"],
      [{ testDeliveryDailyCap: 100_001 }, "test_delivery_daily_cap"],
    ])("refuses %j with 422 naming %s", async (over, field) => {
      await expect(catalog.create(base(over))).rejects.toMatchObject({ slug: "invalid-request", errors: [expect.objectContaining({ field })] });
    });

    it("takes pay_to as sent when the account's payouts are not inherited", async () => {
      const { checkout } = await catalog.create(base({ inheritAccountPayouts: false, payTo: CHECKSUMMED }));
      expect(checkout).toMatchObject({ inherit_account_payouts: false, pay_to: CHECKSUMMED });
    });
  });

  describe("pay_to checksum (EIP-55)", () => {
    it("refuses a mixed-case address whose checksum is wrong, naming pay_to", async () => {
      expect(MISCHECKSUMMED).not.toBe(CHECKSUMMED);
      await expect(catalog.create(base({ payTo: MISCHECKSUMMED }))).rejects.toMatchObject({
        slug: "invalid-request",
        errors: [{ field: "pay_to", reason: expect.stringContaining("checksum") }],
      });
    });

    it.each([
      ["correctly checksummed", CHECKSUMMED],
      ["all lowercase", CHECKSUMMED.toLowerCase()],
      ["all uppercase", "0x" + CHECKSUMMED.slice(2).toUpperCase()],
    ])("accepts an address %s and stores it checksummed", async (_, payTo) => {
      expect((await catalog.create(base({ payTo }))).checkout.pay_to).toBe(CHECKSUMMED);
    });
  });

  describe("keyset pages", () => {
    const account = "acct_pages";
    const created: string[] = [];

    /** Every page of the list, walking `after` from the last item of each. */
    async function walk(size: number, includeVoided = false): Promise<CheckoutSummaryRow[][]> {
      const pages: CheckoutSummaryRow[][] = [];
      let page: CheckoutPage = { size };
      for (;;) {
        const rows = await catalog.list(account, includeVoided, page);
        pages.push(rows);
        const last = rows[rows.length - 1];
        if (rows.length < size || !last) return pages;
        if (pages.length > 20) throw new Error("pagination does not end");
        page = { size, after: { createdAt: last.created_at, id: last.id } };
      }
    }

    beforeAll(async () => {
      // Seven checkouts over four instants: ties on created_at are ordered by id.
      const start = clock;
      for (const [i, offsetMs] of [0, 0, 0, 1000, 2000, 2000, 3000].entries()) {
        clock = new Date(start.getTime() + offsetMs);
        created.push((await catalog.create(base({ accountId: account, title: `n${i}`, payloadJson: '{"big":true}' }))).checkout.id);
      }
      clock = new Date(start.getTime() + 10_000);
    });

    it("walks every page exactly once, newest first by (created_at, id), ties included", async () => {
      const all = await catalog.list(account, false, ALL);
      expect(all.map((c) => c.id).sort()).toEqual([...created].sort());
      for (let i = 1; i < all.length; i++) {
        const [newer, older] = [all[i - 1]!, all[i]!];
        expect(newer.created_at.getTime()).toBeGreaterThanOrEqual(older.created_at.getTime());
      }
      expect(all[0]!.id).toBe(created[6]);
      expect(
        all
          .slice(-3)
          .map((c) => c.id)
          .sort(),
      ).toEqual(created.slice(0, 3).sort());

      for (const size of [1, 2, 3, 7]) {
        const pages = await walk(size);
        expect(pages.flat().map((c) => c.id)).toEqual(all.map((c) => c.id));
        expect(pages.slice(0, -1).every((p) => p.length === size)).toBe(true);
      }
      expect((await walk(3)).map((p) => p.length)).toEqual([3, 3, 1]);
    });

    it("reads summary columns only: no goods, no offer card", async () => {
      const [first] = await catalog.list(account, false, { size: 1 });
      expect(first).toBeDefined();
      expect(first).not.toHaveProperty("payload_json");
      expect(first).not.toHaveProperty("offer");
      expect(first).toMatchObject({ id: created[6], account_id: account, title: "n6", price_atomic: 100_000n, pay_to: WALLET, status: "open" });
    });

    it("keeps include_voided across pages", async () => {
      const voided = { ...(await catalog.get(created[0]!)), id: "chk_voidedvoidedvoided00001", voided_at: clock };
      await catalogStore.insertCheckout(ctx.database.db as CatalogDb, voided);
      expect((await walk(2)).flat().map((c) => c.id)).not.toContain(voided.id);
      const withVoided = (await walk(2, true)).flat().map((c) => c.id);
      expect(withVoided).toContain(voided.id);
      expect(withVoided).toHaveLength(created.length + 1);
    });

    it.each([0, 1001, 1.5])("refuses page size %p", async (size) => {
      await expect(catalog.list(account, false, { size })).rejects.toMatchObject({ slug: "invalid-request", errors: [{ field: "page_size" }] });
    });
  });

  it("goes live idempotently", async () => {
    const { checkout } = await catalog.create(base());
    const first = await catalog.goLive("acct_a", checkout.id, ACTOR);
    expect(first).toMatchObject({ alreadyLive: false, checkout: { id: checkout.id, armed: true } });
    const second = await catalog.goLive("acct_a", checkout.id, ACTOR);
    expect(second.alreadyLive).toBe(true);
    expect(second.checkout.armed_at).toEqual(first.checkout.armed_at);
    await expect(catalog.goLive("acct_b", checkout.id, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
  });

  it("records each change with its account event, in the change's transaction (outbox), and nothing for a no-op", async () => {
    const { checkout } = await catalog.create(base({ title: "Evented", priceUsd: "1.5", reusable: true }));
    expect(await activityOf(ctx.database.db, checkout.id)).toEqual([
      {
        accountId: "acct_a",
        testMode: true,
        at: clock,
        action: "checkout.created",
        objectId: checkout.id,
        actor: ACTOR,
        detail: { title: "Evented", price_usd: "1.500000", reusable: true, armed: false, expires_at: checkout.expires_at?.toISOString() },
      },
    ]);
    await catalog.goLive("acct_a", checkout.id, "wallet");
    await catalog.goLive("acct_a", checkout.id, "wallet");
    const events = await activityOf(ctx.database.db, checkout.id);
    expect(events.map((e) => [e.action, e.actor, e.testMode])).toEqual([
      ["checkout.created", ACTOR, true],
      ["checkout.live", "wallet", false],
    ]);
    // A create refused by validation writes no event.
    await expect(catalog.create(base({ title: "" }))).rejects.toMatchObject({ slug: "invalid-request" });
  });

  it("recomputes the status from the record: void, then paid, then expired, then open", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    const open = { status: "open" as const, voided_at: null, expires_at: at };
    expect(effectiveStatus(open, new Date(at.getTime() - 1))).toBe("open");
    expect(effectiveStatus(open, at)).toBe("expired");
    expect(effectiveStatus({ ...open, expires_at: null }, new Date(8e15))).toBe("open");
    expect(effectiveStatus({ ...open, status: "paid" }, new Date(at.getTime() + 1))).toBe("paid");
    expect(effectiveStatus({ ...open, status: "paid", voided_at: at }, new Date(at.getTime() + 1))).toBe("void");
  });

  describe("idempotency keys", () => {
    it("replays the original checkout for the same key and body", async () => {
      const first = await catalog.create(base({ idempotencyKey: "k-1" }));
      await catalog.goLive("acct_a", first.checkout.id, ACTOR);
      const again = await catalog.create(base({ idempotencyKey: "k-1" }));
      expect(again.replayed).toBe(true);
      // The original checkout as first returned, even though it went live since.
      expect(again.checkout).toEqual(first.checkout);
    });

    it("refuses the same key with a different body (422) and scopes keys per account", async () => {
      await catalog.create(base({ idempotencyKey: "k-2" }));
      await expect(catalog.create(base({ idempotencyKey: "k-2", fingerprint: "other" }))).rejects.toMatchObject({ slug: "invalid-request" });
      const other = await catalog.create(base({ idempotencyKey: "k-2", accountId: "acct_b2" }));
      expect(other.replayed).toBe(false);
    });

    it("releases the key when the create fails", async () => {
      await expect(catalog.create(base({ idempotencyKey: "k-3", priceUsd: "bad", fingerprint: "bad" }))).rejects.toMatchObject({ slug: "invalid-request" });
      const retry = await catalog.create(base({ idempotencyKey: "k-3", fingerprint: "good" }));
      expect(retry.replayed).toBe(false);
    });

    it("executes concurrent duplicates once; the others replay or get 409", async () => {
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => catalog.create(base({ idempotencyKey: "k-4", accountId: "acct_conc" }))));
      const created = results.filter((r) => r.status === "fulfilled" && !r.value.replayed);
      expect(created).toHaveLength(1);
      for (const r of results) {
        if (r.status === "rejected") expect(r.reason).toMatchObject({ slug: "conflict" });
      }
      expect(await catalog.list("acct_conc", false, ALL)).toHaveLength(1);
    });

    it("scopes keys per mode: the same key with a test key and a live key makes two checkouts", async () => {
      const asTest = await catalog.create(base({ idempotencyKey: "k-mode", accountId: "acct_mode" }));
      const asLive = await catalog.create(base({ idempotencyKey: "k-mode", accountId: "acct_mode", createdWithLiveKey: true }));
      expect(asLive.replayed).toBe(false);
      expect(asLive.checkout.id).not.toBe(asTest.checkout.id);
      expect(asLive.checkout.armed).toBe(true);
      // Each mode replays its own checkout; a different body in the other mode is not a reuse.
      expect(await catalog.create(base({ idempotencyKey: "k-mode", accountId: "acct_mode" }))).toMatchObject({
        replayed: true,
        checkout: { id: asTest.checkout.id },
      });
      expect(await catalog.create(base({ idempotencyKey: "k-mode", accountId: "acct_mode", createdWithLiveKey: true }))).toMatchObject({
        replayed: true,
        checkout: { id: asLive.checkout.id },
      });
      const otherBody = await catalog.create(base({ idempotencyKey: "k-mode2", accountId: "acct_mode", fingerprint: "a" }));
      const live = await catalog.create(base({ idempotencyKey: "k-mode2", accountId: "acct_mode", fingerprint: "b", createdWithLiveKey: true }));
      expect(live.checkout.id).not.toBe(otherBody.checkout.id);
    });

    it("refuses a retry while the claim is in flight (409 with Retry-After), takes an abandoned claim over after the lease, and never commits the original then", async () => {
      let resume!: () => void;
      slowWallet = new Promise((r) => (resume = r));
      const original = catalog.create(base({ idempotencyKey: "k-slow", accountId: "acct_slow" }));
      await new Promise((r) => setTimeout(r, 50));
      await expect(catalog.create(base({ idempotencyKey: "k-slow", accountId: "acct_slow" }))).rejects.toMatchObject({
        slug: "conflict",
        retryAfterSeconds: 1,
      });
      // A claim that looks stuck: Retry-After says when it can be taken over.
      clock = new Date(clock.getTime() + 20_000);
      await expect(catalog.create(base({ idempotencyKey: "k-slow", accountId: "acct_slow" }))).rejects.toMatchObject({ retryAfterSeconds: 10 });
      clock = new Date(clock.getTime() + 11_000);
      slowWallet = undefined;
      const retry = await catalog.create(base({ idempotencyKey: "k-slow", accountId: "acct_slow" }));
      expect(retry.replayed).toBe(false);
      // The original finishes now: its claim is gone, so it commits nothing.
      resume();
      await expect(original).rejects.toMatchObject({ slug: "conflict" });
      const made = await catalog.list("acct_slow", true, ALL);
      expect(made.map((c) => c.id)).toEqual([retry.checkout.id]);
      expect(
        await ctx.database.db
          .selectFrom("outbox")
          .select("key")
          .where("key", "like", "chk_%")
          .where(
            "key",
            "in",
            made.map((c) => c.id),
          )
          .execute(),
      ).toHaveLength(1);
      expect(await catalog.create(base({ idempotencyKey: "k-slow", accountId: "acct_slow" }))).toMatchObject({
        replayed: true,
        checkout: { id: retry.checkout.id },
      });
    });

    it("reaps keys past their retention, whoever's they are, in batches", async () => {
      const reaper = new Catalog({ db: ctx.database.db, payoutWallets: async () => [], now: () => clock });
      await catalog.create(base({ idempotencyKey: "k-reap-1", accountId: "acct_reap", payTo: WALLET }));
      await catalog.create(base({ idempotencyKey: "k-reap-2", accountId: "acct_reap2", payTo: WALLET }));
      const keysOf = async () =>
        (await ctx.database.db.selectFrom("idempotency_keys").select("key").where("key", "like", "k-reap-%").execute()).map((k) => k.key).sort();
      expect(await reaper.reapIdempotencyKeys(1000)).toBeGreaterThanOrEqual(0);
      expect(await keysOf()).toEqual(["k-reap-1", "k-reap-2"]);
      clock = new Date(clock.getTime() + 24 * 3600 * 1000 + 1000);
      const pastRetention = async () =>
        (
          await ctx.database.db
            .selectFrom("idempotency_keys")
            .select("key")
            .where("created_at", "<", new Date(clock.getTime() - 24 * 3600 * 1000))
            .execute()
        ).length;
      const due = await pastRetention();
      expect(due).toBeGreaterThanOrEqual(2);
      expect(await reaper.reapIdempotencyKeys(1)).toBe(1);
      expect(await pastRetention()).toBe(due - 1);
      expect(await reaper.reapIdempotencyKeys(1000)).toBe(due - 1);
      expect(await keysOf()).toEqual([]);
    });

    it("honours a key for 24 hours, then executes afresh", async () => {
      const first = await catalog.create(base({ idempotencyKey: "k-5", accountId: "acct_ttl" }));
      clock = new Date(clock.getTime() + 23 * 3600 * 1000 + 59 * 60 * 1000);
      expect((await catalog.create(base({ idempotencyKey: "k-5", accountId: "acct_ttl" }))).checkout.id).toBe(first.checkout.id);
      clock = new Date(clock.getTime() + 2 * 60 * 1000);
      const later = await catalog.create(base({ idempotencyKey: "k-5", accountId: "acct_ttl" }));
      expect(later.replayed).toBe(false);
      expect(later.checkout.id).not.toBe(first.checkout.id);
    });
  });

  it("asks identity for the wallet only when pay_to is omitted", async () => {
    const before = walletCalls;
    await catalog.create(base({ payTo: WALLET }));
    expect(walletCalls).toBe(before);
  });

  describe("migration 0004 (idempotency keys per mode)", () => {
    let old: Awaited<ReturnType<typeof open>>;
    beforeAll(async () => {
      old = await open();
    });
    afterAll(() => old.close());

    it("keeps a key claimed before it for both modes, so a retry in either mode still replays", async () => {
      const before = Object.fromEntries(Object.entries(catalogMigrations).filter(([name]) => name < "0004"));
      await migrate(old.database, before);
      const { checkout } = await catalog.create(base({ accountId: "acct_old" }));
      const row = { account_id: "acct_old", key: "k-old", fingerprint: "fp1", state: "done", checkout_id: checkout.id, created_at: clock };
      await old.database.db
        .insertInto("idempotency_keys")
        .values({ ...row, snapshot: JSON.stringify(snapshotOf(checkout)) })
        .execute();
      await migrate(old.database, catalogMigrations);

      const migrated = new Catalog({ db: old.database.db, payoutWallets: async () => [], now: () => clock });
      for (const createdWithLiveKey of [false, true]) {
        const again = await migrated.create(base({ accountId: "acct_old", idempotencyKey: "k-old", createdWithLiveKey }));
        expect(again).toMatchObject({ replayed: true, checkout: { id: checkout.id } });
      }
    });
  });
}

describeOnEachDatabase("catalog", "catalog", catalogContract);
