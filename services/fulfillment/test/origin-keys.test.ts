import { accountActivityOf } from "@c402/account-events";
import { decodeEnvelope } from "@c402/bus";
import { TOPICS } from "@c402/contracts";
import { migrate, type ServiceDatabase } from "@c402/db";
import { isId } from "@c402/ids";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { describeOnEachDatabase } from "@c402/testkit";
import { fulfillmentMigrations, OriginKeys } from "../src";
import type { FulfillmentDb } from "../src/store/origin-keys-store";
import { problemOf } from "./support/problem-of";

/** Origin keys on both databases: the value sealed at rest and never shown, rotation, soft revoke, tenant isolation, and one account event per change. */

const ACTOR = "key:sk_test_abcd";
/** A value that must appear nowhere but sealed in its row (G25's canary). */
const CANARY = "canary-origin-secret-7f3a9c1e5b";

async function activityOf(db: ServiceDatabase["db"]) {
  const rows = await db.selectFrom("outbox").select(["payload", "topic", "key"]).orderBy("seq").execute();
  return rows.map((r: { payload: Buffer; topic: string; key: string }) => {
    const { accountId, testMode, action, objectId, actor, detail } = accountActivityOf(decodeEnvelope(new Uint8Array(r.payload)));
    return { topic: r.topic, raw: Buffer.from(r.payload).toString("latin1"), accountId, testMode, action, objectId, actor, detail };
  });
}

