import { createHash } from "node:crypto";
import { EmbeddedPostgres, migrate } from "@c402/db";
import { sep53Sign } from "@c402/testkit";
import { Keypair, StrKey } from "@stellar/stellar-base";
import { identityMigrations } from "../src";
import { listAccountEvents } from "../src/domain/account-events";
import { hashApiKey } from "../src/domain/api-keys";
import { Identity } from "../src/domain/identity";
import { sep53Digest, walletSigned } from "../src/domain/wallet-signatures";
import type { IdentityDb } from "../src/store/identity-store";

/** SEP-53's test cases (ecosystem/sep-0053.md, version 1.0.0): one seed, two text messages. */
const SEP53_SEED = "SAKICEVQLYWGSOJS4WW7HZJWAHZVEEBS527LHK5V4MLJALYKICQCJXMW";
const SEP53_ADDRESS = "GBXFXNDLV4LSWA4VB7YIL5GBD7BVNR22SGBTDKMO2SBZZHDXSKZYCP7L";
const SEP53_VECTORS = [
  {
    message: "Hello, World!",
    hex: "7cee5d6d885752104c85eea421dfdcb95abf01f1271d11c4bec3fcbd7874dccd6e2e98b97b8eb23b643cac4073bb77de5d07b0710139180ae9f3cbba78f2ba04",
    base64: "fO5dbYhXUhBMhe6kId/cuVq/AfEnHRHEvsP8vXh03M1uLpi5e46yO2Q8rEBzu3feXQewcQE5GArp88u6ePK6BA==",
  },
  {
    message: "こんにちは、世界！",
    hex: "083536eb95ecf32dce59b07fe7a1fd8cf814b2ce46f40d2a16e4ea1f6cecd980e04e6fbef9d21f98011c785a81edb85f3776a6e7d942b435eb0adc07da4d4604",
    base64: "CDU265Xs8y3OWbB/56H9jPgUss5G9A0qFuTqH2zs2YDgTm+++dIfmAEceFqB7bhfN3am59lCtDXrCtwH2k1GBA==",
  },
];

describe("SEP-53 signatures (Stellar's sign message)", () => {
  it.each(SEP53_VECTORS)("matches the SEP's test vector for $message", async ({ message, hex, base64 }) => {
    const keypair = Keypair.fromSecret(SEP53_SEED);
    expect(keypair.publicKey()).toBe(SEP53_ADDRESS);
    // ed25519 is deterministic: the SDK keypair over our digest gives the SEP's bytes.
    expect(keypair.sign(sep53Digest(message)).toString("hex")).toBe(hex);
    // The signer the tests below use is SEP-53 too.
    expect(sep53Sign(keypair, message).toString("hex")).toBe(hex);
    for (const signature of [hex, hex.toUpperCase(), `0x${hex}`, base64]) {
      expect(await walletSigned("stellar", SEP53_ADDRESS, message, signature)).toBe(true);
    }
    expect(await walletSigned("stellar", SEP53_ADDRESS, `${message} `, hex)).toBe(false);
  });
});

