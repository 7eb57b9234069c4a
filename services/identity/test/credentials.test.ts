import { EmbeddedPostgres, migrate } from "@c402/db";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { identityMigrations } from "../src";
import { isWellFormedApiKey, type MintingCredential } from "../src/domain/api-keys";
import { Identity } from "../src/domain/identity";
import { SESSION_TTL_SECONDS } from "../src/domain/sessions";
import type { IdentityDb } from "../src/store/identity-store";

describe("identity: sessions, minting rule, challenge hygiene", () => {
  let pg: EmbeddedPostgres;
  let db: IdentityDb;
  let identity: Identity;
  let clock = new Date("2026-11-22T10:00:00Z");
  const TTL = 600;

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("identity");
    await migrate(database, identityMigrations);
    db = database.db as IdentityDb;
    identity = new Identity(db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: TTL }, () => clock);
  });
  afterAll(() => pg.close());

  async function signIn(wallet = privateKeyToAccount(generatePrivateKey())) {
    const challenge = await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
    const signature = await wallet.signMessage({ message: challenge.message });
    return { wallet, result: await identity.verifySignature({ message: challenge.message, signature }) };
  }

  async function accountWithSession() {
    const first = await signIn();
    if (!first.result.accountCreated) throw new Error("a fresh wallet must create an account");
    const later = await signIn(first.wallet);
    if (later.result.accountCreated) throw new Error("a later sign-in must not create an account");
    return { accountId: first.result.accountId, key: first.result.secret, session: later.result.session };
  }

  describe("wallet sessions", () => {
    it("a later sign-in opens a 24 h session: sess_ + 32 base62, never a well-formed key, resolving to scope full in test mode", async () => {
      const { accountId, session } = await accountWithSession();
      expect(SESSION_TTL_SECONDS).toBe(24 * 3600);
      expect(session.token).toMatch(/^sess_[0-9A-Za-z]{32}$/);
      expect(isWellFormedApiKey(session.token)).toBe(false);
      expect(session.expiresAt.getTime() - clock.getTime()).toBe(SESSION_TTL_SECONDS * 1000);
      const resolved = await identity.resolve(session.token);
      expect(resolved).toMatchObject({ kind: "session", accountId, scope: "full", mode: "test", prefix: session.token.slice(0, 12) });
      expect(resolved.id).toMatch(/^ses_/);
      const stored = await db.selectFrom("sessions").selectAll().where("id", "=", resolved.id).executeTakeFirstOrThrow();
      expect(JSON.stringify(stored)).not.toContain(session.token);
    });

    it("refuses an expired session and an unknown one as unauthenticated", async () => {
      const { session } = await accountWithSession();
      const saved = clock;
      clock = new Date(session.expiresAt.getTime() - 1);
      await expect(identity.resolve(session.token)).resolves.toMatchObject({ kind: "session" });
      clock = session.expiresAt;
      await expect(identity.resolve(session.token)).rejects.toMatchObject({ slug: "unauthenticated" });
      clock = saved;
      await expect(identity.resolve(`sess_${"a".repeat(32)}`)).rejects.toMatchObject({ slug: "unauthenticated" });
    });

    it("logout ends the session at once; ending it again answers the first end; nobody ends another account's session", async () => {
      const { accountId, session } = await accountWithSession();
      const { id } = await identity.resolve(session.token);
      const endedAt = await identity.endSession(accountId, id, "wallet");
      expect(endedAt).toEqual(clock);
      await expect(identity.resolve(session.token)).rejects.toMatchObject({ slug: "unauthenticated" });
      clock = new Date(clock.getTime() + 5_000);
      expect(await identity.endSession(accountId, id, "wallet")).toEqual(endedAt);
      const other = await accountWithSession();
      const otherId = (await identity.resolve(other.session.token)).id;
      await expect(identity.endSession(accountId, otherId, "wallet")).rejects.toMatchObject({ slug: "not-found" });
      await expect(identity.resolve(other.session.token)).resolves.toMatchObject({ kind: "session" });
      await expect(identity.endSession(accountId, "not-a-session-id", "wallet")).rejects.toMatchObject({ slug: "not-found" });
    });

    it("purges expired sessions when a new one opens", async () => {
      const old = await accountWithSession();
      const saved = clock;
      clock = new Date(old.session.expiresAt.getTime() + 1);
      await accountWithSession();
      const hashes = await db.selectFrom("sessions").select("expires_at").execute();
      expect(hashes.every((s) => s.expires_at > clock)).toBe(true);
      clock = saved;
    });
  });

  describe("a key never mints a key more powerful than itself", () => {
    const testFull: MintingCredential = { kind: "api_key", scope: "full", mode: "test" };
    const liveFull: MintingCredential = { kind: "api_key", scope: "full", mode: "live" };
    const session: MintingCredential = { kind: "session", scope: "full", mode: "test" };

    it("a test key mints test keys only: a live key is refused with 403 naming why", async () => {
      const { accountId } = await accountWithSession();
      await expect(identity.createKey(accountId, { scope: "full", mode: "test" }, testFull, "wallet")).resolves.toMatchObject({ key: { mode: "test" } });
      const refused = await identity.createKey(accountId, { scope: "read_only", mode: "live" }, testFull, "wallet").catch((e: unknown) => e);
      expect(refused).toMatchObject({ slug: "forbidden", message: expect.stringContaining("A test key cannot mint a live key") });
    });

    it("a live full key and a wallet session may mint either mode", async () => {
      const { accountId } = await accountWithSession();
      for (const by of [liveFull, session]) {
        for (const mode of ["test", "live"] as const) {
          await expect(identity.createKey(accountId, { scope: "full", mode }, by, "wallet")).resolves.toMatchObject({ key: { mode, scope: "full" } });
        }
      }
    });

    it("no key mints a scope above its own", async () => {
      const { accountId } = await accountWithSession();
      const payments: MintingCredential = { kind: "api_key", scope: "payments", mode: "live" };
      await expect(identity.createKey(accountId, { scope: "full", mode: "test" }, payments, "wallet")).rejects.toMatchObject({ slug: "forbidden" });
      await expect(identity.createKey(accountId, { scope: "payments", mode: "live" }, payments, "wallet")).resolves.toBeDefined();
    });
  });

  describe("wallet challenges", () => {
    it("state their lifetime and purge expired challenges, a bounded batch per creation", async () => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const c = await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
      expect(c.expiresInSeconds).toBe(TTL);
      expect(c.expiresAt.getTime() - clock.getTime()).toBe(TTL * 1000);

      const saved = clock;
      const expired = Array.from({ length: 150 }, (_, i) => ({
        nonce: `expired${String(i).padStart(17, "0")}`,
        address: wallet.address,
        network: "eip155:8453",
        message: "m",
        expires_at: new Date(clock.getTime() - 1000),
      }));
      await db.insertInto("wallet_challenges").values(expired).execute();
      const countExpired = async () =>
        Number(
          (
            await db
              .selectFrom("wallet_challenges")
              .select((eb) => eb.fn.countAll().as("n"))
              .where("expires_at", "<=", clock)
              .executeTakeFirstOrThrow()
          ).n,
        );
      expect(await countExpired()).toBe(150);
      await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
      expect(await countExpired()).toBe(50);
      await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
      expect(await countExpired()).toBe(0);
      // Unexpired challenges stay, so the first one can still be signed.
      expect(await db.selectFrom("wallet_challenges").select("nonce").where("nonce", "=", c.nonce).executeTakeFirst()).toBeDefined();
      clock = saved;
    });

    it("refuse a mixed-case address with a wrong EIP-55 checksum (422 naming address); lowercase, uppercase and checksummed pass", async () => {
      const address = getAddress(privateKeyToAccount(generatePrivateKey()).address);
      // One letter's case flipped, keeping the address mixed-case: a typo the checksum catches.
      const flipped = [...address.slice(2)].map((_, i) => {
        const hex = address.slice(2);
        const ch = hex[i]!;
        return `0x${hex.slice(0, i)}${ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()}${hex.slice(i + 1)}`;
      });
      const wrong = flipped.find((a) => a !== address && /[a-f]/.test(a.slice(2)) && /[A-F]/.test(a.slice(2)))!;
      expect(wrong.toLowerCase()).toBe(address.toLowerCase());
      const err = await identity.createChallenge({ address: wrong, network: "eip155:8453" }).catch((e: unknown) => e);
      expect(err).toMatchObject({ slug: "invalid-request", errors: [{ field: "address", reason: expect.stringContaining("EIP-55") }] });
      for (const ok of [address, address.toLowerCase(), `0x${address.slice(2).toUpperCase()}`]) {
        await expect(identity.createChallenge({ address: ok, network: "eip155:8453" })).resolves.toMatchObject({ message: expect.stringContaining(address) });
      }
    });
  });
});
