import { create } from "@bufbuild/protobuf";
import { catalogV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import type { CallContext } from "@c402/rpc";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import type { AccountWallet } from "../src/domain/payout-rails";
import { catalogRpc } from "../src/rpc/catalog-rpc";
import type { CatalogDb } from "../src/store/catalog-store";
import { activityOf } from "./support/outbox-activity";

const EVM = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4";
const OTHER_EVM = "0xAb8483F64d9C6d1EcF9b849Ae677dD3315835cb2";
const SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOLANA_2 = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const STELLAR = "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H";
const ACTOR = "key:sk_test_abcd";

/** A checkout's payout rails: copied from the account's standing wallets at create, then added to (never replaced). */
function payoutRailsContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let db: CatalogDb;
  let catalog: Catalog;
  const clock = new Date("2026-11-23T10:00:00.000Z");
  /** The standing wallets identity would answer, per account; a test changes them to show checkouts keep their copy. */
  const standing = new Map<string, AccountWallet[]>();
  const asked: string[] = [];
  const rpc = () => catalogRpc(catalog, () => clock);
  const call = {} as CallContext;

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, catalogMigrations);
    db = ctx.database.db as CatalogDb;
    catalog = new Catalog({
      db,
      payoutWallets: async (accountId) => {
        asked.push(accountId);
        return standing.get(accountId) ?? [];
      },
      now: () => clock,
    });
  });
  afterAll(() => ctx.close());

  let n = 0;
  function account(wallets: AccountWallet[]): string {
    const id = `acct_rails_${++n}`;
    standing.set(id, wallets);
    return id;
  }
  const everyChain = (): AccountWallet[] => [
    { chainFamily: "eip155", address: OTHER_EVM, isDefault: false }, // a sign-in wallet that no longer stands
    { chainFamily: "eip155", address: EVM, isDefault: true },
    { chainFamily: "solana", address: SOLANA, isDefault: true },
    { chainFamily: "stellar", address: STELLAR, isDefault: true },
  ];
  const request = (accountId: string, over: Partial<CreateRequest> = {}): CreateRequest => ({
    accountId,
    actor: ACTOR,
    fingerprint: `fp_${Math.random()}`,
    title: "Tides",
    priceUsd: "0.10",
    offer: {},
    createdWithLiveKey: false,
    ...over,
  });
  const railsOverRpc = async (accountId: string, checkoutId: string) =>
    ((await rpc().getCheckout(create(catalogV1.GetCheckoutRequestSchema, { checkoutId, accountId }), call)).checkout?.payoutRails ?? []).map((r) => [
      r.chainFamily,
      r.address,
    ]);

  it("an omitted pay_to copies the account's standing wallet of every chain: EVM as pay_to, the others as rails", async () => {
    const accountId = account(everyChain());
    const { checkout } = await catalog.create(request(accountId));
    expect(checkout.pay_to).toBe(EVM);
    expect(checkout.payout_rails).toEqual({ solana: SOLANA, stellar: STELLAR });
    expect(await railsOverRpc(accountId, checkout.id)).toEqual([
      ["eip155", EVM],
      ["solana", SOLANA],
      ["stellar", STELLAR],
    ]);
  });

  it("a pay_to sent is the checkout's only rail, and identity is not asked", async () => {
    const accountId = account(everyChain());
    const before = asked.length;
    const { checkout } = await catalog.create(request(accountId, { payTo: OTHER_EVM.toLowerCase() }));
    expect(asked.length).toBe(before);
    expect(checkout).toMatchObject({ pay_to: OTHER_EVM, payout_rails: {} });
    expect(await railsOverRpc(accountId, checkout.id)).toEqual([["eip155", OTHER_EVM]]);
  });

  it("later changes to the account's wallets leave existing checkouts alone", async () => {
    const accountId = account(everyChain());
    const { checkout } = await catalog.create(request(accountId));
    standing.set(accountId, [
      { chainFamily: "eip155", address: OTHER_EVM, isDefault: true },
      { chainFamily: "solana", address: SOLANA_2, isDefault: true },
    ]);
    expect(await catalog.get(checkout.id, accountId)).toMatchObject({ pay_to: EVM, payout_rails: { solana: SOLANA, stellar: STELLAR } });
    const next = (await catalog.create(request(accountId))).checkout;
    expect(next).toMatchObject({ pay_to: OTHER_EVM, payout_rails: { solana: SOLANA_2 } });
  });

  it("adds a rail for a chain the checkout lacks, with one checkout.payouts_added event; lists and reads show it", async () => {
    const accountId = account([{ chainFamily: "eip155", address: EVM, isDefault: true }]);
    const { checkout } = await catalog.create(request(accountId));
    expect(checkout.payout_rails).toEqual({});
    const added = await catalog.addPayoutRail(accountId, checkout.id, "solana", SOLANA, ACTOR);
    expect(added).toMatchObject({ pay_to: EVM, payout_rails: { solana: SOLANA } });
    expect(await catalog.get(checkout.id)).toMatchObject({ payout_rails: { solana: SOLANA } });
    const listed = await rpc().listCheckouts(create(catalogV1.ListCheckoutsRequestSchema, { accountId, pageSize: 10 }), call);
    expect(listed.checkouts?.[0]?.payoutRails?.map((r) => [r.chainFamily, r.address])).toEqual([
      ["eip155", EVM],
      ["solana", SOLANA],
    ]);
    const events = await activityOf(db, checkout.id);
    expect(events.map((e) => e.action)).toEqual(["checkout.created", "checkout.payouts_added"]);
    expect(events[1]).toMatchObject({ accountId, actor: ACTOR, testMode: true, detail: { chain: "solana", address: SOLANA } });
  });

  it("is additive only: a chain that has an address (pay_to included) is 409 and nothing changes", async () => {
    const accountId = account(everyChain());
    const { checkout } = await catalog.create(request(accountId));
    await expect(catalog.addPayoutRail(accountId, checkout.id, "solana", SOLANA_2, ACTOR)).rejects.toMatchObject({
      slug: "conflict",
      extensions: { chain: "solana", address: SOLANA },
    });
    await expect(catalog.addPayoutRail(accountId, checkout.id, "eip155", OTHER_EVM, ACTOR)).rejects.toMatchObject({ slug: "conflict" });
    // The same address again is not "adding" either.
    await expect(catalog.addPayoutRail(accountId, checkout.id, "stellar", STELLAR, ACTOR)).rejects.toMatchObject({ slug: "conflict" });
    expect(await catalog.get(checkout.id)).toMatchObject({ pay_to: EVM, payout_rails: { solana: SOLANA, stellar: STELLAR } });
    expect((await activityOf(db, checkout.id)).map((e) => e.action)).toEqual(["checkout.created"]);
  });

  it("refuses a bad address (naming address) or chain (naming chain) with 422, a void checkout with 409, another account's with 404", async () => {
    const accountId = account([{ chainFamily: "eip155", address: EVM, isDefault: true }]);
    const { checkout } = await catalog.create(request(accountId, { createdWithLiveKey: true }));
    const badStellar = `${STELLAR.slice(0, 20)}${STELLAR[20] === "A" ? "B" : "A"}${STELLAR.slice(21)}`;
    await expect(catalog.addPayoutRail(accountId, checkout.id, "stellar", badStellar, ACTOR)).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "address", reason: expect.stringContaining("checksum") }],
    });
    await expect(catalog.addPayoutRail(accountId, checkout.id, "solana", EVM, ACTOR)).rejects.toMatchObject({
      errors: [{ field: "address", reason: expect.stringContaining("base58") }],
    });
    await expect(catalog.addPayoutRail(accountId, checkout.id, "tron", SOLANA, ACTOR)).rejects.toMatchObject({ errors: [{ field: "chain" }] });
    await expect(catalog.addPayoutRail("acct_someone_else", checkout.id, "solana", SOLANA, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
    await catalog.void(accountId, checkout.id, ACTOR);
    await expect(catalog.addPayoutRail(accountId, checkout.id, "solana", SOLANA, ACTOR)).rejects.toMatchObject({ slug: "conflict" });
    await catalog.restore(accountId, checkout.id, ACTOR);
    const added = await catalog.addPayoutRail(accountId, checkout.id, "solana", SOLANA, ACTOR);
    expect(added.payout_rails).toEqual({ solana: SOLANA });
    // An armed checkout's change is a live event.
    expect((await activityOf(db, checkout.id)).at(-1)).toMatchObject({ action: "checkout.payouts_added", testMode: false });
  });

  it("two adds racing for one chain: one wins, the other is 409", async () => {
    const accountId = account([{ chainFamily: "eip155", address: EVM, isDefault: true }]);
    const { checkout } = await catalog.create(request(accountId));
    const results = await Promise.allSettled([
      catalog.addPayoutRail(accountId, checkout.id, "solana", SOLANA, ACTOR),
      catalog.addPayoutRail(accountId, checkout.id, "solana", SOLANA_2, ACTOR),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason.slug)).toEqual(["conflict"]);
    expect((await activityOf(db, checkout.id)).filter((e) => e.action === "checkout.payouts_added")).toHaveLength(1);
  });

  it("an idempotent replay answers the rails the checkout was created with (from its snapshot)", async () => {
    const accountId = account(everyChain());
    const first = await catalog.create(request(accountId, { idempotencyKey: "rails-1", fingerprint: "fp-rails" }));
    const replay = await catalog.create(request(accountId, { idempotencyKey: "rails-1", fingerprint: "fp-rails" }));
    expect(replay).toMatchObject({ replayed: true, checkout: { id: first.checkout.id, payout_rails: { solana: SOLANA, stellar: STELLAR } } });
    const row = await db.selectFrom("checkouts").select("payout_rails").where("id", "=", first.checkout.id).executeTakeFirstOrThrow();
    expect(row.payout_rails).toEqual({ solana: SOLANA, stellar: STELLAR });
  });

  it("over RPC: AddPayoutRail answers the checkout with every rail", async () => {
    const accountId = account([{ chainFamily: "eip155", address: EVM, isDefault: true }]);
    const { checkout } = await catalog.create(request(accountId));
    const r = await rpc().addPayoutRail(
      create(catalogV1.AddPayoutRailRequestSchema, { accountId, checkoutId: checkout.id, chainFamily: "stellar", address: STELLAR, actor: "wallet" }),
      call,
    );
    expect(r.checkout?.payoutRails?.map((x) => [x.chainFamily, x.address])).toEqual([
      ["eip155", EVM],
      ["stellar", STELLAR],
    ]);
  });
}

describeOnEachDatabase("checkout payout rails", "catalog", payoutRailsContract);
