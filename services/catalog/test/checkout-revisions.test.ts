import { create } from "@bufbuild/protobuf";
import { catalogV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import type { CallContext } from "@c402/rpc";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import { catalogRpc } from "../src/rpc/catalog-rpc";
import { catalogStore, type CatalogDb } from "../src/store/catalog-store";
import { createRequest } from "./support/create-request";

const WALLET = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4";
const ACTOR = "key:sk_test_abcd";
const { OPEN, PAID, EXPIRED, VOID } = catalogV1.CheckoutStatus;

/**
 * GetCheckout for a caller holding a revision (ADR 14): the record is left
 * out while that revision is current, the status never is, and every change
 * to the record, whatever made it, gives it a new revision.
 */
function checkoutRevisionsContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let db: CatalogDb;
  let catalog: Catalog;
  let clock = new Date("2026-11-27T10:00:00.000Z");
  const rpc = () => catalogRpc(catalog, () => clock);
  const call = {} as CallContext;
  const get = (checkoutId: string, knownRevision?: string, accountId?: string) =>
    rpc().getCheckout(
      create(catalogV1.GetCheckoutRequestSchema, {
        checkoutId,
        ...(knownRevision !== undefined ? { knownRevision } : {}),
        ...(accountId !== undefined ? { accountId } : {}),
      }),
      call,
    );

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, catalogMigrations);
    db = ctx.database.db as CatalogDb;
    catalog = new Catalog({ db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }], now: () => clock });
  });
  afterAll(() => ctx.close());

  async function created(over: Partial<CreateRequest> = {}) {
    const { checkout } = await catalog.create(createRequest({ payloadJson: '{"temp_c":22}', ...over }));
    return checkout;
  }

  it("answers the whole checkout with its revision, then only the revision and status while it is current", async () => {
    const c = await created();
    const first = await get(c.id);
    expect(first.checkout?.payloadJson).toBe('{"temp_c":22}');
    expect(first.revision).toMatch(/^\d+$/);
    expect(first.status).toBe(OPEN);
    const again = await get(c.id, first.revision);
    expect(again.checkout).toBeUndefined();
    expect([again.revision, again.status]).toEqual([first.revision, OPEN]);
  });

  it("answers the whole checkout again after any change to it: a patch, going live, a sale, a void", async () => {
    const c = await created({ reusable: false });
    let held = (await get(c.id)).revision;
    const changes: [string, () => Promise<unknown>, (r: Awaited<ReturnType<typeof get>>) => unknown, unknown][] = [
      ["patch", () => catalog.update("acct_a", c.id, { title: "Weather now", offer: {}, clear: [] }, ACTOR), (r) => r.checkout?.title, "Weather now"],
      ["go-live", () => catalog.goLive("acct_a", c.id, ACTOR), (r) => r.checkout?.armed, true],
      ["sale", () => catalogStore.markPaid(db, c.id), (r) => [r.checkout?.status, r.status], [PAID, PAID]],
      ["void", () => catalog.void("acct_a", c.id, ACTOR), (r) => [r.checkout?.status, r.status], [VOID, VOID]],
    ];
    for (const [change, make, seen, expected] of changes) {
      await make();
      const r = await get(c.id, held);
      expect([change, r.revision === held, seen(r)]).toEqual([change, false, expected]);
      held = r.revision;
      // The new revision is current until the next change.
      expect((await get(c.id, held)).checkout).toBeUndefined();
    }
  });

  it("answers a checkout expired at the revision the caller holds: the status moves with the clock, not with the record", async () => {
    const c = await created({ expiresInMinutes: 5n });
    const held = (await get(c.id)).revision;
    clock = new Date(clock.getTime() + 5 * 60_000);
    const r = await get(c.id, held);
    expect([r.checkout, r.revision, r.status]).toEqual([undefined, held, EXPIRED]);
  });

  it("answers no checkout of another account, nor one that is not there, whatever revision is named", async () => {
    const c = await created();
    const held = (await get(c.id)).revision;
    await expect(get(c.id, held, "acct_b")).rejects.toMatchObject({ slug: "not-found" });
    await expect(get(c.id, undefined, "acct_b")).rejects.toMatchObject({ slug: "not-found" });
    await expect(get("chk_missing", held)).rejects.toMatchObject({ slug: "not-found" });
    await expect(get("not an id\u0000", held)).rejects.toMatchObject({ slug: "not-found" });
    // A revision that never was this checkout's is not current: the whole record comes back.
    expect((await get(c.id, "1")).checkout?.id).toBe(c.id);
  });
}

describeOnEachDatabase("checkout revisions", "catalog", checkoutRevisionsContract);
