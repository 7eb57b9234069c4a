import { migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import { effectiveStatus } from "../src/domain/checkout-rules";
import { catalogStore, type CatalogDb } from "../src/store/catalog-store";
import { createRequest } from "./support/create-request";
import { activityOf } from "./support/outbox-activity";

/** PATCH, void, restore, extend and the expiry sweep, each with its account event, on real PostgreSQL. */

const WALLET = "0x1111111111111111111111111111111111111111";
const ACTOR = "key:sk_test_abcd";

describeWith("postgres")("checkout lifecycle on PostgreSQL", () => {
  let database: ServiceDatabase;
  let drop: () => Promise<void>;
  let catalog: Catalog;
  let clock = new Date("2026-11-22T10:00:00.000Z");
  const later = (ms: number) => (clock = new Date(clock.getTime() + ms));

  beforeAll(async () => {
    const fresh = await freshPostgresDatabase();
    drop = fresh.drop;
    database = openPostgres({ url: fresh.url, schema: "catalog" });
    await migrate(database, catalogMigrations);
    catalog = newCatalog();
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  const newCatalog = () =>
    new Catalog({ db: database.db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }], now: () => clock });

  async function created(over: Partial<CreateRequest> = {}) {
    const { checkout } = await catalog.create(createRequest({ actor: ACTOR, offer: { freshness: "hourly", input_schema_json: '{"type":"object"}' }, ...over }));
    return checkout;
  }
  const actions = async (id: string) => (await activityOf(database.db, id)).map((e) => e.action);
  const statusOf = async (id: string) => effectiveStatus(await catalog.get(id), clock);

  describe("PATCH", () => {
    it("sets, clears and keeps offer-card fields; one event names the fields that changed; a no-op writes nothing", async () => {
      const c = await created({ description: "Paris" });
      const r = await catalog.update(
        "acct_a",
        c.id,
        { title: "  Weather now ", offer: { coverage: "France", output_schema_json: '["x"]', freshness: "hourly" }, clear: ["description", "input_schema"] },
        ACTOR,
      );
      expect(r.changed.sort()).toEqual(["coverage", "description", "input_schema", "output_schema", "title"]);
      expect(r.checkout).toMatchObject({ title: "Weather now", description: null, price_atomic: c.price_atomic, pay_to: c.pay_to });
      expect(r.checkout.offer).toMatchObject({ freshness: "hourly", coverage: "France", output_schema_json: '["x"]', input_schema_json: null });
      const again = await catalog.update("acct_a", c.id, { title: "Weather now", offer: { coverage: "France" }, clear: ["description"] }, ACTOR);
      expect(again.changed).toEqual([]);
      const events = await activityOf(database.db, c.id);
      expect(events.map((e) => e.action)).toEqual(["checkout.created", "checkout.updated"]);
      expect((events[1]?.detail.fields as string[]).sort()).toEqual(r.changed.sort());
    });

    it.each([
      [{ clear: ["title"] }, "title"],
      [{ title: "   " }, "title"],
      [{ title: "t".repeat(201) }, "title"],
      [{ description: "d".repeat(4001) }, "description"],
      [{ offer: { freshness: "f".repeat(2001) } }, "freshness"],
      [{ offer: { example_input_json: JSON.stringify("x".repeat(33_000)) } }, "example_input"],
      [{ clear: ["price_usd"] }, "price_usd"],
    ])("refuses %j with 422 naming %s, changing nothing", async (patch, field) => {
      const c = await created();
      await expect(catalog.update("acct_a", c.id, { offer: {}, clear: [], ...patch }, ACTOR)).rejects.toMatchObject({
        slug: "invalid-request",
        errors: [expect.objectContaining({ field })],
      });
      expect(await catalog.get(c.id)).toEqual(c);
      expect(await actions(c.id)).toEqual(["checkout.created"]);
    });

    it("answers 404 for another account's checkout and 409 for a void one", async () => {
      const c = await created();
      await expect(catalog.update("acct_b", c.id, { title: "x", offer: {}, clear: [] }, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
      await expect(catalog.update("acct_a", "chk_nope", { title: "x", offer: {}, clear: [] }, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
      await catalog.void("acct_a", c.id, ACTOR);
      await expect(catalog.update("acct_a", c.id, { title: "x", offer: {}, clear: [] }, ACTOR)).rejects.toMatchObject({ slug: "conflict" });
    });
  });

  describe("void and restore", () => {
    it("voids once (a second void answers it unchanged), hides it from lists, and restores it as it was", async () => {
      const c = await created();
      const first = await catalog.void("acct_a", c.id, "wallet");
      expect(first).toMatchObject({ alreadyVoid: false, checkout: { voided_at: clock } });
      later(1000);
      const second = await catalog.void("acct_a", c.id, "wallet");
      expect(second.alreadyVoid).toBe(true);
      expect(second.checkout.voided_at).toEqual(first.checkout.voided_at);
      expect(await statusOf(c.id)).toBe("void");
      expect((await catalog.list("acct_a", false, { size: 1000 })).map((x) => x.id)).not.toContain(c.id);
      expect((await catalog.list("acct_a", true, { size: 1000 })).map((x) => x.id)).toContain(c.id);
      await expect(catalog.goLive("acct_a", c.id, ACTOR)).rejects.toMatchObject({ slug: "conflict" });

      const restored = await catalog.restore("acct_a", c.id, ACTOR);
      expect(restored.restored).toBe(true);
      expect(await statusOf(c.id)).toBe("open");
      expect((await catalog.restore("acct_a", c.id, ACTOR)).restored).toBe(false);
      const events = await activityOf(database.db, c.id);
      expect(events.map((e) => [e.action, e.actor])).toEqual([
        ["checkout.created", ACTOR],
        ["checkout.voided", "wallet"],
        ["checkout.restored", ACTOR],
      ]);
      expect(events[2]?.detail).toEqual({ status: "open" });
    });

    it("recomputes the status on restore: a sold single-shot comes back paid, a past deadline comes back expired", async () => {
      const sold = await created();
      await catalogStore.markPaid(database.db as CatalogDb, sold.id);
      await catalog.void("acct_a", sold.id, ACTOR);
      await catalog.restore("acct_a", sold.id, ACTOR);
      expect(await statusOf(sold.id)).toBe("paid");

      const short = await created({ expiresInMinutes: 1n });
      await catalog.void("acct_a", short.id, ACTOR);
      later(2 * 60_000);
      await catalog.restore("acct_a", short.id, ACTOR);
      expect(await statusOf(short.id)).toBe("expired");
      expect((await activityOf(database.db, short.id)).at(-1)?.detail).toEqual({ status: "expired" });
    });

    it("keeps another account out", async () => {
      const c = await created();
      await expect(catalog.void("acct_b", c.id, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
      await expect(catalog.restore("acct_b", c.id, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
      await expect(catalog.extend("acct_b", c.id, 10, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
      expect(await actions(c.id)).toEqual(["checkout.created"]);
    });
  });

  describe("extend", () => {
    it("moves or clears the deadline: an expired checkout sells again under the same id", async () => {
      const c = await created({ expiresInMinutes: 1n });
      later(5 * 60_000);
      expect(await statusOf(c.id)).toBe("expired");
      const moved = await catalog.extend("acct_a", c.id, 60, ACTOR);
      expect(moved.expires_at).toEqual(new Date(clock.getTime() + 3_600_000));
      expect(await statusOf(c.id)).toBe("open");
      const cleared = await catalog.extend("acct_a", c.id, null, ACTOR);
      expect(cleared.expires_at).toBeNull();
      later(400 * 24 * 3_600_000);
      expect(await statusOf(c.id)).toBe("open");
      const events = await activityOf(database.db, c.id);
      expect(events.slice(1).map((e) => [e.action, e.detail.expires_at === null])).toEqual([
        ["checkout.extended", false],
        ["checkout.extended", true],
      ]);
    });

    it("is refused for a void checkout and a paid single-shot (409), and for a bad duration (422)", async () => {
      const voided = await created();
      await catalog.void("acct_a", voided.id, ACTOR);
      await expect(catalog.extend("acct_a", voided.id, 10, ACTOR)).rejects.toMatchObject({ slug: "conflict" });
      const paid = await created();
      await catalogStore.markPaid(database.db as CatalogDb, paid.id);
      await expect(catalog.extend("acct_a", paid.id, 10, ACTOR)).rejects.toMatchObject({ slug: "conflict" });
      for (const minutes of [0, -1, 1.5, 527_041]) {
        await expect(catalog.extend("acct_a", paid.id, minutes, ACTOR)).rejects.toMatchObject({
          slug: "invalid-request",
          errors: [expect.objectContaining({ field: "expires_in_minutes" })],
        });
      }
    });
  });

  describe("the expiry sweep", () => {
    it("records each passed deadline once (actor system), skips void and paid ones, and again after an extend", async () => {
      await catalog.recordExpiries(10_000); // whatever earlier tests left due
      const due = await created({ expiresInMinutes: 1n });
      const voided = await created({ expiresInMinutes: 1n });
      await catalog.void("acct_a", voided.id, ACTOR);
      const paid = await created({ expiresInMinutes: 1n });
      await catalogStore.markPaid(database.db as CatalogDb, paid.id);
      const notYet = await created({ expiresInMinutes: 10n });
      expect(await catalog.recordExpiries(100)).toBe(0);
      later(2 * 60_000);
      expect(await catalog.recordExpiries(100)).toBe(1);
      expect(await catalog.recordExpiries(100)).toBe(0);
      const expired = await activityOf(database.db, due.id);
      expect(expired.map((e) => [e.action, e.actor])).toEqual([
        ["checkout.created", ACTOR],
        ["checkout.expired", "system"],
      ]);
      for (const id of [voided.id, paid.id, notYet.id]) expect(await actions(id)).not.toContain("checkout.expired");

      await catalog.extend("acct_a", due.id, 1, ACTOR);
      later(2 * 60_000);
      expect(await catalog.recordExpiries(100)).toBeGreaterThanOrEqual(1);
      expect((await actions(due.id)).filter((a) => a === "checkout.expired")).toHaveLength(2);
    });

    it("two sweeps racing record each deadline exactly once", async () => {
      await catalog.recordExpiries(10_000);
      const ids = [];
      for (let i = 0; i < 30; i++) ids.push((await created({ expiresInMinutes: 1n })).id);
      later(2 * 60_000);
      const other = newCatalog();
      const counts = await Promise.all([catalog.recordExpiries(7), other.recordExpiries(7), catalog.recordExpiries(100), other.recordExpiries(100)]);
      const rest = await catalog.recordExpiries(100);
      expect(counts.reduce((a, b) => a + b, 0) + rest).toBe(30);
      for (const id of ids) expect((await actions(id)).filter((a) => a === "checkout.expired")).toHaveLength(1);
    });
  });
});
