import { create } from "@bufbuild/protobuf";
import { migrate } from "@c402/db";
import { catalogV1 } from "@c402/contracts";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import type { CallContext } from "@c402/rpc";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import { catalogRpc } from "../src/rpc/catalog-rpc";
import { checkoutFromSnapshot, snapshotOf } from "../src/store/catalog-store";
import { activityOf } from "./support/outbox-activity";

/**
 * Recurring series in the catalog (ADR 20): the terms frozen at create, read
 * back and listed, kept by an idempotent create, and the rules: periods 2 to
 * 24, interval 1 to 366 days, never with escrow, a package or gated content,
 * and only with a Base payout rail.
 */

const WALLET = "0x1111111111111111111111111111111111111111";
const ARBITER = "0x2222222222222222222222222222222222222222";
const SERIES = { intervalDays: 30, periods: 12 };
const ESCROW = { preset: "standard", settleSeconds: 259_200, holdSeconds: 604_800, backstopSeconds: 2_592_000, arbiterEvm: ARBITER };

const goods = (over: Partial<CreateRequest> = {}): CreateRequest => ({
  accountId: "acct_series",
  actor: "key:sk_test_abcd",
  fingerprint: `fp-${Math.random()}`,
  title: "Monthly report",
  priceUsd: "5.00",
  offer: {},
  createdWithLiveKey: false,
  payloadJson: JSON.stringify({ report: "this month" }),
  ...over,
});

/** The fields a create is refused on (none: it was accepted). */
const refusedFields = (p: Promise<unknown>) =>
  p.then(
    () => [],
    (err: { errors?: { field: string }[] }) => (err.errors ?? []).map((e) => e.field),
  );

function scheduleContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let catalog: Catalog;

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, catalogMigrations);
    catalog = new Catalog({ db: ctx.database.db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }] });
  });
  afterAll(() => ctx.close());

  it("a series keeps its terms; get, list, a snapshot and the created event answer them; a plain checkout has none", async () => {
    const { checkout } = await catalog.create(goods({ schedule: SERIES }));
    const stored = { interval_days: 30, periods: 12 };
    expect(checkout.schedule).toEqual(stored);
    expect(checkout.id.startsWith("chk_")).toBe(true);
    expect((await catalog.get(checkout.id)).schedule).toEqual(stored);
    const listed = await catalog.list("acct_series", false, { size: 50 });
    expect(listed.find((c) => c.id === checkout.id)?.schedule).toEqual(stored);
    expect(checkoutFromSnapshot(snapshotOf(checkout)).schedule).toEqual(stored);
    const { schedule: _s, ...older } = snapshotOf(checkout);
    expect(checkoutFromSnapshot(older).schedule).toBeNull();
    expect((await activityOf(ctx.database.db, checkout.id))[0]?.detail).toMatchObject({ schedule: stored });
    expect((await catalog.create(goods())).checkout.schedule).toBeNull();
  });

  it("an idempotent create answers the original series", async () => {
    const first = await catalog.create(goods({ schedule: SERIES, fingerprint: "fp-series", idempotencyKey: "series-1" }));
    const again = await catalog.create(goods({ schedule: SERIES, fingerprint: "fp-series", idempotencyKey: "series-1" }));
    expect(again.replayed).toBe(true);
    expect([again.checkout.id, again.checkout.schedule]).toEqual([first.checkout.id, first.checkout.schedule]);
  });

  it("refuses periods outside 2 to 24 and an interval outside 1 to 366 days, naming each field", async () => {
    for (const terms of [
      { periods: 1, intervalDays: 0 },
      { periods: 25, intervalDays: 367 },
      { periods: 2.5, intervalDays: 1.5 },
    ]) {
      expect(await refusedFields(catalog.create(goods({ schedule: terms })))).toEqual(["schedule_interval_days", "schedule_periods"]);
    }
    for (const terms of [
      { periods: 2, intervalDays: 1 },
      { periods: 24, intervalDays: 366 },
    ]) {
      expect(await refusedFields(catalog.create(goods({ schedule: terms })))).toEqual([]);
    }
  });

  it("refuses a series with escrow, an escrow twin, a package or gated content, naming schedule_periods", async () => {
    const relay = { fulfillment: "relay", originUrl: "https://api.example.com/x", payloadJson: undefined } as Partial<CreateRequest>;
    for (const over of [{ escrow: ESCROW }, { escrowTwin: ESCROW }, { ...relay, maxDeliveries: 10 }]) {
      expect(await refusedFields(catalog.create(goods({ ...over, schedule: SERIES })))).toContain("schedule_periods");
    }
    const content = await refusedFields(
      catalog.create(goods({ contentJson: JSON.stringify({ author: "A. Writer" }), payloadJson: undefined, schedule: SERIES })),
    );
    expect(content).toContain("schedule_periods");
  });

  it("refuses a series of a seller with no payout wallet on Base (a series is charged there only)", async () => {
    const stellarOnly = new Catalog({
      db: ctx.database.db,
      payoutWallets: async () => [{ chainFamily: "stellar", address: "GBZXN7PIRZGNMHGA7MUUUF4GWPY5AYPV6LY4UV2GL6VJGIQRXFDNMADI", isDefault: true }],
    });
    expect(await refusedFields(stellarOnly.create(goods({ schedule: SERIES })))).toEqual(["pay_to"]);
  });

  it("the store refuses a series row that is also an escrow checkout (check constraint)", async () => {
    const { checkout } = await catalog.create(goods({ schedule: SERIES }));
    await expect(
      ctx.database.db
        .updateTable("checkouts" as never)
        .set({ escrow: JSON.stringify({ preset: "standard" }) } as never)
        .where("id" as never, "=", checkout.id as never)
        .execute(),
    ).rejects.toThrow(/checkouts_schedule_terms/);
  });

  it("the rpc takes CreateCheckoutRequest.schedule and answers Checkout.schedule and CheckoutSummary.schedule", async () => {
    const rpc = catalogRpc(catalog);
    const call = {} as CallContext;
    const req = create(catalogV1.CreateCheckoutRequestSchema, {
      accountId: "acct_series_rpc",
      actor: "key:sk_test_abcd",
      requestFingerprint: "fp-rpc",
      title: "Weekly digest",
      priceUsd: "1.00",
      payloadJson: "{}",
      schedule: { intervalDays: 7, periods: 4 },
    });
    const { checkout } = await rpc.createCheckout(req, call);
    expect([checkout?.schedule?.intervalDays, checkout?.schedule?.periods]).toEqual([7, 4]);
    const listed = await rpc.listCheckouts(create(catalogV1.ListCheckoutsRequestSchema, { accountId: "acct_series_rpc", pageSize: 10 }), call);
    expect((listed.checkouts ?? []).map((c) => [c.schedule?.intervalDays, c.schedule?.periods])).toEqual([[7, 4]]);
  });
}

describeOnEachDatabase("recurring series in the catalog", "catalog", scheduleContract);