describeOnEachDatabase("origin keys", "fulfillment", (open) => {
  let database: ServiceDatabase;
  let close: () => Promise<void>;
  let keys: OriginKeys;
  let committed = 0;
  let clock = new Date("2026-11-26T10:00:00.000Z");
  const keyring = parseKeyring(generateKeyringText("k1"));

  beforeAll(async () => {
    ({ database, close } = await open());
    await migrate(database, fulfillmentMigrations);
    keys = new OriginKeys({ db: database.db as FulfillmentDb, sealer: new SecretSealer(keyring), now: () => clock, onCommitted: () => committed++ });
  });
  afterAll(() => close());
  const later = (ms: number) => (clock = new Date(clock.getTime() + ms));
  const change = (accountId = "acct_a") => ({ accountId, actor: ACTOR as `key:${string}`, testMode: true });

  it("stores the value sealed under the key's id, shows everything but the value, and records origin_key.created with the change", async () => {
    const commits = committed;
    const k = await keys.create({ ...change(), authType: "api_key", value: CANARY, headerName: "X-Api-Key", name: "weather" });
    expect(isId("originKey", k.id)).toBe(true);
    expect(k).toEqual({
      id: k.id,
      account_id: "acct_a",
      name: "weather",
      auth_type: "api_key",
      header_name: "X-Api-Key",
      checkouts_using: 0,
      created_at: clock,
      rotated_at: null,
      revoked_at: null,
    });
    expect(JSON.stringify(k)).not.toContain(CANARY);
    const row = await database.db.selectFrom("origin_keys").select("sealed_value").where("id", "=", k.id).executeTakeFirstOrThrow();
    expect(row.sealed_value).not.toContain(CANARY);
    expect(row.sealed_value).not.toContain(Buffer.from(CANARY).toString("base64"));
    // Bound to its row: the same sealed value does not open as another key's.
    expect(() => new SecretSealer(keyring).open(row.sealed_value, "okey_Other0000000000000000000")).toThrow();
    expect(await keys.originCredential("acct_a", k.id)).toEqual({ authType: "api_key", headerName: "X-Api-Key", value: CANARY });
    expect(committed).toBe(commits + 1);
    const events = (await activityOf(database.db)).filter((e) => e.objectId === k.id);
    expect(events.map(({ raw: _raw, ...e }) => e)).toEqual([
      {
        topic: TOPICS.accountActivity,
        accountId: "acct_a",
        testMode: true,
        action: "origin_key.created",
        objectId: k.id,
        actor: ACTOR,
        detail: { auth_type: "api_key", header_name: "X-Api-Key" },
      },
    ]);
    expect(events[0]?.raw).not.toContain(CANARY);
  });

  it.each([
    [{ authType: "bearer", value: "" }, "value", /required/],
    [{ authType: "bearer", value: "a".repeat(4097) }, "value", /at most 4096/],
    [{ authType: "bearer", value: "tok\r\nX-Injected: 1" }, "value", /printable ASCII/],
    [{ authType: "bearer", value: "tok\u00e9" }, "value", /printable ASCII/],
    [{ authType: "bearer", value: " tok" }, "value", /spaces/],
    [{ authType: "basic", value: "no-colon" }, "value", /user:password/],
    [{ authType: "bearer", value: "tok", headerName: "X-Key" }, "header_name", /only for api_key and custom/],
    [{ authType: "api_key", value: "tok" }, "header_name", /required for api_key/],
    [{ authType: "custom", value: "tok", headerName: "X Key" }, "header_name", /HTTP header name/],
    [{ authType: "custom", value: "tok", headerName: "Host" }, "header_name", /cannot be host/],
    [{ authType: "custom", value: "tok", headerName: "Transfer-Encoding" }, "header_name", /cannot be transfer-encoding/],
    [{ authType: "custom", value: "tok", headerName: "X-PAYMENT" }, "header_name", /cannot be x-payment/],
    // Kept across a cross-origin redirect: a credential there would follow it to another host.
    [{ authType: "api_key", value: "tok", headerName: "Accept" }, "header_name", /cannot be accept/],
    [{ authType: "custom", value: "tok", headerName: "User-Agent" }, "header_name", /cannot be user-agent/],
    [{ authType: "bearer", value: "tok", name: "n".repeat(121) }, "name", /at most 120/],
  ] as const)("refuses %j with 422 naming %s, storing nothing", async (body, field, reason) => {
    const before = await database.db
      .selectFrom("origin_keys")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    const p = await problemOf(keys.create({ ...change(), ...body }));
    expect(p.slug).toBe("invalid-request");
    expect(p.errors).toEqual([{ field, reason: expect.stringMatching(reason) }]);
    expect(JSON.stringify(p)).not.toContain(body.value.length > 0 ? body.value : "\u0000");
    const after = await database.db
      .selectFrom("origin_keys")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it("accepts each auth type with its header rules (custom may name Authorization with its own scheme)", async () => {
    const made = await Promise.all([
      keys.create({ ...change(), authType: "bearer", value: "tok" }),
      keys.create({ ...change(), authType: "basic", value: "user:pa:ss" }),
      keys.create({ ...change(), authType: "custom", value: "Token abc", headerName: "Authorization" }),
      keys.create({ ...change(), authType: "api_key", value: "k", headerName: "x-api-key", name: "" }),
    ]);
    expect(made.map((k) => [k.auth_type, k.header_name, k.name])).toEqual([
      ["bearer", null, null],
      ["basic", null, null],
      ["custom", "Authorization", null],
      ["api_key", "x-api-key", null],
    ]);
  });

  it("rotates: the next credential read gets the new value; the change is origin_key.rotated; a revoked key answers 409", async () => {
    const k = await keys.create({ ...change(), authType: "bearer", value: "first" });
    later(1000);
    const rotated = await keys.rotate({ ...change(), id: k.id, value: "second" });
    expect(rotated.rotated_at).toEqual(clock);
    expect((await keys.originCredential("acct_a", k.id)).value).toBe("second");
    const bad = await problemOf(keys.rotate({ ...change(), id: k.id, value: "line\nbreak" }));
    expect(bad.errors).toEqual([{ field: "value", reason: expect.stringMatching(/printable ASCII/) }]);
    expect((await keys.originCredential("acct_a", k.id)).value).toBe("second");
    await keys.revoke({ ...change(), id: k.id });
    expect((await problemOf(keys.rotate({ ...change(), id: k.id, value: "third" }))).slug).toBe("conflict");
    expect((await problemOf(keys.originCredential("acct_a", k.id))).slug).toBe("gone");
    const actions = (await activityOf(database.db)).filter((e) => e.objectId === k.id).map((e) => e.action);
    expect(actions).toEqual(["origin_key.created", "origin_key.rotated", "origin_key.revoked"]);
  });

  it("revokes softly and once: a second revoke changes nothing and records nothing; the key stays listed with revoked_at", async () => {
    const k = await keys.create({ ...change(), authType: "bearer", value: "tok" });
    later(1000);
    const first = await keys.revoke({ ...change(), id: k.id });
    expect(first).toEqual({ key: { ...k, revoked_at: clock }, revoked: true });
    later(1000);
    const again = await keys.revoke({ ...change(), id: k.id });
    expect(again).toEqual({ key: first.key, revoked: false });
    const listed = await keys.list("acct_a", { size: 1000 });
    expect(listed.find((x) => x.id === k.id)?.revoked_at).toEqual(first.key.revoked_at);
    expect((await activityOf(database.db)).filter((e) => e.objectId === k.id && e.action === "origin_key.revoked")).toHaveLength(1);
  });

  it("counts the checkouts that reference a key", async () => {
    const k = await keys.create({ ...change(), authType: "bearer", value: "tok" });
    await database.db
      .insertInto("origin_key_uses")
      .values([
        { origin_key_id: k.id, checkout_id: "chk_One000000000000000000000" },
        { origin_key_id: k.id, checkout_id: "chk_Two000000000000000000000" },
      ])
      .execute();
    const { key } = await keys.revoke({ ...change(), id: k.id });
    expect(key.checkouts_using).toBe(2);
    expect((await keys.list("acct_a", { size: 1000 })).find((x) => x.id === k.id)?.checkouts_using).toBe(2);
  });

  it("never shows, rotates or revokes another account's key (404), and lists only the account's own, newest first, by keyset pages", async () => {
    const theirs = await keys.create({ ...change("acct_b"), authType: "bearer", value: "theirs" });
    expect((await problemOf(keys.rotate({ ...change("acct_a"), id: theirs.id, value: "mine" }))).slug).toBe("not-found");
    expect((await problemOf(keys.revoke({ ...change("acct_a"), id: theirs.id }))).slug).toBe("not-found");
    expect((await problemOf(keys.originCredential("acct_a", theirs.id))).slug).toBe("not-found");
    expect((await keys.originCredential("acct_b", theirs.id)).value).toBe("theirs");

    const mine = [];
    for (let i = 0; i < 5; i++) {
      later(1000);
      mine.push(await keys.create({ ...change("acct_c"), authType: "bearer", value: `v${i}` }));
    }
    const first = await keys.list("acct_c", { size: 2 });
    const second = await keys.list("acct_c", { size: 2, after: { createdAt: first[1]!.created_at, id: first[1]!.id } });
    const third = await keys.list("acct_c", { size: 2, after: { createdAt: second[1]!.created_at, id: second[1]!.id } });
    expect([...first, ...second, ...third].map((k) => k.id)).toEqual(mine.map((k) => k.id).reverse());
    expect(await keys.list("acct_nobody", { size: 10 })).toEqual([]);
  });
});
