import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { migrate } from "@c402/db";
import { createCapturingLogger, createLogger } from "@c402/logging";
import { createMailer, type Mailer } from "@c402/mailer";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { identityMigrations } from "../src";
import { listAccountEvents } from "../src/domain/account-events";
import { Identity } from "../src/domain/identity";
import { MAGIC_LINK_TTL_SECONDS, MagicLinks, normaliseEmail, returnToRefusal } from "../src/domain/magic-link";
import type { IdentityDb } from "../src/store/identity-store";

const BASE_URL = "https://pay.test";
const FROM = "c402 <no-reply@c402.example>";
const LINK = /https:\/\/pay\.test\/auth\/verify\?token=(ml_[0-9A-Za-z]{43})/;
const silent = createLogger({ service: "identity-test", level: "silent" });

/** The problem a promise rejects with (fails the test if it resolves). */
const refusal = (p: Promise<unknown>) =>
  p.then(
    (v) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e as { slug: string; message: string; extensions?: unknown; errors?: unknown },
  );

describe("addresses and return paths", () => {
  it("normalises an address: trimmed, lowercased, an internationalised domain in its ASCII form", () => {
    expect(normaliseEmail("  Ada.Lovelace+c402@Example.COM \n")).toBe("ada.lovelace+c402@example.com");
    expect(normaliseEmail("ada@Bücher.example")).toBe("ada@xn--bcher-kva.example");
  });

  it("refuses what is not one plain address of at most 254 characters, naming email", () => {
    const longest = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(53)}.example`;
    expect(longest).toHaveLength(254);
    expect(normaliseEmail(longest)).toBe(longest);
    for (const bad of [
      `${longest}x`,
      "ada",
      "@example.com",
      "ada@",
      "ada@localhost",
      "a b@example.com",
      "ada@example.com\r\nBcc: eve@example.com",
      "ada@@example.com",
    ]) {
      let thrown: unknown;
      try {
        normaliseEmail(bad);
      } catch (err) {
        thrown = err;
      }
      expect([bad, thrown]).toEqual([bad, expect.objectContaining({ slug: "invalid-request", errors: [expect.objectContaining({ field: "email" })] })]);
    }
  });

  it("accepts a path on this site as return_to and refuses every way out of it", () => {
    for (const good of ["/", "/auth/me", "/v1/checkouts?limit=5#top", "/c/chk_x/test"]) expect([good, returnToRefusal(good)]).toEqual([good, undefined]);
    for (const bad of [
      "//evil.example",
      "/\\evil.example",
      "\\\\evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "evil.example",
      "",
      "/\t/evil.example",
      "/\n/evil.example",
      "/a\u0000b",
      "/ /evil",
      `/${"a".repeat(2048)}`,
    ]) {
      expect([bad, returnToRefusal(bad)]).toEqual([bad, expect.any(String)]);
    }
  });
});

function magicLinkContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let db: IdentityDb;
  let dir: string;
  let mailer: Mailer;
  let links: MagicLinks;
  let identity: Identity;
  let clock = new Date("2026-11-24T10:00:00.000Z");
  const now = () => clock;

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, identityMigrations);
    db = ctx.database.db as IdentityDb;
    dir = await mkdtemp(path.join(os.tmpdir(), "c402-identity-mail-"));
    mailer = createMailer({ dataDir: dir, from: FROM });
    links = new MagicLinks(db, mailer, { baseUrl: BASE_URL }, silent, now);
    identity = new Identity(db, { baseUrl: BASE_URL, challengeTtlSeconds: 600 }, now);
  });
  afterAll(async () => {
    await mailer.close();
    await rm(dir, { recursive: true, force: true });
    await ctx.close();
  });

  /** Every mail written so far, parsed, oldest first. */
  async function mails() {
    const files = (await readdir(path.join(dir, "mail"))).filter((f) => f.endsWith(".eml")).sort();
    return Promise.all(files.map(async (f) => simpleParser(await readFile(path.join(dir, "mail", f)))));
  }
  /** Requests a link for `email` and answers its token, read from the mail that went out. */
  async function linkFor(email: string, returnTo?: string): Promise<string> {
    const before = (await mails().catch(() => [])).length;
    await links.request({ email, ...(returnTo !== undefined ? { returnTo } : {}) });
    const after = await mails();
    expect(after).toHaveLength(before + 1);
    const token = LINK.exec(after[after.length - 1]!.text ?? "")?.[1];
    if (!token) throw new Error("no sign-in link in the mail");
    return token;
  }
  const fresh = () => `seller-${Math.random().toString(36).slice(2)}@example.com`;

  it("mails a link to the normalised address and stores only the token's hash", async () => {
    const email = fresh();
    const answer = await links.request({ email: `  ${email.toUpperCase()} ` });
    expect(answer).toEqual({ email, expiresAt: new Date(clock.getTime() + 15 * 60 * 1000), expiresInSeconds: 900 });
    expect(MAGIC_LINK_TTL_SECONDS).toBe(900);
    const mail = (await mails()).at(-1)!;
    const to = Array.isArray(mail.to) ? mail.to : [mail.to];
    expect(to.flatMap((t) => t?.value.map((v) => v.address) ?? [])).toEqual([email]);
    expect(mail.subject).toBe("Your sign-in link");
    const token = LINK.exec(mail.text ?? "")?.[1] as string;
    expect(token).toBeDefined();
    const rows = await db.selectFrom("magic_links").selectAll().where("email", "=", email).execute();
    expect(rows).toEqual([
      {
        token_hash: createHash("sha256").update(token).digest("hex"),
        email,
        return_to: null,
        created_at: clock,
        expires_at: answer.expiresAt,
        used_at: null,
      },
    ]);
    expect(JSON.stringify(await db.selectFrom("magic_links").selectAll().execute())).not.toContain(token);
  });

  it("answers the same whether or not the address has an account, and looks none up", async () => {
    const known = fresh();
    await links.verify(await linkFor(known));
    const unknown = fresh();
    const accountsBefore = await db.selectFrom("accounts").select("id").execute();
    const a = await links.request({ email: known });
    const b = await links.request({ email: unknown });
    expect({ ...a, email: "x" }).toEqual({ ...b, email: "x" });
    expect(Object.keys(a).sort()).toEqual(["email", "expiresAt", "expiresInSeconds"]);
    // A request creates no account: only a verify does.
    expect(await db.selectFrom("accounts").select("id").execute()).toHaveLength(accountsBefore.length);
  });

  it("refuses a bad address or return_to with 422 naming the field, and stores nothing", async () => {
    const count = async () => (await db.selectFrom("magic_links").select("token_hash").execute()).length;
    const before = await count();
    expect(await refusal(links.request({ email: "not an address" }))).toMatchObject({ slug: "invalid-request", errors: [{ field: "email" }] });
    expect(await refusal(links.request({ email: fresh(), returnTo: "//evil.example" }))).toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "return_to" }],
    });
    expect(await count()).toBe(before);
  });

  it("the first verify of an address creates its account; every verify opens a browser session with actor session", async () => {
    const email = fresh();
    const first = await links.verify(await linkFor(email, "/auth/me?tab=keys"));
    expect(first).toMatchObject({ accountCreated: true, email, returnTo: "/auth/me?tab=keys", accountCreatedAt: clock });
    expect(first.accountId).toMatch(/^acct_/);
    expect(first.session.token).toMatch(/^sess_[0-9A-Za-z]{32}$/);
    expect(first.session.expiresAt).toEqual(new Date(clock.getTime() + 24 * 3600 * 1000));
    expect(await db.selectFrom("accounts").selectAll().where("id", "=", first.accountId).executeTakeFirst()).toEqual({
      id: first.accountId,
      created_at: clock,
      email,
    });
    const resolved = await identity.resolve(first.session.token);
    expect(resolved).toMatchObject({
      kind: "session",
      accountId: first.accountId,
      scope: "full",
      mode: "test",
      actor: "session",
      expiresAt: first.session.expiresAt,
    });
    const session = await db.selectFrom("sessions").selectAll().where("id", "=", first.session.id).executeTakeFirstOrThrow();
    expect(session.via).toBe("magic_link");
    expect(JSON.stringify(session)).not.toContain(first.session.token);

    clock = new Date(clock.getTime() + 1000);
    const again = await links.verify(await linkFor(email.toUpperCase()));
    expect(again).toMatchObject({ accountId: first.accountId, accountCreated: false, returnTo: null });
    expect(again.session.id).not.toBe(first.session.id);
    expect(await db.selectFrom("accounts").select("id").where("email", "=", email).execute()).toHaveLength(1);

    // Logging out of a magic-link session is recorded with the same actor.
    clock = new Date(clock.getTime() + 1000);
    await identity.endSession(first.accountId, first.session.id, resolved.actor);
    const events = await listAccountEvents(db, first.accountId, { size: 50 });
    expect(events.map((e) => [e.action, e.object_id, e.actor, e.test_mode, e.detail])).toEqual([
      ["session.ended", first.session.id, "session", false, {}],
      ["session.opened", again.session.id, "session", false, { via: "magic_link", email, expires_at: again.session.expiresAt.toISOString() }],
      expect.anything(),
      expect.anything(),
    ]);
    expect(events.slice(2).map((e) => [e.action, e.actor, e.detail])).toEqual(
      expect.arrayContaining([
        ["account.created", "session", { via: "magic_link", email }],
        ["session.opened", "session", { via: "magic_link", email, expires_at: first.session.expiresAt.toISOString() }],
      ]),
    );
    expect(JSON.stringify(events)).not.toContain(first.session.token);
  });

  it("a link works once: a second verify, even a concurrent one, is refused and opens no second session", async () => {
    const email = fresh();
    const token = await linkFor(email);
    const outcomes = await Promise.allSettled([links.verify(token), links.verify(token), links.verify(token)]);
    const won = outcomes.filter((o) => o.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const o of outcomes.filter((o) => o.status === "rejected")) expect((o as PromiseRejectedResult).reason).toMatchObject({ slug: "unauthenticated" });
    const accountId = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<MagicLinks["verify"]>>>).value.accountId;
    expect(await db.selectFrom("sessions").select("id").where("account_id", "=", accountId).execute()).toHaveLength(1);
    expect(await refusal(links.verify(token))).toMatchObject({ slug: "unauthenticated" });
  });

  it("two links of one new address verified at once make one account", async () => {
    const email = fresh();
    const [t1, t2] = [await linkFor(email), await linkFor(email)];
    const [a, b] = await Promise.all([links.verify(t1), links.verify(t2)]);
    expect(a.accountId).toBe(b.accountId);
    expect([a.accountCreated, b.accountCreated].sort()).toEqual([false, true]);
    expect(await db.selectFrom("accounts").select("id").where("email", "=", email).execute()).toHaveLength(1);
  });

  it("a link expires after 15 minutes; expired, unknown and malformed tokens are refused alike", async () => {
    const saved = clock;
    const inTime = await linkFor(fresh());
    const late = await linkFor(fresh());
    clock = new Date(saved.getTime() + MAGIC_LINK_TTL_SECONDS * 1000 - 1);
    await expect(links.verify(inTime)).resolves.toMatchObject({ accountCreated: true });
    clock = new Date(saved.getTime() + MAGIC_LINK_TTL_SECONDS * 1000);
    const expired = await refusal(links.verify(late));
    const unknown = await refusal(links.verify(`ml_${"A".repeat(43)}`));
    const malformed = await refusal(links.verify("'; drop table magic_links; --"));
    for (const r of [expired, unknown, malformed])
      expect(r).toMatchObject({ slug: "unauthenticated", message: "This sign-in link is unknown, already used or expired." });
    // The next request purges expired links.
    clock = new Date(clock.getTime() + 1);
    await links.request({ email: fresh() });
    expect((await db.selectFrom("magic_links").select("expires_at").execute()).every((l) => l.expires_at > clock)).toBe(true);
    clock = saved;
  });

  it("a magic-link account is the same kind of account as a wallet's: its session mints keys", async () => {
    const signedIn = await links.verify(await linkFor(fresh()));
    const { key, secret } = await identity.createKey(
      signedIn.accountId,
      { scope: "full", mode: "live" },
      { kind: "session", scope: "full", mode: "test" },
      "session",
    );
    expect(key.account_id).toBe(signedIn.accountId);
    expect(await identity.resolve(secret)).toMatchObject({ kind: "api_key", accountId: signedIn.accountId, mode: "live" });
  });
}

describeOnEachDatabase("magic-link sign-in", "identity", magicLinkContract);

/** smtp-server on 127.0.0.1 (no TLS, no auth): what arrives is parsed and kept. */
async function startSmtp() {
  const arrived: { to: string[]; text: string }[] = [];
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          arrived.push({ to: session.envelope.rcptTo.map((r) => r.address), text: parsed.text ?? "" });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as net.AddressInfo).port;
  return { port, arrived, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("magic-link sign-in with SMTP_URL set", () => {
  it("sends the link over SMTP to the normalised address, and the link signs in", async () => {
    const { EmbeddedPostgres } = await import("@c402/db");
    const pg = await EmbeddedPostgres.open();
    const smtp = await startSmtp();
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${smtp.port}`, dataDir: "/nonexistent", from: FROM });
    try {
      const database = pg.forSchema("identity");
      await migrate(database, identityMigrations);
      const links = new MagicLinks(database.db as IdentityDb, mailer, { baseUrl: BASE_URL }, silent);
      await links.request({ email: " Grace@Example.com" });
      expect(smtp.arrived).toHaveLength(1);
      expect(smtp.arrived[0]!.to).toEqual(["grace@example.com"]);
      const token = LINK.exec(smtp.arrived[0]!.text)?.[1] as string;
      await expect(links.verify(token)).resolves.toMatchObject({ accountCreated: true, email: "grace@example.com" });
    } finally {
      await mailer.close();
      await smtp.stop();
      await pg.close();
    }
  });

  it("answers 503 when the relay cannot be reached, logging why without the relay's password", async () => {
    const { EmbeddedPostgres } = await import("@c402/db");
    const pg = await EmbeddedPostgres.open();
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
    const closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const mailer = createMailer({ smtpUrl: `smtp://mailer:hunter2-secret@127.0.0.1:${closedPort}`, dataDir: "/nonexistent", from: FROM });
    const { logger, lines } = createCapturingLogger({ service: "identity-test", level: "warn" });
    try {
      const database = pg.forSchema("identity");
      await migrate(database, identityMigrations);
      const links = new MagicLinks(database.db as IdentityDb, mailer, { baseUrl: BASE_URL }, logger);
      expect(await refusal(links.request({ email: "grace@example.com" }))).toMatchObject({ slug: "unavailable" });
      expect(lines.join("")).toContain("a sign-in mail could not be sent");
      expect(lines.join("")).not.toContain("hunter2-secret");
    } finally {
      await mailer.close();
      await pg.close();
    }
  });
});
