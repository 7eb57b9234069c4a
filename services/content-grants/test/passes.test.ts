import { migrate } from "@c402/db";
import { newId } from "@c402/ids";
import { generateKeyringText, parseKeyring, TokenTagger } from "@c402/sealed-secrets";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { accountActivityOf } from "@c402/account-events";
import { decodeEnvelope } from "@c402/bus";
import { TOPICS } from "@c402/contracts";
import type { Kysely } from "kysely";
import { contentGrantsMigrations } from "../src";
import { Passes, type IssuePass } from "../src/domain/passes";
import type { ContentGrantsDb } from "../src/store/pass-store";

/**
 * Gated-content passes (spec, Grant): signed strings checked without a row,
 * scoped to one seller and to its articles or one, ended by their expiry, and
 * (with a use limit) counted exactly under concurrency. test-e2e/test/gated-content.test.ts
 * drives them through the faces.
 */
function passesContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let db: ContentGrantsDb;
  let clock = new Date("2026-11-27T10:00:00Z");
  const keys = generateKeyringText("g1");
  const passes = () => new Passes(db, new TokenTagger(parseKeyring(keys)), () => clock);
  const article = newId("contentCheckout");
  const seller = newId("account");
  const hoursFromNow = (h: number) => new Date(clock.getTime() + h * 3_600_000);
  const on = (over: Partial<{ accountId: string; contentId: string; rehearsalFace: boolean }> = {}) => ({
    accountId: seller,
    contentId: article,
    rehearsalFace: false,
    ...over,
  });

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, contentGrantsMigrations);
    db = ctx.database.db as ContentGrantsDb;
  });
  afterAll(() => ctx.close());

  it("a pass opens its seller's articles until it expires; another seller's, never", async () => {
    const { pass, scope, expiresAt } = await passes().issue({
      accountId: seller,
      scope: "seller",
      subject: "sub_x",
      expiresAt: hoursFromNow(24),
      rehearsal: false,
    });
    expect(pass).toMatch(/^gp1\.g1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect([scope, expiresAt]).toEqual(["seller", hoursFromNow(24)]);
    expect(await passes().check(pass, on())).toEqual({ valid: true, expiresAt });
    expect(await passes().check(pass, on({ contentId: newId("contentCheckout") }))).toMatchObject({ valid: true });
    expect(await passes().check(pass, on({ accountId: newId("account") }))).toMatchObject({ valid: false, reason: "other_seller" });
    clock = hoursFromNow(24);
    expect(await passes().check(pass, on())).toMatchObject({ valid: false, reason: "expired" });
    clock = new Date("2026-11-27T10:00:00Z");
    // Nothing is stored for a pass without a use limit.
    expect(await db.selectFrom("pass_uses").selectAll().execute()).toEqual([]);
  });

  it("a content pass opens its article only; a rehearsal's pass opens rehearsal faces only", async () => {
    const { pass } = await passes().issue({
      accountId: seller,
      scope: "content",
      contentId: article,
      subject: "s",
      expiresAt: hoursFromNow(1),
      rehearsal: true,
    });
    expect(await passes().check(pass, on({ rehearsalFace: true }))).toMatchObject({ valid: true });
    expect(await passes().check(pass, on())).toMatchObject({ valid: false, reason: "rehearsal_pass" });
    expect(await passes().check(pass, on({ contentId: newId("contentCheckout"), rehearsalFace: true }))).toMatchObject({
      valid: false,
      reason: "other_content",
    });
  });

  it("an altered, truncated or foreign-key pass is refused; a rotated-out key's passes stop, a kept old key's still work", async () => {
    const { pass } = await passes().issue({ accountId: seller, scope: "seller", subject: "s", expiresAt: hoursFromNow(1), rehearsal: false });
    const [prefix, keyId, claims, tag] = pass.split(".") as [string, string, string, string];
    const widened = Buffer.from(Buffer.from(claims, "base64url").toString().replace(seller, newId("account"))).toString("base64url");
    for (const bad of [`${prefix}.${keyId}.${widened}.${tag}`, pass.slice(0, -2), `${prefix}.g2.${claims}.${tag}`, `${pass}.x`]) {
      expect(await passes().check(bad, on())).toMatchObject({ valid: false, reason: "signature" });
    }
    expect(await passes().check("hello", on())).toMatchObject({ valid: false, reason: "malformed" });
    const foreign = new Passes(db, new TokenTagger(parseKeyring(generateKeyringText("g1"))), () => clock);
    expect(await foreign.check(pass, on())).toMatchObject({ valid: false, reason: "signature" });

    // Rotation: a new key first signs; the old one, kept second, still checks; dropped, its passes stop.
    const rotated = new Passes(db, new TokenTagger(parseKeyring(`${generateKeyringText("g2")},${keys}`)), () => clock);
    expect((await rotated.issue({ accountId: seller, scope: "seller", subject: "s", expiresAt: hoursFromNow(1), rehearsal: false })).pass).toMatch(
      /^gp1\.g2\./,
    );
    expect(await rotated.check(pass, on())).toMatchObject({ valid: true });
  });

  it("a limited pass opens exactly its uses, even 50 reads at once", async () => {
    const { pass } = await passes().issue({ accountId: seller, scope: "seller", subject: "s", expiresAt: hoursFromNow(1), uses: 10, rehearsal: false });
    const checks = await Promise.all(Array.from({ length: 50 }, () => passes().check(pass, on())));
    expect(checks.filter((c) => c.valid)).toHaveLength(10);
    expect(checks.filter((c) => !c.valid && c.reason === "used_up")).toHaveLength(40);
    expect(checks.flatMap((c) => (c.valid ? [c.usesLeft] : [])).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // A read the seller's origin failed is given back (never below none; another seller's or an unlimited pass gives nothing back).
    expect(await passes().giveBack(pass, newId("account"))).toBe(false);
    expect(await passes().giveBack(pass, seller)).toBe(true);
    expect(await passes().check(pass, on())).toMatchObject({ valid: true, usesLeft: 0 });
    const unlimited = await passes().issue({ accountId: seller, scope: "seller", subject: "s", expiresAt: hoursFromNow(1), rehearsal: false });
    expect(await passes().giveBack(unlimited.pass, seller)).toBe(false);
    // An expired pass's count is purged by a later issue of a limited pass (the only kind that makes rows).
    clock = hoursFromNow(2);
    await passes().issue({ accountId: seller, scope: "seller", subject: "s", expiresAt: hoursFromNow(1), uses: 1, rehearsal: false });
    expect(await db.selectFrom("pass_uses").selectAll().execute()).toEqual([]);
    clock = new Date("2026-11-27T10:00:00Z");
  });

  it("a seller's pass is recorded as pass.issued with its subject, never the pass; a purchase's is not recorded here", async () => {
    const { pass } = await passes().issue({
      accountId: seller,
      scope: "content",
      contentId: article,
      subject: "newsletter-2026-11",
      expiresAt: hoursFromNow(48),
      uses: 3,
      rehearsal: false,
      actor: "key:sk_live_abcd",
    });
    await passes().issue({ accountId: seller, scope: "seller", subject: "sub_buyer", expiresAt: hoursFromNow(1), rehearsal: false });
    // Written to the outbox, in the same statement's transaction as nothing else: identity records it from the bus.
    const rows = await (db as Kysely<any>).selectFrom("outbox").select(["topic", "payload"]).orderBy("seq").execute();
    const events = rows.map((r: { topic: string; payload: Buffer }) => ({ topic: r.topic, ...accountActivityOf(decodeEnvelope(new Uint8Array(r.payload))) }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      topic: TOPICS.accountActivity,
      accountId: seller,
      action: "pass.issued",
      actor: "key:sk_live_abcd",
      testMode: false,
      detail: { subject: "newsletter-2026-11", scope: "content", content_id: article, uses: 3, expires_at: hoursFromNow(48).toISOString() },
    });
    expect(Buffer.concat(rows.map((r: { payload: Buffer }) => Buffer.from(r.payload))).toString("latin1")).not.toContain(pass.split(".")[3]);
  });

  it("refuses a pass with no future, a content pass without its article, a bad subject or uses", async () => {
    const p = passes();
    const base: IssuePass = { accountId: seller, scope: "seller", subject: "s", expiresAt: hoursFromNow(1), rehearsal: false };
    const fields = async (over: Partial<IssuePass>) =>
      p.issue({ ...base, ...over }).then(
        () => [],
        (err: { errors: { field: string }[] }) => err.errors.map((e) => e.field),
      );
    expect(await fields({ expiresAt: clock })).toEqual(["expires_at"]);
    expect(await fields({ expiresAt: hoursFromNow(8_761) })).toEqual(["expires_at"]);
    expect(await fields({ scope: "content" })).toEqual(["content_id"]);
    expect(await fields({ contentId: newId("checkout") })).toEqual(["content_id"]);
    expect(await fields({ subject: "" })).toEqual(["subject"]);
    expect(await fields({ uses: 0 })).toEqual(["uses"]);
    expect(await fields({ expiresAt: hoursFromNow(8_760) })).toEqual([]);
  });
}

describeOnEachDatabase("gated-content passes", "content_grants", passesContract);
