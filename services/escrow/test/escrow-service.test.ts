import { fromBinary } from "@bufbuild/protobuf";
import { accountActivityOf } from "@c402/account-events";
import { DatabaseBus, decodeEnvelope, enqueueOutboxRow, KafkaBus, type Bus, type Subscription } from "@c402/bus";
import { escrowEventsV1, escrowV1, EVENT_TYPES, TOPICS } from "@c402/contracts";
import { EmbeddedPostgres, openPostgres, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { createLogger } from "@c402/logging";
import { createClient, RpcServer, type ServiceClient } from "@c402/rpc";
import { describeWith, eventually, freshPostgresDatabase, infraAvailable, uniqueName } from "@c402/testkit";
import { createEscrowService, escrowSettingsOf } from "../src";
import { escrowEventRow } from "../src/events/escrow-events";
import type { EscrowDb } from "../src/store/escrow-store";

const EVM = "0x000000000000000000000000000000000000dEaD";
const SERVICE_EVM = "0x52908400098527886E0F7030069857D2E4169EE7";
const SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const { EscrowPolicy, EscrowPreset, ArbiterSource } = escrowV1;

/**
 * The escrow service as a host runs it (its migrations, its gRPC contract,
 * its outbox relay) on both stacks: account escrow settings kept in its
 * schema, each change recorded once as an escrow_settings.updated account
 * event on the bus; the terms an escrow checkout would freeze.
 */
function serviceContract(open: () => Promise<{ database: ServiceDatabase; bus: Bus; close(): Promise<void> }>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  let server: RpcServer;
  let client: ServiceClient<typeof escrowV1.EscrowService>;
  let stop: () => Promise<void>;
  let subscription: Subscription;
  const seen: ReturnType<typeof accountActivityOf>[] = [];

  beforeAll(async () => {
    ctx = await open();
    const module = await createEscrowService(
      { database: ctx.database, bus: ctx.bus, logger: createLogger({ service: "escrow-test", level: "silent" }) },
      {
        ...escrowSettingsOf({ defaultArbiterEvm: SERVICE_EVM.toLowerCase(), defaultArbiterSvm: undefined }),
        // The chain arbiter readiness reads: every wallet holds 1 ETH at 1 gwei.
        chain: { network: "eip155:84532", balanceOf: async () => 10n ** 18n, gasPrice: async () => 1_000_000_000n },
      },
    );
    server = new RpcServer();
    module.register(server);
    const port = await server.listen("127.0.0.1", 0);
    await module.start();
    server.serving();
    client = createClient(escrowV1.EscrowService, `127.0.0.1:${port}`);
    stop = () => module.stop();
    subscription = await ctx.bus.subscribe({
      topic: TOPICS.accountActivity,
      group: uniqueName("escrow-test"),
      handler: async (m) => {
        const activity = accountActivityOf(decodeEnvelope(m.value));
        if (activity.action === "escrow_settings.updated") seen.push(activity);
      },
    });
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await subscription?.stop();
    await server?.stop(1_000);
    await stop?.();
    await ctx?.close();
  });

  it("answers the defaults for an account that never set anything", async () => {
    const r = await client.getEscrowSettings({ accountId: newId("account") });
    expect(r.settings).toMatchObject({ policy: EscrowPolicy.SELLER_CHOICE, defaultPreset: EscrowPreset.STANDARD });
    expect(r.settings?.arbiterEvm).toBeUndefined();
    expect(r.settings?.updatedAt).toBeUndefined();
    expect(r.presets.map((p) => [p.preset, p.windows?.settleSeconds, p.windows?.holdSeconds, p.windows?.backstopSeconds])).toEqual([
      [EscrowPreset.INSTANT, 3_600, 86_400, 604_800],
      [EscrowPreset.STANDARD, 259_200, 604_800, 2_592_000],
      [EscrowPreset.SHIPPING, 1_209_600, 1_209_600, 5_184_000],
    ]);
  });

  it("changes the fields named and keeps the others; records each change once, on the bus; the same again records nothing", async () => {
    const accountId = newId("account");
    const first = await client.putEscrowSettings({
      accountId,
      policy: EscrowPolicy.ALWAYS,
      arbiterEvm: { address: EVM.toLowerCase() },
      arbiterSvm: { address: SOLANA },
      actor: "key:sk_test_abcd",
    });
    expect(first).toMatchObject({ changed: true, arbitersChanged: true, settings: { policy: EscrowPolicy.ALWAYS, arbiterEvm: EVM, arbiterSvm: SOLANA } });
    const second = await client.putEscrowSettings({ accountId, defaultPreset: EscrowPreset.SHIPPING, actor: "key:sk_test_abcd" });
    expect(second).toMatchObject({
      changed: true,
      arbitersChanged: false,
      settings: { policy: EscrowPolicy.ALWAYS, defaultPreset: EscrowPreset.SHIPPING, arbiterEvm: EVM },
    });
    const same = await client.putEscrowSettings({ accountId, arbiterEvm: { address: EVM }, actor: "session" });
    expect(same).toMatchObject({ changed: false, arbitersChanged: false });
    const cleared = await client.putEscrowSettings({ accountId, arbiterSvm: {}, actor: "session" });
    expect(cleared).toMatchObject({ changed: true, arbitersChanged: true });
    expect(cleared.settings?.arbiterSvm).toBeUndefined();
    expect((await client.getEscrowSettings({ accountId })).settings).toMatchObject({
      policy: EscrowPolicy.ALWAYS,
      defaultPreset: EscrowPreset.SHIPPING,
      arbiterEvm: EVM,
    });

    const mine = await eventually(
      () => seen.filter((a) => a.accountId === accountId),
      (got) => got.length >= 3,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(seen.filter((a) => a.accountId === accountId)).toHaveLength(3);
    expect(mine[0]).toMatchObject({
      objectId: accountId,
      actor: "key:sk_test_abcd",
      testMode: false,
      detail: {
        escrow_policy: "always",
        escrow_default_preset: "standard",
        escrow_arbiter_evm: EVM,
        escrow_arbiter_svm: SOLANA,
        before: { escrow_policy: "seller_choice", escrow_default_preset: "standard", escrow_arbiter_evm: null, escrow_arbiter_svm: null },
      },
    });
    expect(mine.map((a) => a.actor)).toEqual(["key:sk_test_abcd", "key:sk_test_abcd", "session"]);
  });

  it("refuses an arbiter its chain family would refuse, naming the field, and changes nothing", async () => {
    const accountId = newId("account");
    await expect(
      client.putEscrowSettings({ accountId, policy: EscrowPolicy.DISABLED, arbiterEvm: { address: SOLANA }, arbiterSvm: { address: EVM }, actor: "session" }),
    ).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [
        { field: "escrow_arbiter_evm", reason: expect.stringMatching(/EVM address/) },
        { field: "escrow_arbiter_svm", reason: expect.stringMatching(/Solana address/) },
      ],
    });
    expect((await client.getEscrowSettings({ accountId })).settings?.policy).toBe(EscrowPolicy.SELLER_CHOICE);
    // The contract refuses a preset that is not an account default, and a missing actor, before the service runs.
    await expect(client.putEscrowSettings({ accountId, defaultPreset: EscrowPreset.CUSTOM, actor: "session" })).rejects.toMatchObject({
      slug: "invalid-request",
    });
    await expect(client.putEscrowSettings({ accountId, actor: "" })).rejects.toMatchObject({ slug: "invalid-request" });
  });

  it("resolves terms: explicit, account, service arbiters; custom windows checked; a disabled policy refuses (409)", async () => {
    const accountId = newId("account");
    const bare = await client.resolveEscrowTerms({ accountId, forSubSeller: false });
    expect(bare.terms).toMatchObject({
      preset: EscrowPreset.STANDARD,
      windows: { settleSeconds: 259_200, holdSeconds: 604_800, backstopSeconds: 2_592_000 },
      rails: [
        { family: "evm", arbiter: SERVICE_EVM, source: ArbiterSource.SERVICE, offered: true },
        { family: "svm", source: ArbiterSource.UNSPECIFIED, offered: false },
      ],
    });
    await client.putEscrowSettings({ accountId, arbiterEvm: { address: EVM }, defaultPreset: EscrowPreset.INSTANT, actor: "session" });
    const custom = await client.resolveEscrowTerms({ accountId, holdSeconds: 7_200, forSubSeller: false });
    expect(custom.terms).toMatchObject({
      preset: EscrowPreset.CUSTOM,
      windows: { settleSeconds: 3_600, holdSeconds: 7_200 },
      rails: [{ arbiter: EVM, source: ArbiterSource.ACCOUNT }, {}],
    });
    await expect(
      client.resolveEscrowTerms({ accountId, settleSeconds: 60, backstopSeconds: 3_600, holdSeconds: 3_600, forSubSeller: true }),
    ).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [
        { field: "escrow_settle_window", reason: "must be at least 3600 seconds (1 hour)" },
        { field: "escrow_backstop_window", reason: expect.stringMatching(/greater than the hold window/) },
        { field: "arbiter_evm", reason: expect.stringMatching(/sub-seller/) },
      ],
    });
    await client.putEscrowSettings({ accountId, policy: EscrowPolicy.DISABLED, actor: "session" });
    await expect(client.resolveEscrowTerms({ accountId, forSubSeller: false })).rejects.toMatchObject({ slug: "conflict" });
  });

  it("answers each arbiter's readiness: the EVM one's balance read from the chain, the Solana statement, none without an arbiter", async () => {
    const accountId = newId("account");
    const none = await client.getArbiterReadiness({ accountId });
    expect([none.evm, none.svm]).toEqual([undefined, undefined]);
    await client.putEscrowSettings({ accountId, arbiterEvm: { address: EVM }, arbiterSvm: { address: SOLANA }, actor: "session" });
    const r = await client.getArbiterReadiness({ accountId });
    expect(r.evm).toMatchObject({ arbiter: EVM, escrowOffered: true, network: "eip155:84532", gasBalance: "1000000000000000000", rulingsAffordable: 5_000 });
    expect(r.svm).toMatchObject({ arbiter: SOLANA, escrowOffered: false, rulingsUseServiceGas: true, note: expect.stringMatching(/service's gas/) });
  });

  it("without an escrow contract and relayer, answers deposits unavailable (503), naming the settings, and knows no escrow", async () => {
    const paymentId = newId("payment");
    const deposit = client.deposit({
      paymentId,
      accountId: "acct_x",
      checkoutId: "esc_123456789012345678901234",
      network: "eip155:84532",
      testMode: false,
      terms: {
        buyer: SERVICE_EVM,
        seller: EVM,
        platform: "0x0000000000000000000000000000000000000000",
        feeTo: EVM,
        arbiter: SERVICE_EVM,
        amount: "1000000",
        platformAmount: "0",
        fee: "30000",
        preset: EscrowPreset.STANDARD,
        windows: { settleSeconds: 259_200, holdSeconds: 604_800, backstopSeconds: 2_592_000 },
        salt: `0x${"11".repeat(32)}`,
      },
      authorization: { validAfter: "0", validBefore: "9999999999", nonce: `0x${"22".repeat(32)}`, signature: `0x${"33".repeat(65)}` },
    });
    await expect(deposit).rejects.toMatchObject({ slug: "unavailable" });
    await expect(deposit).rejects.toThrow(/ESCROW_CONTRACT, ESCROW_RELAYER_KEY/);
    await expect(client.getEscrow({ paymentId })).rejects.toThrow(/No such escrow/);
  });

  it("writes an escrow event keyed by its payment on the escrow topic, with the fields the spec names", async () => {
    const paymentId = newId("payment");
    const row = escrowEventRow(
      "escrow.escalated",
      {
        paymentId,
        checkoutId: "esc_123456789012345678901234",
        accountId: "acct_x",
        state: "escalated",
        network: "eip155:84532",
        handoffId: null,
        preset: "standard",
        settleSeconds: 259_200,
        holdSeconds: 604_800,
        backstopSeconds: 2_592_000,
        arbiter: EVM,
        payer: SERVICE_EVM,
        total: 1_030_000n,
        depositedAt: new Date("2026-12-01T12:00:00Z"),
        deadline: new Date("2026-12-31T12:00:00Z"),
        testMode: false,
      },
      { txHash: `0x${"ab".repeat(32)}`, arbiterReadiness: { arbiter: EVM, family: "evm", gasBalance: null, rulingsAffordable: null, note: "not read" } },
    );
    const got: Uint8Array[] = [];
    const sub = await ctx.bus.subscribe({ topic: TOPICS.escrowEvents, group: uniqueName("escrow-events"), handler: async (m) => void got.push(m.value) });
    try {
      // As the deposit slice will: in the transaction of the change; the service's relay publishes it.
      await (ctx.database.db as EscrowDb).transaction().execute((trx) => enqueueOutboxRow(trx, row));
      const envelopes = await eventually(
        () => got.map(decodeEnvelope).filter((e) => e.aggregateId === paymentId),
        (e) => e.length === 1,
        30_000,
      );
      expect(envelopes[0]).toMatchObject({ type: EVENT_TYPES.escrowEscalated, accountId: "acct_x" });
      const event = fromBinary(escrowEventsV1.EscrowEscalatedSchema, envelopes[0]!.payload);
      expect(event.escrow).toMatchObject({ paymentId, checkoutId: "esc_123456789012345678901234", state: "escalated", accountId: "acct_x" });
      expect(event.escrow?.handoffId).toBeUndefined();
      expect(event.arbiterReadiness).toMatchObject({ arbiter: EVM, family: "evm", note: "not read" });
      expect(event.arbiterReadiness?.gasBalance).toBeUndefined();
    } finally {
      await sub.stop();
    }
  });
}

describe("the escrow service on the embedded stack", () => {
  serviceContract(async () => {
    const pg = await EmbeddedPostgres.open();
    const bus = await DatabaseBus.open(pg.forSchema("bus"));
    return {
      database: pg.forSchema("escrow"),
      bus,
      async close() {
        await bus.close();
        await pg.close();
      },
    };
  });
});

describeWith("postgres")("the escrow service on PostgreSQL and Kafka", () => {
  const kafka = infraAvailable("kafka");
  (kafka ? describe : describe.skip)("with a real broker", () => {
    serviceContract(async () => {
      const fresh = await freshPostgresDatabase();
      const database = openPostgres({ url: fresh.url, schema: "escrow" });
      const bus = new KafkaBus({ brokers: (kafka as string).split(","), clientId: "escrow-test" });
      return {
        database,
        bus,
        async close() {
          await bus.close();
          await database.close();
          await fresh.drop();
        },
      };
    });
  });
});
