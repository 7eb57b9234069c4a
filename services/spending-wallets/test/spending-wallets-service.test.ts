import { accountActivityOf } from "@c402/account-events";
import { DatabaseBus, decodeEnvelope, KafkaBus, type Bus, type Subscription } from "@c402/bus";
import { spendingWalletsV1, TOPICS } from "@c402/contracts";
import { openPostgres, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { createCapturingLogger } from "@c402/logging";
import { ProblemError } from "@c402/problems";
import { createClient, RpcServer, type ServiceClient } from "@c402/rpc";
import type { ServiceModule } from "@c402/runtime";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { describeWith, eventually, freshPostgresDatabase, infraAvailable } from "@c402/testkit";
import { randomUUID } from "node:crypto";
import { getBase58Encoder } from "@solana/kit";
import { createSpendingWalletsService, SPENDING_WALLETS_SCHEMA, type PayEngine, type PayEnginePorts } from "../src";
import { WalletBook } from "../src/domain/wallet-book";
import { WalletEventLog } from "../src/domain/wallet-event-log";
import { fakeChain } from "./support/fake-chains";

const { Chain, CallerKind } = spendingWalletsV1;
const SESSION = { kind: CallerKind.SESSION, testMode: false, scope: "full", actor: "session" };
const LIVE_KEY = { kind: CallerKind.API_KEY, testMode: false, scope: "payments", actor: "key:sk_live_abcd" };
const TEST_KEY = { kind: CallerKind.API_KEY, testMode: true, scope: "full", actor: "key:sk_test_abcd" };
const READ_KEY = { kind: CallerKind.API_KEY, testMode: false, scope: "read_only", actor: "key:sk_live_read" };
const OAUTH = { kind: CallerKind.OAUTH, testMode: false, scope: "payments", actor: "oauth:ocl_agent" };

/** A pay engine standing in for X402PayEngine: it reserves 0.25 USD through the book's budget, signs with the vault, confirms. */
function fakeEngine(ports: PayEnginePorts): PayEngine {
  return {
    async pay(wallet, request) {
      const reservation = await ports.budget.reserve(wallet, {
        amount: 250_000n,
        url: request.url,
        network: wallet.network,
        payTo: "0x000000000000000000000000000000000000dEaD",
        actor: request.actor,
        ...(request.maxAtomic !== undefined ? { maxAtomic: request.maxAtomic } : {}),
        ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
      });
      if ("refused" in reservation) {
        await ports.events.refused(wallet, { actor: request.actor, reason: reservation.refused, url: request.url, amount: 250_000n });
        throw new ProblemError("forbidden", { message: `refused: ${reservation.refused}`, extensions: { reason: reservation.refused } });
      }
      const signature = await ports.vault.withKey(wallet, async (key) => `0x${key.length.toString(16).padStart(64, "0")}`);
      await ports.budget.confirm(reservation.reserved.spendId, { transaction: signature });
      return {
        paid: true,
        url: request.url,
        goods: { status: 200, contentType: "text/plain", body: new TextEncoder().encode("the goods") },
        receipt: {
          spendId: reservation.reserved.spendId,
          network: wallet.network,
          transaction: signature,
          payer: wallet.address,
          payTo: "0xdEaD",
          amount: 250_000n,
          paidAt: new Date(),
        },
      };
    },
  };
}

describeWith("postgres")("the spending wallets service", () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let busDatabase: ServiceDatabase;
  let bus: Bus;
  let module: ServiceModule;
  let server: RpcServer;
  let client: ServiceClient<typeof spendingWalletsV1.SpendingWalletsService>;
  let subscription: Subscription | undefined;
  /** The account events the outbox relay published on the bus. */
  const published: ReturnType<typeof accountActivityOf>[] = [];
  const base = fakeChain("base");
  const solana = fakeChain("solana");
  const captured = createCapturingLogger({ service: "spending-wallets-test", level: "debug" });
  /** Every problem any call answered (G25 scans them). */
  const problems: ProblemError[] = [];
  const expectProblem = async (call: Promise<unknown>, match: Record<string, unknown>) => {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProblemError);
    problems.push(err as ProblemError);
    expect(err).toMatchObject(match);
    return err as ProblemError;
  };

  beforeAll(async () => {
    fresh = await freshPostgresDatabase();
    database = openPostgres({ url: fresh.url, schema: SPENDING_WALLETS_SCHEMA });
    busDatabase = openPostgres({ url: fresh.url, schema: "bus" });
    const kafka = infraAvailable("kafka");
    bus = kafka
      ? new KafkaBus({ brokers: kafka.split(","), clientId: "spending-wallets-test", groupPrefix: `test-${randomUUID()}.` })
      : await DatabaseBus.open(busDatabase);
    module = await createSpendingWalletsService(
      { database, bus, logger: captured.logger },
      {
        keyring: parseKeyring(generateKeyringText("s1")),
        networks: [],
        rewrapIntervalMs: 60_000,
        outbound: { allowLoopback: true, allowAddresses: [] },
      },
      { chainReaders: [base, solana], rewrapSweep: false, payEngine: fakeEngine },
    );
    server = new RpcServer();
    module.register(server);
    const port = await server.listen("127.0.0.1", 0);
    await module.start();
    server.serving();
    client = createClient(spendingWalletsV1.SpendingWalletsService, `127.0.0.1:${port}`);
    subscription = await bus.subscribe({
      topic: TOPICS.accountActivity,
      group: `spending-wallets-test-${randomUUID()}`,
      handler: async (m) => {
        published.push(accountActivityOf(decodeEnvelope(m.value)));
      },
    });
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await subscription?.stop();
    await server?.stop(1_000);
    await module?.stop();
    await bus?.close();
    await busDatabase?.close();
    await database?.close();
    await fresh?.drop();
  });

  const db = () => database.db as import("../src/store/wallet-store").SpendingWalletsDb;
  const eventsOf = async (accountId: string, chain = Chain.BASE) => (await client.listEvents({ accountId, chain, pageSize: 200 })).events;
  const accountEventsOf = async (accountId: string) => {
    const rows = await db()
      .selectFrom("outbox" as never)
      .selectAll()
      .execute();
    return (rows as { payload: Uint8Array }[]).map((r) => accountActivityOf(decodeEnvelope(Buffer.from(r.payload)))).filter((a) => a.accountId === accountId);
  };

  it("creates a wallet for a session once per chain, answers its secret once, records created and the account event", async () => {
    const accountId = newId("account");
    const created = await client.createWallet({ accountId, chain: Chain.BASE, caller: SESSION });
    expect(created.wallet).toMatchObject({ chain: Chain.BASE, network: "eip155:84532", status: "active" });
    expect(created.wallet?.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(created.secret?.phrase.split(" ")).toHaveLength(12);
    expect(created.secret?.derivationPath).toBe("m/44'/60'/0'/0/0");
    expect(created.limits).toMatchObject({ perPaymentUsd: "1.000000", perDayUsd: "10.000000", spentTodayUsd: "0.000000", leftTodayUsd: "10.000000" });
    await expectProblem(client.createWallet({ accountId, chain: Chain.BASE, caller: SESSION }), { slug: "conflict", extensions: { reason: "wallet_exists" } });
    const sol = await client.createWallet({ accountId, chain: Chain.SOLANA, caller: SESSION });
    expect(getBase58Encoder().encode(sol.secret?.privateKey ?? "")).toHaveLength(64);
    expect((await client.listWallets({ accountId })).wallets.map((w) => w.chain).sort()).toEqual([Chain.BASE, Chain.SOLANA]);
    expect((await eventsOf(accountId)).map((e) => [e.kind, e.actor])).toEqual([["created", "session"]]);
    expect((await accountEventsOf(accountId)).map((a) => a.action).sort()).toEqual(["spending_wallet.created", "spending_wallet.created"]);
    // The relay publishes them on the bus (identity records them in the account's event log).
    const mine = () => published.filter((a) => a.accountId === accountId);
    await eventually(mine, (events) => events.length === 2);
    expect(mine()[0]).toMatchObject({
      action: "spending_wallet.created",
      actor: "session",
      detail: { network: expect.any(String), address: expect.any(String) },
    });
  });

  it("refuses every management call from a key or OAuth token with forbidden session_required", async () => {
    const accountId = newId("account");
    for (const caller of [LIVE_KEY, OAUTH]) {
      await expectProblem(client.createWallet({ accountId, chain: Chain.BASE, caller }), { slug: "forbidden", extensions: { reason: "session_required" } });
      await expectProblem(client.setLimits({ accountId, chain: Chain.BASE, perPaymentUsd: "1", perDayUsd: "2", caller }), {
        slug: "forbidden",
        extensions: { reason: "session_required" },
      });
      await expectProblem(client.getFunding({ accountId, chain: Chain.BASE, caller }), { slug: "forbidden", extensions: { reason: "session_required" } });
      await expectProblem(client.archive({ accountId, chain: Chain.BASE, caller }), { slug: "forbidden", extensions: { reason: "session_required" } });
    }
    expect((await client.listWallets({ accountId })).wallets).toEqual([]);
  });

  it("Reveal: a session gets the secret and revealed is recorded; a key or OAuth token is refused and recorded first", async () => {
    const accountId = newId("account");
    const created = await client.createWallet({ accountId, chain: Chain.BASE, caller: SESSION });
    await expectProblem(client.reveal({ accountId, chain: Chain.BASE, caller: LIVE_KEY }), {
      slug: "forbidden",
      extensions: { reason: "reveal_needs_session" },
    });
    await expectProblem(client.reveal({ accountId, chain: Chain.BASE, caller: OAUTH }), { slug: "forbidden", extensions: { reason: "reveal_needs_session" } });
    const revealed = await client.reveal({ accountId, chain: Chain.BASE, caller: SESSION });
    expect(revealed.secret).toEqual(created.secret);
    expect(revealed.wallet?.revealedBy).toBe("session");
    expect(revealed.wallet?.revealedAt).toBeDefined();
    expect((await eventsOf(accountId)).map((e) => [e.kind, e.actor, e.reason ?? null])).toEqual([
      ["revealed", "session", null],
      ["refused", "oauth:ocl_agent", "reveal_needs_session"],
      ["refused", "key:sk_live_abcd", "reveal_needs_session"],
      ["created", "session", null],
    ]);
    expect((await accountEventsOf(accountId)).map((a) => a.action)).toContain("spending_wallet.revealed");
    await expectProblem(client.reveal({ accountId: newId("account"), chain: Chain.BASE, caller: SESSION }), { slug: "not-found" });
  });

  it("limits: defaults before any wallet; SetLimits validates (422 naming the field) and records the account event", async () => {
    const accountId = newId("account");
    expect((await client.getLimits({ accountId, chain: Chain.SOLANA })).limits).toMatchObject({
      perPaymentUsd: "1.000000",
      perDayUsd: "10.000000",
      leftTodayUsd: "10.000000",
    });
    const bad = [
      [{ perPaymentUsd: "abc", perDayUsd: "10" }, "per_payment_usd"],
      [{ perPaymentUsd: "1.1234567", perDayUsd: "10" }, "per_payment_usd"],
      [{ perPaymentUsd: "0", perDayUsd: "10" }, "per_payment_usd"],
      [{ perPaymentUsd: "1", perDayUsd: "100000.000001" }, "per_day_usd"],
      [{ perPaymentUsd: "5", perDayUsd: "4" }, "per_payment_usd"],
      [{ perPaymentUsd: "-1", perDayUsd: "4" }, "per_payment_usd"],
    ] as const;
    for (const [input, field] of bad) {
      const problem = await expectProblem(client.setLimits({ accountId, chain: Chain.BASE, ...input, caller: SESSION }), { slug: "invalid-request" });
      expect(problem.errors?.map((e) => e.field)).toContain(field);
    }
    const set = await client.setLimits({ accountId, chain: Chain.BASE, perPaymentUsd: "2.5", perDayUsd: "100000", caller: SESSION });
    expect(set.limits).toMatchObject({ perPaymentUsd: "2.500000", perDayUsd: "100000.000000", leftTodayUsd: "100000.000000" });
    const resets = set.limits?.dayResetsAt;
    expect(resets && new Date(Number(resets.seconds) * 1000).toISOString()).toMatch(/T00:00:00.000Z$/);
    const [event] = await accountEventsOf(accountId);
    expect(event).toMatchObject({
      action: "spending_wallet.limits_updated",
      detail: { chain: "base", per_payment_usd: "2.500000", per_day_usd: "100000.000000" },
      actor: "session",
    });
  });

  it("Pay: a test key and a read_only key are refused (recorded); a live key, OAuth and a session pay under the limits", async () => {
    const accountId = newId("account");
    await expectProblem(client.pay({ accountId, chain: Chain.BASE, url: "https://seller.example/a", caller: LIVE_KEY }), {
      slug: "not-found",
      message: "No spending wallet on base: create one in the dashboard.",
    });
    // A test key is refused before anything else (nothing recorded: no wallet to record it on).
    await expectProblem(client.pay({ accountId, chain: Chain.BASE, url: "https://seller.example/a", caller: TEST_KEY }), {
      slug: "forbidden",
      extensions: { reason: "test_key" },
    });
    await client.createWallet({ accountId, chain: Chain.BASE, caller: SESSION });
    await expectProblem(client.pay({ accountId, chain: Chain.BASE, url: "https://seller.example/a", caller: TEST_KEY }), {
      slug: "forbidden",
      extensions: { reason: "test_key" },
    });
    await expectProblem(client.pay({ accountId, chain: Chain.BASE, url: "https://seller.example/a", caller: READ_KEY }), {
      slug: "forbidden",
      extensions: { reason: "insufficient_scope", needed_scope: "payments" },
    });
    await expectProblem(client.pay({ accountId, chain: Chain.BASE, url: "https://seller.example/a", maxUsd: "1.0000001", caller: LIVE_KEY }), {
      slug: "invalid-request",
      errors: [{ field: "max_usd", reason: "has more than 6 decimal places" }],
    });
    for (const caller of [LIVE_KEY, OAUTH, SESSION]) {
      const paid = await client.pay({ accountId, chain: Chain.BASE, url: "https://seller.example/a", caller, params: { q: "1" } });
      expect(paid).toMatchObject({ paid: true, receipt: { amountUsd: "0.250000" }, goods: { status: 200 } });
    }
    const again = await client.pay({ accountId, chain: Chain.BASE, url: "https://seller.example/a", caller: LIVE_KEY, idempotencyKey: "k1" });
    expect(again.limits).toMatchObject({ spentTodayUsd: "1.000000", leftTodayUsd: "9.000000" });
    await expectProblem(client.pay({ accountId, chain: Chain.BASE, url: "https://seller.example/b", maxUsd: "0.1", caller: LIVE_KEY }), {
      slug: "forbidden",
      extensions: { reason: "over_max_usd" },
    });
    const kinds = (await eventsOf(accountId)).map((e) => [e.kind, e.actor, e.reason ?? null]);
    expect(kinds.filter(([k]) => k === "refused")).toEqual([
      ["refused", "key:sk_live_abcd", "over_max_usd"],
      ["refused", "key:sk_live_read", "insufficient_scope"],
      ["refused", "key:sk_test_abcd", "test_key"],
    ]);
    expect(kinds.filter(([k]) => k === "spent")).toHaveLength(4);
  });

  it("balance: nags above $999 and records flagged once per crossing; funding answers EIP-681 and Solana Pay", async () => {
    const accountId = newId("account");
    const w = (await client.createWallet({ accountId, chain: Chain.BASE, caller: SESSION })).wallet;
    const address = w?.address as string;
    base.usdc_.set(address, 999_000_001n);
    const b1 = await client.getBalance({ accountId, chain: Chain.BASE });
    expect(b1).toMatchObject({ usdc: "999000001", usd: "999.000001", nagging: true, nativeSymbol: "ETH", native: "7" });
    expect(b1.warning).toMatch(/more than \$999/);
    await client.getBalance({ accountId, chain: Chain.BASE });
    base.usdc_.set(address, 5n);
    expect((await client.getBalance({ accountId, chain: Chain.BASE })).nagging).toBe(false);
    base.usdc_.set(address, 1_000_000_000n);
    await client.getBalance({ accountId, chain: Chain.BASE });
    expect((await eventsOf(accountId)).filter((e) => e.kind === "flagged").map((e) => e.reason)).toEqual(["balance_above_999", "balance_above_999"]);

    const funding = await client.getFunding({ accountId, chain: Chain.BASE, amountUsd: "12.5", caller: SESSION });
    expect(funding).toMatchObject({ token: "USDC", amount: "12500000", amountUsd: "12.500000", address });
    expect(funding.uri).toBe(`ethereum:0x036CbD53842c5426634e7929541eC2318f3dCF7e@84532/transfer?address=${address}&uint256=12500000`);
    expect(funding.links).toMatchObject([
      { app: "metamask", url: `https://metamask.app.link/send/0x036CbD53842c5426634e7929541eC2318f3dCF7e@84532/transfer?address=${address}&uint256=12500000` },
    ]);
    expect((await client.getFunding({ accountId, chain: Chain.BASE, caller: SESSION })).uri).not.toContain("uint256");
    await expectProblem(client.getFunding({ accountId, chain: Chain.BASE, amountUsd: "1e3", caller: SESSION }), {
      slug: "invalid-request",
      errors: [{ field: "amount_usd" }],
    });

    const sol = (await client.createWallet({ accountId, chain: Chain.SOLANA, caller: SESSION })).wallet?.address as string;
    const solFunding = await client.getFunding({ accountId, chain: Chain.SOLANA, amountUsd: "1.50", caller: SESSION });
    expect(solFunding.uri).toBe(`solana:${sol}?amount=1.5&spl-token=4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU&label=c402%20spending%20wallet`);
    expect(solFunding.links.map((l) => l.app)).toEqual(["phantom", "solflare"]);
    base.down = true;
    try {
      await expectProblem(client.getBalance({ accountId, chain: Chain.BASE }), { slug: "unavailable" });
    } finally {
      base.down = false;
    }
  });

  it("archive ends the active wallet (revoked) and lets a new one be created; events page newest first by (at, id)", async () => {
    const accountId = newId("account");
    await client.createWallet({ accountId, chain: Chain.BASE, caller: SESSION });
    const archived = await client.archive({ accountId, chain: Chain.BASE, caller: SESSION });
    expect(archived.wallet).toMatchObject({ status: "archived" });
    await expectProblem(client.archive({ accountId, chain: Chain.BASE, caller: SESSION }), { slug: "not-found" });
    await client.createWallet({ accountId, chain: Chain.BASE, caller: SESSION });
    expect((await client.listWallets({ accountId })).wallets).toHaveLength(1);
    expect((await client.listWallets({ accountId, includeArchived: true })).wallets).toHaveLength(2);
    const all = await eventsOf(accountId);
    expect(all.map((e) => e.kind)).toEqual(["created", "revoked", "created"]);
    const page1 = await client.listEvents({ accountId, chain: Chain.BASE, pageSize: 2 });
    const last = page1.events[1];
    const page2 = await client.listEvents({ accountId, chain: Chain.BASE, pageSize: 2, ...(last ? { afterAt: last.at, afterId: last.id } : {}) });
    expect([...page1.events, ...page2.events].map((e) => e.id)).toEqual(all.map((e) => e.id));
  });

  it("SelfCheck names each chain's RPC that does not answer; a chain not offered answers unavailable", async () => {
    expect(await client.selfCheck({})).toMatchObject({ ok: true, problems: [], chains: ["base", "solana"] });
    solana.down = true;
    try {
      expect(await client.selfCheck({})).toMatchObject({ ok: false, problems: [{ component: "solana" }] });
    } finally {
      solana.down = false;
    }
    // A deployment offering Base only.
    const baseOnly = new WalletBook({
      db: db(),
      sealer: new SecretSealer(parseKeyring(generateKeyringText("s1"))),
      events: new WalletEventLog(db()),
      chains: new Map([["base", base]]),
    });
    const caller = { kind: "session" as const, testMode: false, scope: "full", actor: "session" };
    await expectProblem(baseOnly.createWallet(newId("account"), "solana", caller), { slug: "unavailable", extensions: { reason: "chain_not_offered" } });
    await expectProblem(baseOnly.walletToPay(newId("account"), "solana", caller, { url: "https://seller.example/x" }), { slug: "unavailable" });
    expect(baseOnly.offeredChains).toEqual(["base"]);
  });

  it("G25: no secret appears in logs, problems, events or the outbox", async () => {
    const accountId = newId("account");
    const created = await client.createWallet({ accountId, chain: Chain.BASE, caller: SESSION });
    const sol = await client.createWallet({ accountId, chain: Chain.SOLANA, caller: SESSION });
    // Every RPC, refusals included.
    for (const chain of [Chain.BASE, Chain.SOLANA]) {
      await client.getBalance({ accountId, chain });
      await client.getLimits({ accountId, chain });
      await client.setLimits({ accountId, chain, perPaymentUsd: "1", perDayUsd: "3", caller: SESSION });
      await client.getFunding({ accountId, chain, amountUsd: "2", caller: SESSION });
      await client.pay({ accountId, chain, url: "https://seller.example/x", caller: OAUTH });
      await expectProblem(client.pay({ accountId, chain, url: "https://seller.example/x", caller: TEST_KEY }), { slug: "forbidden" });
      await expectProblem(client.pay({ accountId, chain, url: "https://seller.example/x", maxUsd: "0.01", caller: LIVE_KEY }), { slug: "forbidden" });
      await expectProblem(client.reveal({ accountId, chain, caller: LIVE_KEY }), { slug: "forbidden" });
      await client.reveal({ accountId, chain, caller: SESSION });
      await client.listEvents({ accountId, chain, pageSize: 50 });
      await client.listWallets({ accountId, includeArchived: true });
      await client.selfCheck({});
      await client.archive({ accountId, chain, caller: SESSION });
      await expectProblem(client.reveal({ accountId, chain, caller: SESSION }), { slug: "not-found" });
    }
    const canaries: string[] = [];
    for (const secret of [created.secret, sol.secret]) {
      if (!secret) throw new Error("no secret answered");
      const raw = secret.privateKey.startsWith("0x")
        ? Buffer.from(secret.privateKey.slice(2), "hex")
        : Buffer.from(getBase58Encoder().encode(secret.privateKey));
      // The phrase, and half of it (a truncated copy is a leak too).
      canaries.push(secret.phrase, secret.phrase.split(" ").slice(0, 6).join(" "), secret.privateKey);
      canaries.push(
        raw.toString("hex"),
        raw.toString("base64"),
        raw.toString("base64url"),
        raw.subarray(0, 32).toString("hex"),
        raw.subarray(0, 32).toString("base64"),
      );
    }
    const outbox = (await db()
      .selectFrom("outbox" as never)
      .selectAll()
      .execute()) as { payload: Uint8Array }[];
    const events = await db().selectFrom("wallet_events").selectAll().execute();
    const spends = await db().selectFrom("spends").selectAll().execute();
    const haystacks = [
      ...captured.lines,
      ...problems.map((p) => JSON.stringify({ message: p.message, extensions: p.extensions, errors: p.errors, help: p.help, stack: p.stack })),
      ...outbox.map((r) => Buffer.from(r.payload).toString("latin1")),
      ...outbox.map((r) => Buffer.from(r.payload).toString("hex")),
      ...[...events, ...spends].map((row) => JSON.stringify(row, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v))),
    ];
    expect(captured.lines.length + problems.length + outbox.length + events.length).toBeGreaterThan(20);
    for (const canary of canaries) {
      for (const text of haystacks) expect(text.includes(canary)).toBe(false);
    }
  });
});
