import { accountActivityRow } from "@c402/account-events";
import { DatabaseBus, enqueueOutboxRow, OutboxRelay, outboxMigration } from "@c402/bus";
import { TOPICS } from "@c402/contracts";
import { EmbeddedPostgres, migrate } from "@c402/db";
import { eventually } from "@c402/testkit";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { identityMigrations } from "../src";
import { listAccountEvents } from "../src/domain/account-events";
import { Identity } from "../src/domain/identity";
import { subscribeAccountActivity } from "../src/events/account-activity-consumer";
import type { IdentityDb } from "../src/store/identity-store";

describe("account events", () => {
  let pg: EmbeddedPostgres;
  let db: IdentityDb;
  let identity: Identity;
  let clock = new Date("2026-11-22T10:00:00.000Z");
  const tick = () => (clock = new Date(clock.getTime() + 1000));

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("identity");
    await migrate(database, identityMigrations);
    db = database.db as IdentityDb;
    identity = new Identity(db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: 600 }, () => clock);
  });
  afterAll(() => pg.close());

  async function signIn(wallet = privateKeyToAccount(generatePrivateKey())) {
    const challenge = await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
    const signature = await wallet.signMessage({ message: challenge.message });
    return { wallet, result: await identity.verifySignature({ message: challenge.message, signature }) };
  }

  const all = (accountId: string, query: Partial<Parameters<typeof listAccountEvents>[2]> = {}) => listAccountEvents(db, accountId, { size: 1000, ...query });

  it("records identity's own changes with their actor, newest first, and never a secret", async () => {
    const first = await signIn();
    if (!first.result.accountCreated) throw new Error("a fresh wallet creates an account");
    const accountId = first.result.accountId;
    tick();
    const later = await signIn(first.wallet);
    if (later.result.accountCreated) throw new Error("a later sign-in reaches the same account");
    const session = await identity.resolve(later.result.session.token);
    tick();
    const minted = await identity.createKey(
      accountId,
      { name: "ci", scope: "payments", mode: "live" },
      { kind: "session", scope: "full", mode: "test" },
      "wallet",
    );
    tick();
    await identity.revokeKey(accountId, minted.key.id, `key:${first.result.key.prefix}`);
    tick();
    await identity.revokeKey(accountId, minted.key.id, `key:${first.result.key.prefix}`);
    await identity.endSession(accountId, session.id, "wallet");
    tick();
    await identity.endSession(accountId, session.id, "wallet");

    const events = await all(accountId);
    const rows = events.map((e) => [e.action, e.object_id, e.actor, e.test_mode]);
    expect(rows.slice(0, 3)).toEqual([
      ["session.ended", session.id, "wallet", false],
      ["key.revoked", minted.key.id, `key:${first.result.key.prefix}`, false],
      ["key.created", minted.key.id, "wallet", false],
    ]);
    // The later sign-in: a fresh key (key recovery) and a session, at one instant.
    expect(rows.slice(3, 5)).toEqual(
      expect.arrayContaining([
        ["session.opened", session.id, "wallet", false],
        ["key.created", later.result.key.id, "wallet", true],
      ]),
    );
    // The first sign-in: the account, its first key (a test key) and a session, at one instant.
    expect(rows.slice(5)).toHaveLength(3);
    expect(rows.slice(5)).toEqual(
      expect.arrayContaining([
        ["account.created", accountId, "wallet", false],
        ["key.created", first.result.key.id, "wallet", true],
        ["session.opened", first.result.session.id, "wallet", false],
      ]),
    );
    expect(events.every((e) => /^evt_[0-9A-Za-z]{24}$/.test(e.id))).toBe(true);
    expect(events.find((e) => e.action === "key.created" && e.object_id === minted.key.id)?.detail).toEqual({
      prefix: minted.key.prefix,
      name: "ci",
      scope: "payments",
      mode: "live",
    });
    const text = JSON.stringify(events);
    expect(text).not.toContain(minted.secret);
    expect(text).not.toContain(first.result.secret);
    expect(text).not.toContain(later.result.session.token);
  });

  it("filters by action prefix, pages by event id or instant, and keeps each account's events to itself", async () => {
    const a = await signIn();
    const b = await signIn();
    if (!a.result.accountCreated || !b.result.accountCreated) throw new Error("fresh wallets create accounts");
    const accountId = a.result.accountId;
    const by = { kind: "api_key", scope: "full", mode: "test" } as const;
    for (let i = 0; i < 5; i++) {
      tick();
      await identity.createKey(accountId, { scope: "read_only", mode: "test" }, by, "key:sk_test_abcd");
    }
    const keys = await all(accountId, { actionPrefix: "key." });
    expect(keys).toHaveLength(6);
    expect(keys.every((e) => e.action.startsWith("key."))).toBe(true);
    expect(await all(accountId, { actionPrefix: "key.revoked" })).toEqual([]);
    // Another account's events are not this account's, even by id.
    expect((await all(b.result.accountId)).some((e) => e.object_id === accountId)).toBe(false);
    await expect(all(b.result.accountId, { beforeEventId: keys[0]!.id })).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [expect.objectContaining({ field: "before" })],
    });

    const page1 = await listAccountEvents(db, accountId, { size: 2 });
    const page2 = await listAccountEvents(db, accountId, { size: 2, beforeEventId: page1[1]!.id });
    const page3 = await listAccountEvents(db, accountId, { size: 10, beforeEventId: page2[1]!.id });
    expect([...page1, ...page2, ...page3].map((e) => e.id)).toEqual((await all(accountId)).map((e) => e.id));
    const beforeInstant = await all(accountId, { beforeAt: keys[1]!.at });
    expect(beforeInstant.every((e) => e.at < keys[1]!.at)).toBe(true);
    expect(beforeInstant.length).toBeGreaterThan(0);
    await expect(listAccountEvents(db, accountId, { size: 1001 })).rejects.toMatchObject({ slug: "invalid-request" });
    await expect(all(accountId, { beforeEventId: "evt_unknown" })).rejects.toMatchObject({ slug: "invalid-request" });
  });

  it("records another service's events from the bus once, however often they are delivered, and skips what cannot be read", async () => {
    const producer = pg.forSchema("producer");
    await migrate(producer, { "0001_outbox": outboxMigration });
    const handlerErrors: unknown[] = [];
    const bus = await DatabaseBus.open(pg.forSchema("bus"), (err) => handlerErrors.push(err));
    const malformed: unknown[] = [];
    const sub = await subscribeAccountActivity(bus, db, (err) => malformed.push(err));
    const relay = new OutboxRelay({ db: producer.db, bus });
    try {
      const at = new Date("2026-11-22T12:00:00.123Z");
      const row = accountActivityRow({
        accountId: "acct_FromBus00000000000000000",
        action: "checkout.created",
        objectId: "chk_FromBus00000000000000000",
        detail: { title: "Report" },
        actor: "key:sk_live_wxyz",
        testMode: true,
        at,
      });
      await producer.db.transaction().execute((trx) => enqueueOutboxRow(trx, row));
      // The same event published twice (a relay that crashed after publishing), and a message that is not an envelope.
      await relay.publishBatch();
      await bus.publish(TOPICS.accountActivity, [{ key: "x", value: new Uint8Array(row.payload) }]);
      await bus.publish(TOPICS.accountActivity, [{ key: "x", value: new Uint8Array([0xff, 0xff, 0xff]) }]);
      await eventually(
        () => malformed.length,
        (n) => n === 1,
      );
      expect(handlerErrors).toEqual([]);
      const events = await all("acct_FromBus00000000000000000");
      expect(events).toEqual([
        {
          id: row.event_id,
          account_id: "acct_FromBus00000000000000000",
          action: "checkout.created",
          object_id: "chk_FromBus00000000000000000",
          detail: { title: "Report" },
          actor: "key:sk_live_wxyz",
          test_mode: true,
          at,
        },
      ]);
    } finally {
      await sub.stop();
      await bus.close();
    }
  });
});
