import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogV1 } from "@c402/contracts";
import { migrate, openPostgres, sql, type ServiceDatabase } from "@c402/db";
import { assertValidRequest, type CallContext } from "@c402/rpc";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import { catalogRpc } from "../src/rpc/catalog-rpc";
import { catalogStore } from "../src/store/catalog-store";

/**
 * What a seller's public catalogue lists (ListSellingOffers): the armed
 * checkouts that sell right now, newest first, by keyset pages, with the
 * offer card's text claims and never the goods. On real PostgreSQL.
 */

const WALLET = "0x1111111111111111111111111111111111111111";
const ACTOR = "key:sk_live_abcd";

describeWith("postgres")("a seller's selling offers on PostgreSQL", () => {
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
    catalog = new Catalog({ db: database.db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }], now: () => clock });
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  /** An armed checkout unless said otherwise; each a second after the previous one, so the order is known. */
  async function created(accountId: string, over: Partial<CreateRequest> = {}) {
    later(1000);
    const { checkout } = await catalog.create({
      accountId,
      actor: ACTOR,
      fingerprint: `fp_${Math.random()}`,
      title: "Weather",
      priceUsd: "0.10",
      payloadJson: JSON.stringify({ secret_goods: 21 }),
      offer: { freshness: "hourly", coverage: "Paris", input_schema_json: '{"type":"object"}', example_output_json: '{"temp_c":21}' },
      createdWithLiveKey: true,
      testMode: false,
      ...over,
    });
    return checkout;
  }
  const ids = async (accountId: string, size = 1000) => (await catalog.listSelling(accountId, { size })).map((c) => c.id);

  it("lists the armed, open checkouts newest first: not void, not expired, not a sold single-shot, not unarmed, not another seller's", async () => {
    const seller = "acct_selling";
    const reusable = await created(seller, { reusable: true });
    const single = await created(seller);
    const voided = await created(seller, { reusable: true });
    const unarmed = await created(seller, { testMode: true, createdWithLiveKey: false });
    const sold = await created(seller);
    const expiring = await created(seller, { expiresInMinutes: 5n });
    const forever = await created(seller, { expiresInMinutes: 60n * 24n * 366n });
    await created("acct_someone_else");

    await catalog.void(seller, voided.id, ACTOR);
    await catalogStore.markPaid(database.db, sold.id);
    expect(await ids(seller)).toEqual([forever.id, expiring.id, single.id, reusable.id]);

    // The deadline is judged against the clock at each read: past it, the checkout stops being offered.
    later(5 * 60_000);
    expect(await ids(seller)).toEqual([forever.id, single.id, reusable.id]);
    // Extended, it sells again; restored, a void one comes back; armed, an unarmed one joins.
    await catalog.extend(seller, expiring.id, 60, ACTOR);
    await catalog.restore(seller, voided.id, ACTOR);
    await catalog.goLive(seller, unarmed.id, ACTOR);
    expect(await ids(seller)).toEqual([forever.id, expiring.id, unarmed.id, voided.id, single.id, reusable.id]);
    // A reusable checkout that sold keeps selling (only a single-shot becomes paid).
    await catalogStore.markPaid(database.db, reusable.id);
    expect(await ids(seller)).toContain(reusable.id);
    expect(await ids("acct_nobody")).toEqual([]);
  });

  it("pages by keyset: every offer once, in order, whatever the page size", async () => {
    const seller = "acct_paged";
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.unshift((await created(seller, { reusable: true, title: `Offer ${i}` })).id);
    for (const size of [1, 2, 3, 7, 8]) {
      const seen: string[] = [];
      let after: { createdAt: Date; id: string } | undefined;
      for (;;) {
        const page = await catalog.listSelling(seller, { size, ...(after ? { after } : {}) });
        seen.push(...page.map((c) => c.id));
        const last = page[page.length - 1];
        if (page.length < size || !last) break;
        after = { createdAt: last.created_at, id: last.id };
      }
      expect(seen).toEqual(made);
    }
    await expect(catalog.listSelling(seller, { size: 0 })).rejects.toMatchObject({ slug: "invalid-request" });
    await expect(catalog.listSelling(seller, { size: 1001 })).rejects.toMatchObject({ slug: "invalid-request" });
  });

  it("the RPC answers summaries with the offer card's text claims only: never the goods, the schemas or the examples", async () => {
    const seller = "acct_rpc";
    const c = await created(seller, {
      title: "Tides",
      description: "Next 7 days",
      reusable: true,
      offer: { freshness: "daily", source: "SHOM", input_schema_json: "{}" },
    });
    const rpc = catalogRpc(catalog, () => clock);
    const req = create(catalogV1.ListSellingOffersRequestSchema, {
      accountId: seller,
      pageSize: 10,
      after: { createdAt: timestampFromDate(new Date(clock.getTime() + 1000)), id: "chk_zzzzzzzzzzzzzzzzzzzzzzzz" },
    });
    assertValidRequest(catalogV1.ListSellingOffersRequestSchema, req);
    const offers = (await rpc.listSellingOffers(req, {} as CallContext)).offers ?? [];
    expect(offers).toHaveLength(1);
    expect(offers[0]!.checkout).toMatchObject({ id: c.id, title: "Tides", description: "Next 7 days", priceAtomic: 100_000n, armed: true, reusable: true });
    expect(offers[0]!.offer).toEqual(create(catalogV1.OfferCardSchema, { freshness: "daily", source: "SHOM" }));
    expect(JSON.stringify(offers, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))).not.toContain("secret_goods");
    expect(() =>
      assertValidRequest(catalogV1.ListSellingOffersRequestSchema, create(catalogV1.ListSellingOffersRequestSchema, { accountId: seller, pageSize: 0 })),
    ).toThrow(expect.objectContaining({ slug: "invalid-request" }));
  });

  it("reads the page through the partial index made for it", async () => {
    const plan = await database.db.transaction().execute(async (trx) => {
      // The test table is tiny, so a sequential scan would win on cost; without it the planner shows which index it picks
      // for the shape of catalogStore.listSelling's query.
      await sql`set local enable_seqscan = off`.execute(trx);
      return sql<{ "QUERY PLAN": string }>`explain select id from catalog.checkouts
        where account_id = 'acct_selling' and voided_at is null and status = 'open' and armed = true
          and (expires_at is null or expires_at > now())
        order by created_at desc, id desc limit 51`.execute(trx);
    });
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("checkouts_selling_page");
  });
});
