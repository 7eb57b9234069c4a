import { randomBytes } from "node:crypto";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call, callFrom, newSeller, otherLoopbackAddress, walletSession, type Reply } from "../src/http";

/**
 * Credentials and their edges: failed-authentication limits (per client
 * address and per key prefix, X-Forwarded-For untrusted by default), wallet
 * sign-in (first key once, then sessions), the minting rule, EIP-55.
 * The target runs with the default TRUST_PROXY (none). The failure limit
 * (AUTH_FAILURE_LIMIT_PER_MINUTE, 20 unless the target raises it) is found by
 * failing until refused, so these tests hold whatever the target sets. Clients
 * that must be limited call from their own loopback address, so no other test
 * is refused.
 */
/** Failures sent before giving up on a refusal: above any limit a test target sets. */
const MAX_FAILURES = 2_500;

const base62 = (n: number) =>
  randomBytes(n * 2)
    .toString("base64")
    .replace(/[^0-9A-Za-z]/g, "")
    .slice(0, n);
/** A well-formed key that does not exist, under a chosen 12-character prefix. */
const unknownKey = (prefix = `sk_test_${base62(4)}`) => `${prefix}${base62(32 - (prefix.length - 8))}`;

/** Sends failing authentications until one is refused with 429; every earlier one must be 401. Returns how many failed first. */
async function failUntilRefused(fail: (i: number) => Promise<Reply>): Promise<{ failures: number; refusal: Reply }> {
  for (let i = 0; i < MAX_FAILURES; i++) {
    const r = await fail(i);
    if (r.status === 429) return { failures: i, refusal: r };
    if (r.status !== 401) throw new Error(`failure ${i}: expected 401, got ${r.status} ${r.text}`);
  }
  throw new Error(`${MAX_FAILURES} failed authentications and never refused`);
}

