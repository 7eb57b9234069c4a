import { EmbeddedPostgres, migrate } from "@c402/db";
import { ProblemError } from "@c402/problems";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hashApiKey } from "../src/domain/api-keys";
import { Identity } from "../src/domain/identity";
import { identityMigrations } from "../src";

describe("identity: wallet sign-in and API keys", () => {
  let pg: EmbeddedPostgres;
  let identity: Identity;
  let clock = new Date("2026-11-22T10:00:00Z");

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("identity");
    await migrate(database, identityMigrations);
    identity = new Identity(database.db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: 600 }, () => clock);
  });
  afterAll(() => pg.close());

  async function signIn(wallet = privateKeyToAccount(generatePrivateKey())) {
    const challenge = await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
    const signature = await wallet.signMessage({ message: challenge.message });
    return { wallet, challenge, result: await identity.verifySignature({ message: challenge.message, signature }) };
  }

  /** The first sign-in of a fresh wallet: it creates the account and mints its first key. */
  async function firstSignIn() {
    const signedIn = await signIn();
    if (!signedIn.result.accountCreated) throw new Error("a fresh wallet must create an account");
    return { ...signedIn, result: signedIn.result };
  }

  it("creates an account, a verified default payout wallet and a test key with scope full", async () => {
    const { wallet, challenge, result } = await firstSignIn();
    expect(challenge.message).toContain(wallet.address);
    expect(challenge.message).toContain("Chain ID: 8453");
    expect(result.accountCreated).toBe(true);
    expect(result.accountId).toMatch(/^acct_/);
    expect(result.secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(result.key).toMatchObject({ scope: "full", mode: "test", prefix: result.secret.slice(0, 12) });
    expect(result.key.secret_hash).toBe(hashApiKey(result.secret));
    expect(result.wallet).toMatchObject({ chain_family: "eip155", address: wallet.address, verified: true, is_default: true });
    expect(await identity.payoutWallets(result.accountId)).toHaveLength(1);
  });

  it("signing again later reaches the same account and mints a fresh key (key recovery), with a session beside it", async () => {
    const first = await firstSignIn();
    const second = await signIn(first.wallet);
    expect(second.result.accountCreated).toBe(false);
    expect(second.result.accountId).toBe(first.result.accountId);
    expect(second.result.secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(second.result.secret).not.toBe(first.result.secret);
    expect(second.result.key).toMatchObject({ account_id: first.result.accountId, scope: "full", mode: "test", name: "wallet sign-in" });
    expect(second.result.session.token).toMatch(/^sess_[0-9A-Za-z]{32}$/);
    expect(second.result.session.expiresAt).toEqual(new Date(clock.getTime() + 24 * 3600 * 1000));
    expect((await identity.listKeys(first.result.accountId, { size: 1000 })).map((k) => k.id).sort()).toEqual(
      [first.result.key.id, second.result.key.id].sort(),
    );
    expect(await identity.resolve(second.result.secret)).toMatchObject({ kind: "api_key", accountId: first.result.accountId, id: second.result.key.id });
    expect(await identity.resolve(first.result.secret)).toMatchObject({ kind: "api_key", accountId: first.result.accountId });
    expect(await identity.resolve(second.result.session.token)).toMatchObject({
      kind: "session",
      accountId: first.result.accountId,
      scope: "full",
      mode: "test",
    });
  });

  it("a challenge is single-use", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const challenge = await identity.createChallenge({ address: wallet.address, network: "eip155:84532" });
    const signature = await wallet.signMessage({ message: challenge.message });
    await identity.verifySignature({ message: challenge.message, signature });
    await expect(identity.verifySignature({ message: challenge.message, signature })).rejects.toMatchObject({ slug: "unauthenticated" });
  });

  it("refuses an expired challenge, a wrong signer and a tampered message", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const c1 = await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
    await expect(identity.verifySignature({ message: c1.message, signature: await other.signMessage({ message: c1.message }) })).rejects.toMatchObject({
      slug: "unauthenticated",
    });
    const c2 = await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
    const tampered = c2.message.replace("Version: 1", "Version: 2");
    await expect(identity.verifySignature({ message: tampered, signature: await wallet.signMessage({ message: tampered }) })).rejects.toMatchObject({
      slug: "unauthenticated",
    });
    const c3 = await identity.createChallenge({ address: wallet.address, network: "eip155:8453" });
    const sig = await wallet.signMessage({ message: c3.message });
    const saved = clock;
    clock = new Date(clock.getTime() + 601_000);
    await expect(identity.verifySignature({ message: c3.message, signature: sig })).rejects.toMatchObject({ slug: "unauthenticated" });
    clock = saved;
  });

  it.each([
    [{ address: "0x1", network: "eip155:8453" }, "address"],
    [{ address: "x".repeat(129), network: "eip155:8453" }, "address"],
    [{ address: "0x" + "1".repeat(40), network: "e1" }, "network"],
    [{ address: "0x" + "1".repeat(40), network: "e".repeat(65) }, "network"],
    [{ address: "0x" + "1".repeat(40), network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" }, "network"],
    [{ address: "not-an-address", network: "eip155:8453" }, "address"],
  ])("rejects challenge input %j with 422 naming %s", async (input, field) => {
    const err = await identity.createChallenge(input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ slug: "invalid-request", errors: [expect.objectContaining({ field })] });
  });

  it.each([
    [{ message: "", signature: "0x12" }, "message"],
    [{ message: "x".repeat(4001), signature: "0x12" }, "message"],
    [{ message: "m", signature: "" }, "signature"],
    [{ message: "m", signature: "0x" + "1".repeat(2047) }, "signature"],
    [{ message: "m", signature: "zz" }, "signature"],
  ])("rejects verify input with 422 naming the field (%#)", async (input, field) => {
    await expect(identity.verifySignature(input)).rejects.toMatchObject({ slug: "invalid-request", errors: [expect.objectContaining({ field })] });
  });

  it("creates, lists (prefix only) and revokes keys; revoked keys stop resolving at once", async () => {
    const { result } = await firstSignIn();
    const created = await identity.createKey(
      result.accountId,
      { name: "ci", scope: "read_only", mode: "live" },
      { kind: "session", scope: "full", mode: "test" },
      "wallet",
    );
    expect(created.secret).toMatch(/^sk_live_/);
    const listed = await identity.listKeys(result.accountId, { size: 1000 });
    expect(listed.map((k) => k.id)).toEqual(expect.arrayContaining([created.key.id, result.key.id]));
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    await identity.revokeKey(result.accountId, created.key.id, "wallet");
    await expect(identity.resolve(created.secret)).rejects.toMatchObject({ slug: "unauthenticated" });
    await expect(identity.revokeKey("acct_other", result.key.id, "wallet")).rejects.toMatchObject({ slug: "not-found" });
  });

  it("rejects malformed and unknown keys as unauthenticated", async () => {
    for (const secret of ["", "sk_test_short", "Bearer x", `sk_prod_${"a".repeat(32)}`, `sk_test_${"a".repeat(32)}`]) {
      await expect(identity.resolve(secret)).rejects.toMatchObject({ slug: "unauthenticated" });
    }
  });
});
