import { create } from "@bufbuild/protobuf";
import { identityV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import { newId } from "@c402/ids";
import type { CallContext } from "@c402/rpc";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { identityMigrations } from "../src";
import { listAccountEvents } from "../src/domain/account-events";
import { Identity } from "../src/domain/identity";
import { NOT_A_PLATFORM, Platforms, type PlatformSettings } from "../src/domain/platform";
import { Profiles } from "../src/domain/profile";
import { identityRpc } from "../src/rpc/identity-rpc";
import { identityStore, type IdentityDb } from "../src/store/identity-store";
import { OAuthServer } from "../src/domain/oauth";

const FEE_WALLET = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4";

/** Platform mode (GET and PUT /v1/account/platform) on identity's domain and store, against a real database. */
function platformContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let db: IdentityDb;
  let platforms: Platforms;
  let clock = new Date("2026-11-23T10:00:00.000Z");
  const ACTOR = "key:sk_test_abcd";

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, identityMigrations);
    db = ctx.database.db as IdentityDb;
    platforms = new Platforms(db, () => clock);
  });
  afterAll(() => ctx.close());

  async function newAccount(): Promise<string> {
    const id = newId("account");
    await identityStore.insertAccount(db, { id, created_at: clock });
    return id;
  }
  const events = (accountId: string) => listAccountEvents(db, accountId, { size: 1000, actionPrefix: "platform." });
  const settings = (s: Partial<PlatformSettings>): PlatformSettings => ({ ...NOT_A_PLATFORM, ...s });

  it("an account is not a platform until it says so; an unknown account is not found", async () => {
    expect(await platforms.get(await newAccount())).toEqual(NOT_A_PLATFORM);
    await expect(platforms.get(newId("account"))).rejects.toMatchObject({ slug: "not-found" });
    await expect(platforms.put(newId("account"), settings({ platformAccount: true }), ACTOR)).rejects.toMatchObject({ slug: "not-found" });
  });

  it("a PUT replaces the settings, stores the fee wallet checksummed and records one event per change", async () => {
    const accountId = await newAccount();
    const put = await platforms.put(accountId, settings({ platformAccount: true, platformFeeBps: 250, platformFeeTo: FEE_WALLET.toLowerCase() }), ACTOR);
    expect(put).toEqual({ settings: { platformAccount: true, platformFeeBps: 250, platformFeeTo: FEE_WALLET }, changed: true });
    expect(await platforms.get(accountId)).toEqual(put.settings);
    // The same settings again change nothing and record nothing.
    expect((await platforms.put(accountId, settings({ platformAccount: true, platformFeeBps: 250, platformFeeTo: FEE_WALLET }), ACTOR)).changed).toBe(false);
    clock = new Date(clock.getTime() + 1000);
    // Leaving platform mode: the fee goes, the wallet may stay.
    await platforms.put(accountId, settings({ platformAccount: false, platformFeeBps: 0, platformFeeTo: FEE_WALLET }), "session");
    expect(await platforms.get(accountId)).toEqual({ platformAccount: false, platformFeeBps: 0, platformFeeTo: FEE_WALLET });
    expect((await events(accountId)).map((e) => ({ action: e.action, actor: e.actor, detail: e.detail }))).toEqual([
      { action: "platform.updated", actor: "session", detail: { platform_account: false, platform_fee_bps: 0, platform_fee_to: FEE_WALLET } },
      { action: "platform.updated", actor: ACTOR, detail: { platform_account: true, platform_fee_bps: 250, platform_fee_to: FEE_WALLET } },
    ]);
  });

  it("refuses every broken rule at once, naming each field, and changes nothing", async () => {
    const accountId = await newAccount();
    const cases: [Partial<PlatformSettings>, { field: string; reason: string }[]][] = [
      [
        { platformAccount: true, platformFeeBps: 2001, platformFeeTo: FEE_WALLET },
        [{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }],
      ],
      [{ platformAccount: true, platformFeeBps: -1, platformFeeTo: FEE_WALLET }, [{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }]],
      [{ platformAccount: true, platformFeeBps: 1.5, platformFeeTo: FEE_WALLET }, [{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }]],
      [
        { platformAccount: false, platformFeeBps: 100, platformFeeTo: FEE_WALLET },
        [{ field: "platform_fee_bps", reason: "above 0 needs platform_account: true" }],
      ],
      [
        { platformAccount: true, platformFeeBps: 100 },
        [{ field: "platform_fee_to", reason: expect.stringContaining("is required when platform_fee_bps is above 0") }],
      ],
      // A wrong EIP-55 checksum (one letter's case flipped), a short address, a Solana address.
      [
        { platformAccount: true, platformFeeBps: 100, platformFeeTo: FEE_WALLET.replace("B38D", "b38D") },
        [{ field: "platform_fee_to", reason: expect.stringContaining("EVM address") }],
      ],
      [{ platformAccount: true, platformFeeTo: "0x1234" }, [{ field: "platform_fee_to", reason: expect.stringContaining("EVM address") }]],
      [
        { platformAccount: true, platformFeeTo: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" },
        [{ field: "platform_fee_to", reason: expect.stringContaining("EVM address") }],
      ],
      [
        { platformAccount: false, platformFeeBps: 5000, platformFeeTo: "nope" },
        [
          { field: "platform_fee_bps", reason: expect.any(String) },
          { field: "platform_fee_to", reason: expect.any(String) },
        ],
      ],
    ];
    for (const [input, errors] of cases) {
      await expect(platforms.put(accountId, settings(input), ACTOR)).rejects.toMatchObject({ slug: "invalid-request", errors });
    }
    expect(await platforms.get(accountId)).toEqual(NOT_A_PLATFORM);
    expect(await events(accountId)).toEqual([]);
  });

  it("the database itself refuses a fee without a platform and a wallet", async () => {
    const accountId = await newAccount();
    await expect(
      db
        .insertInto("platform_settings")
        .values({ account_id: accountId, platform_account: false, platform_fee_bps: 10, platform_fee_to: null, updated_at: clock })
        .execute(),
    ).rejects.toThrow(/platform_settings_fee_wallet/);
  });

  it("over RPC: sold_by is the slug, else the account id, and only for a platform", async () => {
    const accountId = await newAccount();
    const rpc = identityRpc(
      new Identity(db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: 600 }),
      db,
      new OAuthServer(db, { baseUrl: "http://127.0.0.1:4020" }),
      new Profiles(db, () => clock),
      platforms,
    );
    const call = {} as CallContext;
    const get = () => rpc.getPlatformSettings(create(identityV1.GetPlatformSettingsRequestSchema, { accountId }), call);
    const before = await get();
    expect(before).toMatchObject({ settings: { platformAccount: false, platformFeeBps: 0 }, soldBy: "" });
    expect(before.settings?.platformFeeTo).toBeUndefined();
    const put = await rpc.putPlatformSettings(
      create(identityV1.PutPlatformSettingsRequestSchema, {
        accountId,
        platformAccount: true,
        platformFeeBps: 300,
        platformFeeTo: FEE_WALLET,
        actor: "wallet",
      }),
      call,
    );
    expect(put).toMatchObject({ settings: { platformAccount: true, platformFeeBps: 300, platformFeeTo: FEE_WALLET }, changed: true });
    expect((await get()).soldBy).toBe(accountId);
    const slug = `market-${Date.now().toString(36)}`;
    await new Profiles(db, () => clock).update(accountId, { set: { slug }, clear: [] }, "wallet");
    expect((await get()).soldBy).toBe(slug);
    await expect(
      rpc.putPlatformSettings(
        create(identityV1.PutPlatformSettingsRequestSchema, { accountId, platformAccount: true, platformFeeBps: 1, actor: "nobody" }),
        call,
      ),
    ).rejects.toMatchObject({ slug: "invalid-request", errors: [{ field: "actor" }] });
  });
}

describeOnEachDatabase("platform mode", "identity", platformContract);