describe("identity: Stellar wallet sign-in", () => {
  let pg: EmbeddedPostgres;
  let db: IdentityDb;
  let identity: Identity;
  let clock = new Date("2026-11-22T10:00:00Z");

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("identity");
    await migrate(database, identityMigrations);
    db = database.db as IdentityDb;
    identity = new Identity(db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: 600 }, () => clock);
  });
  afterAll(() => pg.close());

  const challengeFor = (keypair: Keypair, network = "stellar:pubnet") => identity.createChallenge({ address: keypair.publicKey(), network });

  async function signIn(keypair = Keypair.random(), network = "stellar:pubnet", encode = (s: Buffer) => s.toString("hex")) {
    const challenge = await challengeFor(keypair, network);
    return {
      keypair,
      challenge,
      result: await identity.verifySignature({ message: challenge.message, signature: encode(sep53Sign(keypair, challenge.message)) }),
    };
  }

  const refusal = (message: string, signature: string) => identity.verifySignature({ message, signature }).catch((e: unknown) => e);

  it("the challenge is a readable sign-in message naming the service, the account, the network, a nonce and its life", async () => {
    const keypair = Keypair.random();
    const c = await challengeFor(keypair, "stellar:testnet");
    expect(c.message.split("\n")).toEqual([
      "127.0.0.1:4020 wants you to sign in with your Stellar account:",
      keypair.publicKey(),
      "",
      expect.stringMatching(/will not trigger a blockchain transaction/),
      "",
      "URI: http://127.0.0.1:4020",
      "Version: 1",
      "Chain ID: stellar:testnet",
      `Nonce: ${c.nonce}`,
      `Issued At: ${clock.toISOString()}`,
      `Expiration Time: ${new Date(clock.getTime() + 600_000).toISOString()}`,
    ]);
    expect(c.expiresInSeconds).toBe(600);
  });

  it("creates an account, a test key with scope full and the wallet as the verified default Stellar payout wallet; records account.created", async () => {
    const { keypair, result } = await signIn();
    expect(result.accountCreated).toBe(true);
    expect(result.accountId).toMatch(/^acct_/);
    expect(result.secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(result.key).toMatchObject({ scope: "full", mode: "test", name: "wallet sign-in", secret_hash: hashApiKey(result.secret) });
    expect(result.wallet).toMatchObject({ chain_family: "stellar", address: keypair.publicKey(), verified: true, is_default: true });
    expect(await identity.payoutWallets(result.accountId)).toEqual([expect.objectContaining({ chain_family: "stellar", address: keypair.publicKey() })]);
    expect(await identity.resolve(result.secret)).toMatchObject({ kind: "api_key", accountId: result.accountId });
    const events = await listAccountEvents(db, result.accountId, { size: 10 });
    expect(events.map((e) => e.action).sort()).toEqual(["account.created", "key.created", "session.opened"]);
    expect(events.find((e) => e.action === "account.created")?.detail).toEqual({ via: "wallet", chain_family: "stellar", address: keypair.publicKey() });
  });

  it("signing again (on either network, hex or base64) reaches the same account and mints a fresh key", async () => {
    const first = await signIn();
    const again = await signIn(first.keypair, "stellar:testnet", (s) => s.toString("base64"));
    expect(again.result.accountCreated).toBe(false);
    expect(again.result.accountId).toBe(first.result.accountId);
    expect(again.result.secret).not.toBe(first.result.secret);
    const third = await signIn(first.keypair, "stellar:pubnet", (s) => `0x${s.toString("hex").toUpperCase()}`);
    expect(third.result.accountId).toBe(first.result.accountId);
    expect((await identity.listKeys(first.result.accountId, { size: 10 })).map((k) => k.id).sort()).toEqual(
      [first.result.key.id, again.result.key.id, third.result.key.id].sort(),
    );
    expect(await identity.payoutWallets(first.result.accountId)).toHaveLength(1);
  });

  it("refuses a tampered message, another key's signature, a raw (non-SEP-53) signature and a reused or expired challenge with 401", async () => {
    const keypair = Keypair.random();
    const c1 = await challengeFor(keypair);
    const tampered = c1.message.replace("Version: 1", "Version: 2");
    expect(await refusal(tampered, sep53Sign(keypair, tampered).toString("hex"))).toMatchObject({ slug: "unauthenticated" });
    expect(await refusal(c1.message, sep53Sign(Keypair.random(), c1.message).toString("hex"))).toMatchObject({ slug: "unauthenticated" });
    // What a wallet without SEP-53 would sign: the message bytes, or their hash without the prefix.
    expect(await refusal(c1.message, keypair.sign(Buffer.from(c1.message)).toString("hex"))).toMatchObject({ slug: "unauthenticated" });
    const unprefixed = keypair.sign(createHash("sha256").update(c1.message).digest()).toString("hex");
    expect(await refusal(c1.message, unprefixed)).toMatchObject({ slug: "unauthenticated" });
    // None of those used the challenge up: the right signature still signs in, once.
    const signature = sep53Sign(keypair, c1.message).toString("hex");
    expect((await identity.verifySignature({ message: c1.message, signature })).accountCreated).toBe(true);
    expect(await refusal(c1.message, signature)).toMatchObject({ slug: "unauthenticated" });

    const c2 = await challengeFor(keypair);
    const saved = clock;
    clock = new Date(clock.getTime() + 601_000);
    expect(await refusal(c2.message, sep53Sign(keypair, c2.message).toString("hex"))).toMatchObject({ slug: "unauthenticated" });
    clock = saved;
  });

  it.each([
    ["127 hex digits", (hex: string) => hex.slice(1)],
    ["130 hex digits", (hex: string) => `${hex}00`],
    ["an EVM signature's 65 bytes", () => `0x${"11".repeat(65)}`],
    ["the base64 of 63 bytes", (hex: string) => Buffer.from(hex, "hex").subarray(1).toString("base64")],
    ["base64 characters, 128 of them", () => "z".repeat(128)],
  ])("refuses a signature of %s with 422 naming signature, leaving the challenge usable", async (_, mangle) => {
    const keypair = Keypair.random();
    const c = await challengeFor(keypair);
    const hex = sep53Sign(keypair, c.message).toString("hex");
    expect(await refusal(c.message, mangle(hex))).toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "signature", reason: expect.stringMatching(/64-byte ed25519 signature \(SEP-53\)/) }],
    });
    expect((await identity.verifySignature({ message: c.message, signature: hex })).accountCreated).toBe(true);
  });

  it("refuses text that is no encoding of a signature before looking the challenge up (422)", async () => {
    const c = await challengeFor(Keypair.random());
    expect(await refusal(c.message, "not a signature!")).toMatchObject({ slug: "invalid-request", errors: [{ field: "signature" }] });
  });

  it("an EVM challenge still wants 0x-prefixed hex (a Stellar-style signature is 422)", async () => {
    const c = await identity.createChallenge({ address: `0x${"ab".repeat(20)}`, network: "eip155:8453" });
    expect(c.message).toContain("sign in with your Ethereum account");
    expect(await refusal(c.message, "ab".repeat(65))).toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "signature", reason: expect.stringMatching(/0x-prefixed/) }],
    });
  });

  const G = Keypair.random().publicKey();
  it.each([
    ["a muxed account (M…)", () => ({ address: StrKey.encodeMed25519PublicKey(Buffer.alloc(40, 7)), network: "stellar:pubnet" }), "address", /muxed account/],
    ["a contract (C…)", () => ({ address: StrKey.encodeContract(Buffer.alloc(32, 7)), network: "stellar:pubnet" }), "address", /contract address/],
    ["a mistyped account id", () => ({ address: `${G.slice(0, 55)}${G.endsWith("A") ? "B" : "A"}`, network: "stellar:testnet" }), "address", /checksum/],
    ["an EVM address on Stellar", () => ({ address: `0x${"ab".repeat(20)}`, network: "stellar:pubnet" }), "address", /Stellar account id/],
    ["a Stellar account on an EVM network", () => ({ address: G, network: "eip155:8453" }), "address", /EVM address/],
    ["an unknown Stellar network", () => ({ address: G, network: "stellar:futurenet" }), "network", /stellar:pubnet or stellar:testnet/],
    ["Solana", () => ({ address: G, network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" }), "network", /CAIP-2/],
  ])("refuses %s with 422 naming the field and why", async (_, input, field, reason) => {
    const err = await identity.createChallenge(input()).catch((e: unknown) => e);
    expect(err).toMatchObject({ slug: "invalid-request", errors: [{ field, reason: expect.stringMatching(reason) }] });
  });
});
