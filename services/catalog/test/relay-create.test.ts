import { migrate } from "@c402/db";
import { ProblemError } from "@c402/problems";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog, type CreateRequest, type OriginRegistry } from "../src/domain/catalog";
import type { RelayOrigin } from "../src/domain/relay-rules";
import { catalogStore } from "../src/store/catalog-store";

const WALLET = "0x1111111111111111111111111111111111111111";
const SECRET = "one-off-Secret-9Qk";
/** Everything in a value as text: bigints as numbers, bytes (an outbox payload) as their characters. */
const textOf = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return String(v);
    const bytes = v as { type?: string; data?: number[] } | null;
    return bytes && bytes.type === "Buffer" && Array.isArray(bytes.data) ? Buffer.from(bytes.data).toString("latin1") : v;
  });
const base = (over: Partial<CreateRequest> = {}): CreateRequest => ({
  accountId: "acct_relay",
  actor: "key:sk_test_abcd",
  fingerprint: "fp-relay",
  title: "Forecast API",
  priceUsd: "0.10",
  offer: {},
  createdWithLiveKey: false,
  originUrl: "https://api.seller.example/forecast",
  ...over,
});

/**
 * Relay creates: the origin is registered with fulfillment under the id the
 * checkout then gets, before it is written; the catalog keeps how the origin
 * is called, never the credential; a refused origin leaves nothing behind.
 */
function relayContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let catalog: Catalog;
  const registered: { accountId: string; checkoutId: string; origin: RelayOrigin }[] = [];
  const forgotten: string[] = [];
  const liabilityAsks: string[] = [];
  let refuse: ProblemError | undefined;

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, catalogMigrations);
    const origins: OriginRegistry = {
      async register(req) {
        if (refuse) throw refuse;
        registered.push(req);
        return req.origin.url;
      },
      async forget(checkoutId) {
        forgotten.push(checkoutId);
      },
      async liabilities(checkoutId) {
        liabilityAsks.push(checkoutId);
        return { liveKeys: 2, callsUnspent: 15n, unearnedAtomic: 3_000_000n };
      },
    };
    catalog = new Catalog({ db: ctx.database.db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }], origins });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    registered.length = 0;
    forgotten.length = 0;
    refuse = undefined;
  });

  it("infers relay from origin_url, registers the origin under the checkout's id and stores no credential", async () => {
    const { checkout } = await catalog.create(
      base({ originMethod: "POST", originAuthType: "api_key", originAuthValue: SECRET, originAuthHeader: "X-Api-Key" }),
    );
    expect(checkout).toMatchObject({
      fulfillment: "relay",
      origin_url: "https://api.seller.example/forecast",
      origin_method: "POST",
      origin_auth_type: "api_key",
      origin_auth_header: "X-Api-Key",
      origin_key_id: null,
      origin_one_off: true,
      payload_json: null,
    });
    expect(registered).toEqual([
      {
        accountId: "acct_relay",
        checkoutId: checkout.id,
        origin: { url: checkout.origin_url, method: "POST", auth: { kind: "one_off", authType: "api_key", value: SECRET, headerName: "X-Api-Key" } },
      },
    ]);
    const stored = await catalogStore.findCheckout(ctx.database.db, checkout.id);
    expect(textOf(stored)).not.toContain(SECRET);
    const events = await ctx.database.db
      .selectFrom("outbox" as never)
      .selectAll()
      .execute();
    expect(events.length).toBeGreaterThan(0);
    expect(textOf(events)).not.toContain(SECRET);
  });

  it("names a stored origin key instead of a credential, and defaults the method to GET", async () => {
    const { checkout } = await catalog.create(base({ originAuthSecretId: "okey_Stored0000000000000000000" }));
    expect(checkout).toMatchObject({ origin_method: "GET", origin_key_id: "okey_Stored0000000000000000000", origin_one_off: false, origin_auth_type: null });
    expect(registered[0]?.origin.auth).toEqual({ kind: "origin_key", originKeyId: "okey_Stored0000000000000000000" });
  });

  it.each([
    [{ payloadJson: '{"a":1}' }, ["payload"]],
    [{ fulfillment: "inline" }, ["origin_url", "fulfillment"]],
    [{ originUrl: undefined, originMethod: "GET" }, ["origin_method"]],
    [{ originMethod: "TRACE" }, ["origin_method"]],
    [{ originAuthType: "bearer" }, ["origin_auth_value"]],
    [{ originAuthValue: "v" }, ["origin_auth_type"]],
    [{ originAuthType: "digest", originAuthValue: "v" }, ["origin_auth_type"]],
    [
      { originAuthSecretId: "okey_X", originAuthType: "bearer", originAuthValue: "v", originAuthHeader: "X" },
      ["origin_auth_type", "origin_auth_value", "origin_auth_header"],
    ],
    [{ fulfillment: "webhook" }, ["origin_url", "fulfillment"]],
    [{ fulfillment: "mcp", originUrl: undefined }, ["origin_url"]],
    [{ mcpTool: "forecast", fulfillment: "relay" }, ["mcp_tool", "fulfillment"]],
    [{ mcpTool: "forecast", originMethod: "GET" }, ["origin_method"]],
  ] as [Partial<CreateRequest>, string[]][])("refuses the contradiction %j, naming each field and registering nothing", async (over, fields) => {
    await expect(catalog.create(base(over))).rejects.toMatchObject({
      slug: "invalid-request",
      errors: fields.map((field) => expect.objectContaining({ field })),
    });
    expect(registered).toEqual([]);
  });

  it("a refused origin (fulfillment's 422) writes no checkout and releases the idempotency key", async () => {
    refuse = new ProblemError("invalid-request", {
      message: "bad",
      errors: [{ field: "origin_url", reason: "points to an address this service does not call" }],
    });
    const before = await ctx.database.db
      .selectFrom("checkouts")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    await expect(catalog.create(base({ idempotencyKey: "relay-key" }))).rejects.toMatchObject({ slug: "invalid-request" });
    const after = await ctx.database.db
      .selectFrom("checkouts")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    expect(after.n).toEqual(before.n);
    refuse = undefined;
    const retried = await catalog.create(base({ idempotencyKey: "relay-key" }));
    expect(retried.replayed).toBe(false);
  });

  it("forgets the registration when the checkout cannot be written after it", async () => {
    const { checkout } = await catalog.create(base());
    // The next create gets a fresh id, but its insert is made to fail: the same id as an existing row.
    const failing = new Catalog({
      db: ctx.database.db,
      payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }],
      origins: {
        liabilities: async () => ({ liveKeys: 0, callsUnspent: 0n, unearnedAtomic: 0n }),
        register: async (req) => {
          registered.push(req);
          await ctx.database.db
            .insertInto("checkouts")
            .values({
              ...(await catalog.get(checkout.id)),
              id: req.checkoutId,
              offer: "{}" as never,
              payout_rails: "{}" as never,
            })
            .execute();
          return req.origin.url;
        },
        forget: async (id) => {
          forgotten.push(id);
        },
      },
    });
    await expect(failing.create(base())).rejects.toThrow();
    expect(forgotten).toEqual([registered[1]?.checkoutId]);
  });

  it("sells a package: max_deliveries with package_ttl_days (default 30) on relay and mcp, read back as sent", async () => {
    const { checkout } = await catalog.create(base({ priceUsd: "5.00", maxDeliveries: 100 }));
    expect(checkout).toMatchObject({ max_deliveries: 100, package_ttl_days: 30 });
    const mcp = await catalog.create(base({ priceUsd: "1.00", mcpTool: "forecast", maxDeliveries: 10, packageTtlDays: 7 }));
    expect(mcp.checkout).toMatchObject({ fulfillment: "mcp", max_deliveries: 10, package_ttl_days: 7 });
    const single = await catalog.create(base());
    expect(single.checkout).toMatchObject({ max_deliveries: null, package_ttl_days: null });
  });

  it.each([
    [
      "a package under $1.00",
      { priceUsd: "0.99", maxDeliveries: 10 },
      [{ field: "price_usd", reason: "must be at least 1.00 for a package (max_deliveries)" }],
    ],
    [
      "a package of inline goods",
      { originUrl: undefined, payloadJson: "{}", priceUsd: "2.00", maxDeliveries: 10 },
      [{ field: "max_deliveries", reason: "packages are sold by relay and mcp checkouts, and fulfillment is inline" }],
    ],
    ["no calls", { priceUsd: "2.00", maxDeliveries: 0 }, [{ field: "max_deliveries", reason: "must be an integer from 1 to 1000000" }]],
    [
      "a lifetime of 0 days",
      { priceUsd: "2.00", maxDeliveries: 5, packageTtlDays: 0 },
      [{ field: "package_ttl_days", reason: "must be an integer from 1 to 3650" }],
    ],
    ["a lifetime without a package", { packageTtlDays: 30 }, [{ field: "package_ttl_days", reason: "applies only to a package (send max_deliveries)" }]],
  ])("refuses %s (422 naming the field), registering nothing", async (_what, over, errors) => {
    const err = await catalog.create(base(over as Partial<CreateRequest>)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect((err as ProblemError).errors).toEqual(errors);
    expect(registered).toEqual([]);
  });

  it("voiding a package checkout answers what its packages still owe (fulfillment's figures); a single-call checkout owes nothing and asks nobody", async () => {
    liabilityAsks.length = 0;
    const { checkout } = await catalog.create(base({ priceUsd: "3.00", maxDeliveries: 10 }));
    const voided = await catalog.void("acct_relay", checkout.id, "key:sk_test_abcd");
    expect(voided.liabilities).toEqual({ liveKeys: 2, callsUnspent: 15n, unearnedAtomic: 3_000_000n });
    const single = await catalog.create(base());
    expect((await catalog.void("acct_relay", single.checkout.id, "key:sk_test_abcd")).liabilities).toEqual({
      liveKeys: 0,
      callsUnspent: 0n,
      unearnedAtomic: 0n,
    });
    expect(liabilityAsks).toEqual([checkout.id]);
  });
}

describeOnEachDatabase("relay creates", "catalog", relayContract);
