import { sep53Sign } from "@c402/testkit";
import { Keypair, StrKey } from "@stellar/stellar-base";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call, newSeller, walletSession } from "../src/http";
import { STELLAR_ENABLED, stellarStandin } from "../src/stellar";

const problemShape = (status: number, slug: string) =>
  expect.objectContaining({
    type: expect.stringMatching(new RegExp(`/problems/${slug}$`)),
    title: expect.any(String),
    status,
    detail: expect.objectContaining({ message: expect.any(String), help: expect.any(Object) }),
    help: expect.objectContaining({ fix: expect.any(String), retry_is_safe: expect.any(Boolean) }),
  });

describe("service map, health, discovery", () => {
  it("GET / is a JSON map with every field the spec lists", async () => {
    const r = await call("GET", "/", { headers: { accept: "text/html" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    expect(r.body).toMatchObject({
      name: "c402",
      version: "0.0.0",
      status: "ok",
      what: expect.any(String),
      buying: expect.any(Object),
      selling: expect.any(Object),
    });
    expect(Object.keys(r.body.links).sort()).toEqual(["create", "create_checkout", "join_challenge", "join_verify", "llms", "mcp", "openapi", "site"]);
  });

  it("GET /health is liveness; ?deep=true reports database and bus per component", async () => {
    const live = await call("GET", "/health");
    expect(live.body).toMatchObject({ status: "ok", run_mode: process.env.E2E_RUN_MODE });
    const deep = await call("GET", "/health?deep=1");
    expect(deep.status).toBe(200);
    for (const s of ["identity", "catalog", "payments", "webhooks"]) {
      expect(deep.body.components[s]).toMatchObject({ status: "ok", components: { database: { status: "ok" }, bus: { status: "ok" } } });
    }
  });

  it("serves /openapi.json at version 0.0.0, /llms.txt and /.well-known/c402", async () => {
    const spec = await call("GET", "/openapi.json");
    expect(spec.body).toMatchObject({ openapi: "3.1.0", info: { version: "0.0.0" } });
    expect(spec.body.paths["/v1/checkouts"].post).toBeDefined();
    expect((await call("GET", "/llms.txt")).text).toContain("/c/{id}");
    expect((await call("GET", "/.well-known/c402")).body).toMatchObject({ name: "c402", x402: { schemes: ["exact"] } });
  });

  it("unknown paths are 404 problem documents", async () => {
    const r = await call("GET", "/nope");
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(r.body).toEqual(problemShape(404, "not-found"));
  });
});

describe("wallet sign-in", () => {
  it("challenge -> EIP-191 signature -> account, verified payout wallet and a test key with scope full", async () => {
    const s = await newSeller();
    expect(s.verified.status).toBe(201);
    expect(s.verified.body).toMatchObject({
      account: { id: expect.stringMatching(/^acct_/), created: true },
      api_key: { secret: expect.stringMatching(/^sk_test_/), scope: "full", mode: "test" },
      payout_wallet: { chain: "base", address: s.wallet.address, verified: true, default: true },
    });
  });

  it("signing in again later returns the same account with a fresh key (key recovery) and a session", async () => {
    const s = await newSeller();
    const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: s.wallet.address, network: "eip155:8453" } });
    const again = await call("POST", "/auth/wallet/verify", {
      body: { message: challenge.body.message, signature: await s.wallet.signMessage({ message: challenge.body.message }) },
    });
    expect(again.status).toBe(200);
    expect(again.body.account).toEqual({ id: s.accountId, created: false });
    expect(again.body.api_key.secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(again.body.api_key.secret).not.toBe(s.key);
    expect(again.body.session.token).toMatch(/^sess_/);
    expect((await call("GET", "/v1/keys", { key: s.key })).status).toBe(200);
    expect((await call("GET", "/v1/keys", { key: again.body.api_key.secret })).status).toBe(200);
    expect((await call("GET", "/v1/keys", { key: again.body.session.token })).status).toBe(200);
  });

  it("a challenge is single-use and a wrong signature is 401", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const c = await call("POST", "/auth/wallet/challenge", { body: { address: wallet.address, network: "eip155:8453" } });
    const wrong = await call("POST", "/auth/wallet/verify", {
      body: { message: c.body.message, signature: await privateKeyToAccount(generatePrivateKey()).signMessage({ message: c.body.message }) },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(problemShape(401, "unauthenticated"));
    const c2 = await call("POST", "/auth/wallet/challenge", { body: { address: wallet.address, network: "eip155:8453" } });
    const sig = await wallet.signMessage({ message: c2.body.message });
    expect((await call("POST", "/auth/wallet/verify", { body: { message: c2.body.message, signature: sig } })).status).toBe(201);
    expect((await call("POST", "/auth/wallet/verify", { body: { message: c2.body.message, signature: sig } })).status).toBe(401);
  });

  it("a Stellar account signs in: challenge -> SEP-53 signature (hex) -> account, key and its verified default Stellar payout wallet", async () => {
    const keypair = Keypair.random();
    const address = keypair.publicKey();
    const challenge = await call("POST", "/auth/wallet/challenge", { body: { address, network: "stellar:pubnet" } });
    expect(challenge.status).toBe(200);
    expect(challenge.body.message).toMatch(
      new RegExp(`wants you to sign in with your Stellar account:\n${address}\n[^]*\nChain ID: stellar:pubnet\nNonce: ${challenge.body.nonce}\n`),
    );
    const signature = sep53Sign(keypair, challenge.body.message).toString("hex");
    const created = await call("POST", "/auth/wallet/verify", { body: { message: challenge.body.message, signature } });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toMatch(/no-store/);
    expect(created.body).toMatchObject({
      account: { id: expect.stringMatching(/^acct_/), created: true },
      api_key: { secret: expect.stringMatching(/^sk_test_[0-9A-Za-z]{32}$/), scope: "full", mode: "test" },
      session: { token: expect.stringMatching(/^sess_/) },
      payout_wallet: { chain: "stellar", address, verified: true, default: true },
    });
    const key = created.body.api_key.secret as string;
    const wallets = await call("GET", "/v1/account/wallets", { key });
    expect(wallets.status).toBe(200);
    expect(wallets.body).toMatchObject({
      wallets: { base: null, solana: null, stellar: { address, verified: true, offered: true } },
      verified_wallets: [{ chain: "stellar", address }],
    });
    // The signed challenge is spent.
    const reused = await call("POST", "/auth/wallet/verify", { body: { message: challenge.body.message, signature } });
    expect(reused.status).toBe(401);
    expect(reused.body).toEqual(problemShape(401, "unauthenticated"));

    // Signing again (on the testnet, with the base64 a wallet such as Freighter answers) recovers access: the same account, a fresh key.
    const later = await call("POST", "/auth/wallet/challenge", { body: { address, network: "stellar:testnet" } });
    const again = await call("POST", "/auth/wallet/verify", {
      body: { message: later.body.message, signature: sep53Sign(keypair, later.body.message).toString("base64") },
    });
    expect(again.status).toBe(200);
    expect(again.body.account).toEqual({ id: created.body.account.id, created: false });
    expect(again.body.api_key.secret).not.toBe(key);
    const keys = await call("GET", "/v1/keys", { key: again.body.api_key.secret });
    expect(keys.status).toBe(200);
    expect(keys.body.keys).toHaveLength(2);

    const body = { title: "Stellar-only seller", price_usd: "0.10", payload: { ok: true } };
    if (STELLAR_ENABLED) {
      // Where Stellar settles, the wallet the checkout would copy is checked first: a fresh account has no USDC trustline.
      const untrusted = await call("POST", "/v1/checkouts", { key, body });
      expect(untrusted.status).toBe(422);
      expect(untrusted.body).toMatchObject({ chain: "stellar", address, type: expect.stringMatching(/payout-account-missing$/) });
      await (await stellarStandin()).fundWithUsdc(address, 0n);
    }
    // With no EVM wallet, a checkout needs its pay_to named: 422, not a server error.
    const checkout = await call("POST", "/v1/checkouts", { key, body });
    expect(checkout.status).toBe(422);
    expect(checkout.body.errors).toEqual([expect.objectContaining({ field: "pay_to" })]);
  });

  it("a Stellar sign-in refuses another key's or a raw signature (401), a malformed one (422) and a muxed or contract address (422)", async () => {
    const keypair = Keypair.random();
    const c = await call("POST", "/auth/wallet/challenge", { body: { address: keypair.publicKey(), network: "stellar:testnet" } });
    const verify = (signature: string) => call("POST", "/auth/wallet/verify", { body: { message: c.body.message, signature } });
    const otherKey = await verify(sep53Sign(Keypair.random(), c.body.message).toString("hex"));
    expect(otherKey.status).toBe(401);
    expect(otherKey.body).toEqual(problemShape(401, "unauthenticated"));
    expect((await verify(keypair.sign(Buffer.from(c.body.message)).toString("hex"))).status).toBe(401);
    const short = await verify(sep53Sign(keypair, c.body.message).toString("hex").slice(2));
    expect(short.status).toBe(422);
    expect(short.body).toEqual(problemShape(422, "invalid-request"));
    expect(short.body.errors).toEqual([expect.objectContaining({ field: "signature", reason: expect.stringMatching(/128 hex digits/) })]);
    // None of those spent the challenge.
    expect((await verify(sep53Sign(keypair, c.body.message).toString("hex"))).status).toBe(201);

    for (const [address, reason] of [
      [StrKey.encodeMed25519PublicKey(Buffer.alloc(40, 7)), /muxed account/],
      [StrKey.encodeContract(Buffer.alloc(32, 7)), /contract address/],
    ] as const) {
      const r = await call("POST", "/auth/wallet/challenge", { body: { address, network: "stellar:pubnet" } });
      expect(r.status).toBe(422);
      expect(r.body.errors).toEqual([expect.objectContaining({ field: "address", reason: expect.stringMatching(reason) })]);
    }
  });

  it.each([
    ["/auth/wallet/challenge", { address: "0x1", network: "eip155:8453" }, "address"],
    ["/auth/wallet/challenge", { address: "0x" + "1".repeat(40), network: "x" }, "network"],
    ["/auth/wallet/challenge", { address: "0x" + "1".repeat(40), network: "eip155:8453", extra: 1 }, "extra"],
    ["/auth/wallet/verify", { message: "", signature: "0x1" }, "message"],
    ["/auth/wallet/verify", { message: "m", signature: "0x" + "a".repeat(2050) }, "signature"],
    ["/auth/wallet/verify", { message: "m".repeat(4001), signature: "0x1" }, "message"],
  ])("%s enforces the spec's limits with 422 (%#)", async (path, body, field) => {
    const r = await call("POST", path, { body });
    expect(r.status).toBe(422);
    expect(r.body).toEqual(problemShape(422, "invalid-request"));
    expect(r.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it("malformed JSON is a 400 problem", async () => {
    const r = await call("POST", "/auth/wallet/challenge", { body: "{nope" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(problemShape(400, "bad-request"));
  });
});

describe("API keys and scopes", () => {
  it("401 for a missing, malformed, unknown or revoked key", async () => {
    const s = await newSeller();
    const created = await call("POST", "/v1/keys", { key: s.key, body: { name: "temp", scope: "read_only" } });
    await call("DELETE", `/v1/keys/${created.body.id}`, { key: s.key });
    for (const headers of <Record<string, string>[]>[
      {},
      { authorization: "Basic abc" },
      { authorization: "Bearer sk_test_short" },
      { authorization: `Bearer sk_test_${"a".repeat(32)}` },
      { authorization: `Bearer ${created.body.secret}` },
    ]) {
      const r = await call("GET", "/v1/checkouts", { headers });
      expect(r.status).toBe(401);
      expect(r.body).toEqual(problemShape(401, "unauthenticated"));
    }
  });

  it("403 names the scope the endpoint needs", async () => {
    const s = await newSeller();
    const readOnly = (await call("POST", "/v1/keys", { key: s.key, body: { scope: "read_only" } })).body.secret;
    const payments = (await call("POST", "/v1/keys", { key: s.key, body: { scope: "payments", mode: "test" } })).body.secret;
    const create = await call("POST", "/v1/checkouts", { key: readOnly, body: { title: "t", price_usd: "1" } });
    expect(create.status).toBe(403);
    expect(create.body).toEqual(problemShape(403, "forbidden"));
    expect(create.body.detail.message).toContain("payments");
    const mint = await call("POST", "/v1/keys", { key: payments, body: {} });
    expect(mint.status).toBe(403);
    expect(mint.body.detail.message).toContain("full");
    expect((await call("GET", "/v1/checkouts", { key: readOnly })).status).toBe(200);
  });

  it("creates keys (secret once, default scope payments, mode test), lists prefixes only, revokes at once", async () => {
    const s = await newSeller();
    const k = await call("POST", "/v1/keys", { key: s.key, body: { name: "ci" } });
    expect(k.status).toBe(201);
    expect(k.body).toMatchObject({
      id: expect.stringMatching(/^key_/),
      name: "ci",
      scope: "payments",
      mode: "test",
      secret: expect.stringMatching(/^sk_test_/),
    });
    // A test key mints test keys only; the wallet session may mint a live one.
    const live = await call("POST", "/v1/keys", { key: await walletSession(s.wallet), body: { mode: "live", scope: "full" } });
    expect(live.body.secret).toMatch(/^sk_live_/);
    const list = await call("GET", "/v1/keys", { key: s.key });
    expect(list.body.keys.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([k.body.id, live.body.id]));
    expect(list.text).not.toContain(k.body.secret);
    expect(list.text).not.toContain(live.body.secret);
    expect(list.body.keys[0]).not.toHaveProperty("secret");
    expect((await call("DELETE", `/v1/keys/${k.body.id}`, { key: s.key })).status).toBe(204);
    expect((await call("GET", "/v1/keys", { key: k.body.secret })).status).toBe(401);
    expect((await call("DELETE", "/v1/keys/key_unknown", { key: s.key })).status).toBe(404);
  });

  it("422 for unknown or invalid key fields", async () => {
    const s = await newSeller();
    const r = await call("POST", "/v1/keys", { key: s.key, body: { scope: "admin", colour: "red" } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual(
      expect.arrayContaining([
        { field: "scope", reason: expect.any(String) },
        { field: "colour", reason: "is not a known field" },
      ]),
    );
  });
});