describe("failed authentications are limited per client address and per key prefix", () => {
  /** The limit in force, as the first test finds it (20 by default). */
  let limit = 20;

  it("after the limit, every authenticated request from that address gets 429 with Retry-After, even with a valid key", async () => {
    const s = await newSeller();
    const client = otherLoopbackAddress();
    // A fresh prefix each time: only the address accumulates failures.
    const { failures, refusal } = await failUntilRefused(() => callFrom(client, "GET", "/v1/keys", { key: unknownKey() }));
    limit = failures;
    expect(failures).toBeGreaterThanOrEqual(1);
    expect(refusal.body).toMatchObject({ type: expect.stringMatching(/\/problems\/rate-limited$/), status: 429 });
    const refused = await callFrom(client, "GET", "/v1/keys", { key: s.key });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ type: expect.stringMatching(/\/problems\/rate-limited$/), status: 429 });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // Other clients are unaffected; the key itself is fine.
    expect((await callFrom(otherLoopbackAddress(), "GET", "/v1/keys", { key: s.key })).status).toBe(200);
  });

  it("with the default TRUST_PROXY, changing X-Forwarded-For does not reset the limit", async () => {
    const s = await newSeller();
    const client = otherLoopbackAddress();
    // Were the header trusted, each request would be a new client and never refused.
    const forwarded = (i: number) => `203.0.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;
    const { failures } = await failUntilRefused((i) =>
      callFrom(client, "GET", "/v1/keys", { key: unknownKey(), headers: { "x-forwarded-for": forwarded(i) } }),
    );
    expect(failures).toBe(limit);
    for (const header of ["198.51.100.7", "127.0.0.1", "203.0.113.200, 198.51.100.9"]) {
      expect((await callFrom(client, "GET", "/v1/keys", { key: s.key, headers: { "x-forwarded-for": header } })).status).toBe(429);
    }
  });

  it("after the limit, guesses with a key prefix are refused (429) from every address, while the genuine key with that prefix and other keys still work", async () => {
    const s = await newSeller();
    const other = await newSeller();
    // The prefix of a real key: a prefix someone saw must not let them lock the key out.
    const prefix = s.key.slice(0, 12);
    // Spread over three addresses, so the prefix reaches the limit long before any address does.
    const clients = [otherLoopbackAddress(), otherLoopbackAddress(), otherLoopbackAddress()];
    const { failures } = await failUntilRefused((i) => callFrom(clients[i % clients.length]!, "GET", "/v1/checkouts", { key: unknownKey(prefix) }));
    expect(failures).toBe(limit);
    const elsewhere = otherLoopbackAddress();
    expect((await callFrom(elsewhere, "GET", "/v1/checkouts", { key: unknownKey(prefix) })).status).toBe(429);
    expect((await callFrom(elsewhere, "GET", "/v1/checkouts", { key: s.key })).status).toBe(200);
    expect((await callFrom(elsewhere, "GET", "/v1/checkouts", { key: other.key })).status).toBe(200);
  });

  it("only failures count: more successful requests than the limit from one address are never refused", async () => {
    const s = await newSeller();
    const client = otherLoopbackAddress();
    for (let i = 0; i < Math.min(limit, 200) + 10; i++) expect((await callFrom(client, "GET", "/v1/keys", { key: s.key })).status).toBe(200);
  });
});

describe("wallet sign-in: a fresh key every time (the first one creates the account), a session beside it", () => {
  it("the first sign-in answers 201 with the account, its first key (test, full) and a session, not cacheable", async () => {
    const s = await newSeller();
    expect(s.verified.status).toBe(201);
    expect(s.verified.headers.get("cache-control")).toBe("no-store");
    expect(s.verified.body).toMatchObject({
      account: { id: s.accountId, created: true },
      api_key: { secret: expect.stringMatching(/^sk_test_[0-9A-Za-z]{32}$/), scope: "full", mode: "test" },
      session: { token: expect.stringMatching(/^sess_[0-9A-Za-z]{32}$/), expires_at: expect.any(String) },
    });
  });

  it("a later sign-in reaches the same account: 200 with a fresh key (key recovery) and a 24 h session, both working credentials", async () => {
    const s = await newSeller();
    const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: s.wallet.address, network: "eip155:8453" } });
    const before = Date.now();
    const again = await call("POST", "/auth/wallet/verify", {
      body: { message: challenge.body.message, signature: await s.wallet.signMessage({ message: challenge.body.message }) },
    });
    expect(again.status).toBe(200);
    expect(again.headers.get("cache-control")).toBe("no-store");
    expect(again.body).toMatchObject({
      account: { id: s.accountId, created: false },
      api_key: { secret: expect.stringMatching(/^sk_test_[0-9A-Za-z]{32}$/), scope: "full", mode: "test" },
      session: { token: expect.stringMatching(/^sess_[0-9A-Za-z]{32}$/), expires_at: expect.any(String) },
    });
    const recovered = again.body.api_key.secret as string;
    expect(recovered).not.toBe(s.key);
    // The recovered key works, for the same account, and the first key still does too.
    expect((await call("GET", "/auth/me", { key: recovered })).body).toMatchObject({ account_id: s.accountId });
    expect((await call("GET", "/v1/keys", { key: s.key })).status).toBe(200);
    const lifetime = Date.parse(again.body.session.expires_at) - before;
    expect(lifetime).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000 + 1_000);

    const session = again.body.session.token as string;
    const keys = await call("GET", "/v1/keys", { key: session });
    expect(keys.status).toBe(200);
    expect(keys.body.keys.map((k: { id: string }) => k.id).sort()).toEqual([s.verified.body.api_key.id, again.body.api_key.id].sort());
    // A session behaves like a test key for checkout defaults: unarmed rehearsal.
    const checkout = await call("POST", "/v1/checkouts", { key: session, body: { title: "By session", price_usd: "0.10", payload: { ok: true } } });
    expect(checkout.status).toBe(201);
    expect(checkout.body.test_mode).toBe(true);
  });

  it("logout ends the session at once (its token is 401 after, other sessions and keys still work); a key cannot log out (403)", async () => {
    const s = await newSeller();
    const [ending, other] = [await walletSession(s.wallet), await walletSession(s.wallet)];
    const out = await call("POST", "/auth/logout", { key: ending });
    expect(out.status).toBe(200);
    expect(out.headers.get("cache-control")).toBe("no-store");
    expect(out.body).toEqual({ object: "session", ended: true, ended_at: expect.any(String) });
    expect(Math.abs(Date.parse(out.body.ended_at) - Date.now())).toBeLessThan(60_000);
    expect((await call("GET", "/v1/keys", { key: ending })).status).toBe(401);
    expect((await call("POST", "/auth/logout", { key: ending })).status).toBe(401);
    expect((await call("GET", "/v1/keys", { key: other })).status).toBe(200);
    const byKey = await call("POST", "/auth/logout", { key: s.key });
    expect(byKey.status).toBe(403);
    expect((await call("GET", "/v1/keys", { key: s.key })).status).toBe(200);
  });

  it("unknown session tokens are 401 with an invalid_token challenge", async () => {
    const r = await call("GET", "/v1/keys", { key: `sess_${base62(32)}` });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe('Bearer realm="c402", error="invalid_token"');
  });

  it("challenges state their lifetime", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const before = Date.now();
    const c = await call("POST", "/auth/wallet/challenge", { body: { address: wallet.address, network: "eip155:8453" } });
    expect(c.status).toBe(200);
    expect(c.body.expires_in_seconds).toBe(600);
    expect(Math.abs(Date.parse(c.body.expires_at) - (before + 600_000))).toBeLessThan(60_000);
  });

  it("a mixed-case address with a wrong EIP-55 checksum is 422 naming address; all-lowercase is fine", async () => {
    const address = getAddress(privateKeyToAccount(generatePrivateKey()).address);
    const hex = address.slice(2);
    const wrong = [...hex]
      .map((ch, i) => `0x${hex.slice(0, i)}${ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()}${hex.slice(i + 1)}`)
      .find((a) => a !== address && /[a-f]/.test(a) && /[A-F]/.test(a))!;
    const refused = await call("POST", "/auth/wallet/challenge", { body: { address: wrong, network: "eip155:8453" } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ field: "address", reason: expect.stringContaining("EIP-55") }]);
    expect((await call("POST", "/auth/wallet/challenge", { body: { address: address.toLowerCase(), network: "eip155:8453" } })).status).toBe(200);
  });
});

describe("a key never mints a key more powerful than itself", () => {
  it("a test key may mint test keys only: a live key is 403 forbidden naming why", async () => {
    const s = await newSeller();
    const live = await call("POST", "/v1/keys", { key: s.key, body: { scope: "read_only", mode: "live" } });
    expect(live.status).toBe(403);
    expect(live.body).toMatchObject({
      type: expect.stringMatching(/\/problems\/forbidden$/),
      detail: { message: expect.stringContaining("test key cannot mint a live key") },
    });
    const test = await call("POST", "/v1/keys", { key: s.key, body: { scope: "full", mode: "test" } });
    expect(test.status).toBe(201);
    expect(test.headers.get("cache-control")).toBe("no-store");
  });

  it("a wallet session may mint a live full key (key recovery), and a live full key may mint either mode", async () => {
    const s = await newSeller();
    const session = await walletSession(s.wallet);
    const live = await call("POST", "/v1/keys", { key: session, body: { scope: "full", mode: "live" } });
    expect(live.status).toBe(201);
    expect(live.body.secret).toMatch(/^sk_live_/);
    for (const mode of ["live", "test"]) {
      const minted = await call("POST", "/v1/keys", { key: live.body.secret, body: { scope: "payments", mode } });
      expect(minted.status).toBe(201);
      expect(minted.body.mode).toBe(mode);
    }
  });
});

describe("the bearer scheme", () => {
  it("is case-insensitive (RFC 9110)", async () => {
    const s = await newSeller();
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      expect((await call("GET", "/v1/keys", { headers: { authorization: `${scheme} ${s.key}` } })).status).toBe(200);
    }
  });
});
