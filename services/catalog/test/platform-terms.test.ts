import { create } from "@bufbuild/protobuf";
import { catalogV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import type { CallContext } from "@c402/rpc";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog, type CreateRequest } from "../src/domain/catalog";
import { accountTermsOf, NOT_A_PLATFORM, type AccountPlatform } from "../src/domain/checkout-rules";
import { catalogRpc } from "../src/rpc/catalog-rpc";
import { snapshotOf } from "../src/store/catalog-store";

const OWN_WALLET = "0x1111111111111111111111111111111111111111";
const SUB_SELLER = "0x2222222222222222222222222222222222222222";
const FEE_WALLET = "0x3333333333333333333333333333333333333333";
const PLATFORM_SOLANA = "8bW6rX9b1Rr1M7LJ8KGVq3qVt7bQ2n4hWz3g6xXKpFfS";
const LATER_SOLANA = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T";
const PLATFORM: AccountPlatform = { platformAccount: true, platformFeeBps: 300, platformFeeTo: FEE_WALLET, soldBy: "market" };

const base = (over: Partial<CreateRequest> = {}): CreateRequest => ({
  accountId: "acct_platform",
  actor: "key:sk_test_abcd",
  fingerprint: "fp",
  title: "Forecast",
  priceUsd: "1.00",
  offer: {},
  createdWithLiveKey: false,
  ...over,
});

describe("accountTermsOf: the spec's platform rules at create", () => {
  const sent = (over: Partial<Parameters<typeof accountTermsOf>[0]> = {}) => ({
    platformFeeBps: undefined,
    inheritAccountPayouts: undefined,
    payTo: null,
    ...over,
  });

  it("an ordinary seller: no cut, inherits its payout wallets, no sold_by", () => {
    expect(accountTermsOf(sent(), NOT_A_PLATFORM)).toEqual({ platformFeeBps: 0, platformFeeTo: null, soldBy: null, inheritAccountPayouts: true });
    expect(accountTermsOf(sent({ platformFeeBps: 0 }), NOT_A_PLATFORM).platformFeeBps).toBe(0);
  });

  it("a platform: the standing fee by default, the per-create fee always wins (0 included), sold_by named", () => {
    expect(accountTermsOf(sent({ payTo: SUB_SELLER }), PLATFORM)).toEqual({
      platformFeeBps: 300,
      platformFeeTo: FEE_WALLET,
      soldBy: "market",
      inheritAccountPayouts: false,
    });
    expect(accountTermsOf(sent({ payTo: SUB_SELLER, platformFeeBps: 2000 }), PLATFORM)).toMatchObject({ platformFeeBps: 2000, platformFeeTo: FEE_WALLET });
    // No cut: no fee wallet on the checkout, but the platform still sold it.
    expect(accountTermsOf(sent({ payTo: SUB_SELLER, platformFeeBps: 0 }), PLATFORM)).toEqual({
      platformFeeBps: 0,
      platformFeeTo: null,
      soldBy: "market",
      inheritAccountPayouts: false,
    });
  });

  it("refuses a fee outside platform mode or without a fee wallet, and a platform's create without pay_to unless it inherits", () => {
    expect(() => accountTermsOf(sent({ platformFeeBps: 1 }), NOT_A_PLATFORM)).toThrow(
      expect.objectContaining({ errors: [expect.objectContaining({ field: "platform_fee_bps" })] }),
    );
    expect(() => accountTermsOf(sent({ payTo: SUB_SELLER }), { ...PLATFORM, platformFeeTo: null })).toThrow(
      expect.objectContaining({ errors: [expect.objectContaining({ field: "platform_fee_bps" })] }),
    );
    expect(() => accountTermsOf(sent(), PLATFORM)).toThrow(
      expect.objectContaining({ errors: [{ field: "pay_to", reason: expect.stringContaining("platform account") }] }),
    );
    expect(() => accountTermsOf(sent({ inheritAccountPayouts: false }), NOT_A_PLATFORM)).toThrow(
      expect.objectContaining({ errors: [{ field: "pay_to", reason: "is required when inherit_account_payouts is false" }] }),
    );
    expect(accountTermsOf(sent({ inheritAccountPayouts: true }), PLATFORM).inheritAccountPayouts).toBe(true);
  });
});

function platformTermsContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let account: AccountPlatform = PLATFORM;
  let wallets = [{ chainFamily: "eip155", address: OWN_WALLET, isDefault: true }];
  let walletReads = 0;
  let catalog: Catalog;
  /** The checkout as catalog's gRPC contract answers it (what payments and the gateway read). */
  const readOverRpc = (checkoutId: string) => catalogRpc(catalog).getCheckout(create(catalogV1.GetCheckoutRequestSchema, { checkoutId }), {} as CallContext);

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, catalogMigrations);
    catalog = new Catalog({
      db: ctx.database.db,
      payoutWallets: async () => {
        walletReads += 1;
        return wallets;
      },
      platform: async () => account,
    });
  });
  afterAll(() => ctx.close());

  it("freezes the account's terms on the checkout: a later change of the account leaves it alone", async () => {
    account = PLATFORM;
    const { checkout } = await catalog.create(base({ payTo: SUB_SELLER }));
    expect(checkout).toMatchObject({
      pay_to: SUB_SELLER,
      platform_fee_bps: 300,
      platform_fee_to: FEE_WALLET,
      sold_by: "market",
      inherit_account_payouts: false,
    });
    account = { ...PLATFORM, platformFeeBps: 50, platformFeeTo: SUB_SELLER };
    expect(await catalog.get(checkout.id)).toMatchObject({ platform_fee_bps: 300, platform_fee_to: FEE_WALLET, sold_by: "market" });
    // The idempotency snapshot carries the terms, so a replay answers them too.
    expect(snapshotOf(checkout)).toMatchObject({ platform_fee_to: FEE_WALLET, sold_by: "market" });
  });

  describe("the platform's Solana fee wallet", () => {
    const withSolana = (address: string, isDefault = true) => [
      { chainFamily: "eip155", address: OWN_WALLET, isDefault: true },
      { chainFamily: "solana", address, isDefault },
    ];

    it("is the platform's standing Solana wallet, frozen at create and returned on every read; a later wallet change leaves it", async () => {
      account = PLATFORM;
      wallets = [...withSolana(PLATFORM_SOLANA), { chainFamily: "solana", address: LATER_SOLANA, isDefault: false }];
      const { checkout } = await catalog.create(base({ payTo: SUB_SELLER }));
      // Only the fee wallets: a pay_to sent is the checkout's only payout rail.
      expect(checkout).toMatchObject({ platform_fee_to: FEE_WALLET, platform_fee_rails: { solana: PLATFORM_SOLANA }, payout_rails: {} });
      wallets = withSolana(LATER_SOLANA);
      expect(await catalog.get(checkout.id)).toMatchObject({ platform_fee_rails: { solana: PLATFORM_SOLANA } });
      const { checkout: wire } = await readOverRpc(checkout.id);
      expect((wire?.settings?.platformFeeRails ?? []).map(({ chainFamily, address }) => ({ chainFamily, address }))).toEqual([
        { chainFamily: "eip155", address: FEE_WALLET },
        { chainFamily: "solana", address: PLATFORM_SOLANA },
      ]);
      expect((wire?.payoutRails ?? []).map((r) => r.chainFamily)).toEqual(["eip155"]);
    });

    it("an idempotent replay answers the frozen wallet, not the standing one", async () => {
      account = PLATFORM;
      wallets = withSolana(PLATFORM_SOLANA);
      const first = await catalog.create(base({ payTo: SUB_SELLER, idempotencyKey: "fee-rails-replay" }));
      wallets = withSolana(LATER_SOLANA);
      const replay = await catalog.create(base({ payTo: SUB_SELLER, idempotencyKey: "fee-rails-replay" }));
      expect(replay).toMatchObject({ replayed: true, checkout: { id: first.checkout.id, platform_fee_rails: { solana: PLATFORM_SOLANA } } });
    });

    it("a platform without a Solana wallet: its checkouts carry the EVM fee wallet only", async () => {
      account = PLATFORM;
      wallets = [{ chainFamily: "eip155", address: OWN_WALLET, isDefault: true }];
      const { checkout } = await catalog.create(base({ payTo: SUB_SELLER }));
      expect(checkout).toMatchObject({ platform_fee_to: FEE_WALLET, platform_fee_rails: {} });
      const { checkout: wire } = await readOverRpc(checkout.id);
      expect((wire?.settings?.platformFeeRails ?? []).map((r) => r.chainFamily)).toEqual(["eip155"]);
    });

    it("no cut, no fee wallets: and the platform's wallets are not asked for a create that names pay_to", async () => {
      account = PLATFORM;
      wallets = withSolana(PLATFORM_SOLANA);
      const reads = walletReads;
      const { checkout } = await catalog.create(base({ payTo: SUB_SELLER, platformFeeBps: 0 }));
      expect(checkout).toMatchObject({ platform_fee_to: null, platform_fee_rails: {} });
      expect(walletReads).toBe(reads);
      const { checkout: wire } = await readOverRpc(checkout.id);
      expect(wire?.settings?.platformFeeRails).toEqual([]);
    });

    it("a platform inheriting its own payouts: the same Solana wallet is its payout rail and its fee wallet", async () => {
      account = PLATFORM;
      wallets = withSolana(PLATFORM_SOLANA);
      const { checkout } = await catalog.create(base({ inheritAccountPayouts: true }));
      expect(checkout).toMatchObject({ pay_to: OWN_WALLET, payout_rails: { solana: PLATFORM_SOLANA }, platform_fee_rails: { solana: PLATFORM_SOLANA } });
    });
  });

  it("an ordinary seller's checkout carries no platform terms", async () => {
    account = NOT_A_PLATFORM;
    wallets = [{ chainFamily: "eip155", address: OWN_WALLET, isDefault: true }];
    const { checkout } = await catalog.create(base());
    expect(checkout).toMatchObject({ pay_to: OWN_WALLET, platform_fee_bps: 0, platform_fee_to: null, sold_by: null, inherit_account_payouts: true });
    await expect(catalog.create(base({ platformFeeBps: 100 }))).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [expect.objectContaining({ field: "platform_fee_bps" })],
    });
  });
}

describeOnEachDatabase("platform terms at create", "catalog", platformTermsContract);
