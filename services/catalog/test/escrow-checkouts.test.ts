import { migrate } from "@c402/db";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog, type CreateRequest, type OriginRegistry } from "../src/domain/catalog";
import type { EscrowTermsInput } from "../src/domain/escrow-rules";
import { checkoutFromSnapshot, snapshotOf } from "../src/store/catalog-store";
import { activityOf } from "./support/outbox-activity";

/**
 * Escrow checkouts in the catalog (ADR 19): the esc_ id and the frozen terms,
 * the escrow twin written with its plain checkout and linked both ways, the
 * idempotent create of either, and the rules that need the checkout itself.
 */

const WALLET = "0x1111111111111111111111111111111111111111";
const ARBITER = "0x2222222222222222222222222222222222222222";
const TERMS: EscrowTermsInput = { preset: "standard", settleSeconds: 259_200, holdSeconds: 604_800, backstopSeconds: 2_592_000, arbiterEvm: ARBITER };
const STORED = { preset: "standard", settle_seconds: 259_200, hold_seconds: 604_800, backstop_seconds: 2_592_000, arbiter_evm: ARBITER, arbiter_svm: null };

const goods = (over: Partial<CreateRequest> = {}): CreateRequest => ({
  accountId: "acct_maker",
  actor: "key:sk_test_abcd",
  fingerprint: `fp-${Math.random()}`,
  title: "Hand-made chair",
  priceUsd: "120.00",
  offer: {},
  createdWithLiveKey: false,
  payloadJson: JSON.stringify({ order: "ships in 5 days" }),
  ...over,
});

/** The fields a create is refused on (none: it was accepted). */
const refusedFields = (p: Promise<unknown>) =>
  p.then(
    () => [],
    (err: { errors?: { field: string }[] }) => (err.errors ?? []).map((e) => e.field),
  );

function escrowContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let catalog: Catalog;
  const registered: string[] = [];
  const forgotten: string[] = [];
  let refuseSecond = false;
  const origins: OriginRegistry = {
    async register(req) {
      if (refuseSecond && registered.length === 1) throw new Error("fulfillment is down");
      registered.push(req.checkoutId);
      return req.origin.url;
    },
    async forget(checkoutId) {
      forgotten.push(checkoutId);
    },
    liabilities: async () => ({ liveKeys: 0, callsUnspent: 0n, unearnedAtomic: 0n }),
  };

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, catalogMigrations);
    catalog = new Catalog({ db: ctx.database.db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }], origins });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    registered.length = 0;
    forgotten.length = 0;
    refuseSecond = false;
  });

  it("an escrow checkout gets an esc_ id and keeps its terms; get, list and a snapshot answer them", async () => {
    const { checkout } = await catalog.create(goods({ escrow: TERMS }));
    expect(checkout.id).toMatch(/^esc_[0-9A-Za-z]{24}$/);
    expect([checkout.escrow, checkout.escrow_twin_id]).toEqual([STORED, null]);
    expect((await catalog.get(checkout.id)).escrow).toEqual(STORED);
    const listed = await catalog.list("acct_maker", false, { size: 100 });
    expect(listed.find((c) => c.id === checkout.id)).toMatchObject({ escrow: STORED, escrow_twin_id: null });
    expect(checkoutFromSnapshot(snapshotOf(checkout)).escrow).toEqual(STORED);
    // A snapshot taken before escrow checkouts existed reads as a plain checkout.
    const { escrow: _e, escrow_twin_id: _t, ...older } = snapshotOf(checkout);
    expect(checkoutFromSnapshot(older)).toMatchObject({ escrow: null, escrow_twin_id: null });
  });

  it("an escrow twin is written with its plain checkout, each naming the other, with one created event each", async () => {
    const { checkout } = await catalog.create(goods({ escrowTwin: TERMS }));
    expect(checkout.id).toMatch(/^chk_/);
    expect(checkout.escrow).toBeNull();
    const twinId = checkout.escrow_twin_id ?? "";
    expect(twinId).toMatch(/^esc_/);
    const twin = await catalog.get(twinId);
    expect(twin).toMatchObject({ escrow: STORED, escrow_twin_id: checkout.id, title: checkout.title, price_atomic: checkout.price_atomic, pay_to: WALLET });
    for (const id of [checkout.id, twinId]) expect((await activityOf(ctx.database.db, id)).map((e) => e.action)).toEqual(["checkout.created"]);
  });

  it("a checkout and its escrow twin go live together, whichever is armed", async () => {
    for (const side of ["plain", "twin"] as const) {
      const { checkout } = await catalog.create(goods({ escrowTwin: TERMS }));
      const twinId = checkout.escrow_twin_id ?? "";
      expect((await catalog.get(twinId)).armed).toBe(false);
      const armed = await catalog.goLive("acct_maker", side === "plain" ? checkout.id : twinId, "key:sk_test_abcd");
      expect(armed.alreadyLive).toBe(false);
      expect([(await catalog.get(checkout.id)).armed, (await catalog.get(twinId)).armed]).toEqual([true, true]);
      for (const id of [checkout.id, twinId])
        expect((await activityOf(ctx.database.db, id)).map((e) => e.action)).toEqual(["checkout.created", "checkout.live"]);
    }
  });

  it("a relay twin binds the origin under both ids, and forgets both when the create fails", async () => {
    const relay = { fulfillment: "relay", originUrl: "https://origin.example/goods", payloadJson: undefined as never };
    const { checkout } = await catalog.create(goods({ ...relay, escrowTwin: TERMS }));
    expect(registered).toEqual([checkout.id, checkout.escrow_twin_id]);
    registered.length = 0;
    refuseSecond = true;
    await expect(catalog.create(goods({ ...relay, escrowTwin: TERMS }))).rejects.toThrow("fulfillment is down");
    expect(forgotten).toHaveLength(2);
    expect(forgotten[0]).toBe(registered[0]);
  });

  it("an idempotent create answers the original, escrow checkout or plain one with its twin", async () => {
    for (const over of [{ escrow: TERMS }, { escrowTwin: TERMS }]) {
      const req = goods({ ...over, idempotencyKey: `k-${Object.keys(over)[0]}`, fingerprint: "same" });
      const first = await catalog.create(req);
      const again = await catalog.create(req);
      expect(again.replayed).toBe(true);
      expect([again.checkout.id, again.checkout.escrow, again.checkout.escrow_twin_id]).toEqual([
        first.checkout.id,
        first.checkout.escrow,
        first.checkout.escrow_twin_id,
      ]);
    }
    const listed = await catalog.list("acct_maker", false, { size: 1000 });
    const twins = listed.filter((c) => c.escrow_twin_id !== null);
    // Each twin pair is written once however often the create is repeated.
    expect(new Set(twins.map((c) => c.id)).size).toBe(twins.length);
  });

  it("refuses content (400), a fulfillment other than inline or relay, an escrow checkout with a twin, and terms without an EVM arbiter", async () => {
    await expect(catalog.create(goods({ escrow: TERMS, contentJson: "{}" }))).rejects.toMatchObject({ status: 400 });
    expect(await refusedFields(catalog.create(goods({ escrow: TERMS, fulfillment: "webhook", payloadJson: undefined as never })))).toContain("fulfillment");
    expect(await refusedFields(catalog.create(goods({ escrow: TERMS, escrowTwin: TERMS })))).toEqual(["escrow_offer"]);
    const { arbiterEvm: _a, ...noArbiter } = TERMS;
    expect(await refusedFields(catalog.create(goods({ escrow: noArbiter })))).toEqual(["arbiter_evm"]);
    expect(await refusedFields(catalog.create(goods({ escrow: { ...TERMS, preset: "eventually", settleSeconds: 0 } })))).toEqual([
      "escrow_preset",
      "escrow_settle_window",
    ]);
  });

  it("refuses an arbiter that is the checkout's own payout wallet, named or inherited, in any case", async () => {
    for (const over of [{ payTo: ARBITER }, { payTo: ARBITER.toUpperCase().replace("0X", "0x") }, {}]) {
      const terms = { ...TERMS, arbiterEvm: over.payTo === undefined ? WALLET : ARBITER };
      expect(await refusedFields(catalog.create(goods({ ...over, escrow: terms })))).toEqual(["arbiter_evm"]);
      expect(await refusedFields(catalog.create(goods({ ...over, escrowTwin: terms })))).toEqual(["arbiter_evm"]);
    }
  });

  it("refuses an escrow checkout of a seller with no payout wallet on Base (the only escrow rail)", async () => {
    const stellarOnly = new Catalog({
      db: ctx.database.db,
      payoutWallets: async () => [{ chainFamily: "stellar", address: "GBZXN7PIRZGNMHGA7MUUUF4GWPY5AYPV6LY4UV2GL6VJGIQRXFDNMADI", isDefault: true }],
    });
    expect(await refusedFields(stellarOnly.create(goods({ escrow: TERMS })))).toEqual(["pay_to"]);
  });
}

describeOnEachDatabase("escrow checkouts in the catalog", "catalog", escrowContract);
