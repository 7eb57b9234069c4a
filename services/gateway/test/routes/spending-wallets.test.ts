import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogV1, escrowV1, identityV1, spendingWalletsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { MemoryCache } from "@c402/cache";
import { createLogger } from "@c402/logging";
import type { AddressInfo } from "node:net";
import { createGatewayApp } from "../../src/index";
import { ACCOUNT_ID, BASE_URL, bodyOf, checkout, fakeClients, recorded, servers, SITE_URL, type Fakes } from "../support/fake-gateway";

/**
 * Spending wallets (routes/spending-wallets.ts; ADR 21): the credential as
 * the service's Caller, the session-only doors, the service's problems
 * passed through, validation, goods rendering, the funding QR, the pay rate
 * limit, and the MCP spending tools.
 */

const serve = servers();
const { Chain, CallerKind } = spendingWalletsV1;

/** The credentials of these tests, by secret. */
const SESSION = `sess_${"S".repeat(32)}`;
const LIVE_KEY = "sk_live_liveAAAAbbbbCCCCddddEEEE";
const TEST_KEY = "sk_test_testAAAAbbbbCCCCddddEEEE";
const READ_KEY = "sk_live_readAAAAbbbbCCCCddddEEEE";
const OAUTH = "oat_tokenAAAAbbbbCCCCddddEEEEffff";

const CREDENTIALS: Record<string, Omit<MessageInitShape<typeof identityV1.ResolveCredentialResponseSchema>, "$typeName">> = {
  [SESSION]: { kind: identityV1.CredentialKind.SESSION, scope: identityV1.Scope.FULL, mode: identityV1.KeyMode.TEST, actor: "session", keyPrefix: "" },
  [LIVE_KEY]: {
    kind: identityV1.CredentialKind.API_KEY,
    scope: identityV1.Scope.PAYMENTS,
    mode: identityV1.KeyMode.LIVE,
    actor: "key:sk_live_live",
    keyPrefix: "sk_live_live",
  },
  [TEST_KEY]: {
    kind: identityV1.CredentialKind.API_KEY,
    scope: identityV1.Scope.FULL,
    mode: identityV1.KeyMode.TEST,
    actor: "key:sk_test_test",
    keyPrefix: "sk_test_test",
  },
  [READ_KEY]: {
    kind: identityV1.CredentialKind.API_KEY,
    scope: identityV1.Scope.READ_ONLY,
    mode: identityV1.KeyMode.LIVE,
    actor: "key:sk_live_read",
    keyPrefix: "sk_live_read",
  },
  [OAUTH]: { kind: identityV1.CredentialKind.OAUTH, scope: identityV1.Scope.PAYMENTS, mode: identityV1.KeyMode.LIVE, actor: "oauth:client_1", keyPrefix: "" },
};

const identity: Fakes["identity"] = {
  resolveCredential: async ({ secret }: { secret?: string }) => {
    const cred = CREDENTIALS[secret ?? ""];
    if (!cred) throw new ProblemError("unauthenticated", "unknown credential");
    return create(identityV1.ResolveCredentialResponseSchema, { accountId: ACCOUNT_ID, keyId: "key_Resolved0000000000000000", ...cred });
  },
};

const as = (secret: string) => ({ authorization: `Bearer ${secret}` });
const at = timestampFromDate(new Date("2026-12-07T12:00:00.000Z"));
const WALLET = create(spendingWalletsV1.WalletSchema, {
  id: "swl_Wallet000000000000000000",
  chain: Chain.BASE,
  network: "eip155:84532",
  address: "0x3333333333333333333333333333333333333333",
  status: "active",
  createdAt: at,
});
const SECRET = create(spendingWalletsV1.WalletSecretSchema, {
  phrase: "canary phrase words that must never be logged or listed twelve",
  privateKey: `0x${"5e".repeat(32)}`,
  derivationPath: "m/44'/60'/0'/0/0",
});
const LIMITS = create(spendingWalletsV1.LimitsSchema, {
  perPaymentUsd: "1.00",
  perDayUsd: "10.00",
  spentTodayUsd: "0.00",
  leftTodayUsd: "10.00",
  dayResetsAt: at,
});
const goods = (contentType: string, body: string | Buffer) =>
  create(spendingWalletsV1.GoodsSchema, { status: 200, contentType, body: typeof body === "string" ? Buffer.from(body) : body });
const PAID = create(spendingWalletsV1.PayResponseSchema, {
  paid: true,
  url: "https://seller.test/c/chk_X",
  receipt: {
    spendId: "spd_Spend00000000000000000000",
    network: "eip155:84532",
    transaction: `0x${"ab".repeat(32)}`,
    payer: WALLET.address,
    payTo: "0x1111111111111111111111111111111111111111",
    amount: "10000",
    amountUsd: "0.01",
    receiptUrl: "https://seller.test/r/pay_X",
    paidAt: at,
  },
  goods: goods("application/json; charset=utf-8", '{"temp_c":21}'),
  limits: LIMITS,
});

/** Fakes answering every spending-wallets RPC, recorded; `overrides` replaces some. */
function walletFakes(overrides: Partial<Fakes["spendingWallets"]> = {}, more: Fakes = {}) {
  return recorded({
    ...more,
    identity: { ...identity, ...more.identity },
    spendingWallets: {
      selfCheck: async () => create(spendingWalletsV1.SelfCheckResponseSchema, { ok: true, chains: ["base", "solana"] }),
      listWallets: async () => create(spendingWalletsV1.ListWalletsResponseSchema, { wallets: [WALLET] }),
      createWallet: async () => create(spendingWalletsV1.CreateWalletResponseSchema, { wallet: WALLET, secret: SECRET, limits: LIMITS }),
      getBalance: async () =>
        create(spendingWalletsV1.GetBalanceResponseSchema, { wallet: WALLET, usdc: "2500000", usd: "2.50", native: "0", nativeSymbol: "ETH", asset: "0xUSDC" }),
      pay: async () => PAID,
      getLimits: async () => create(spendingWalletsV1.GetLimitsResponseSchema, { limits: LIMITS }),
      setLimits: async () => create(spendingWalletsV1.SetLimitsResponseSchema, { limits: LIMITS }),
      getFunding: async () =>
        create(spendingWalletsV1.GetFundingResponseSchema, {
          token: "USDC",
          asset: "0xUSDC",
          chain: Chain.BASE,
          network: "eip155:84532",
          address: WALLET.address,
          uri: `ethereum:0xUSDC@84532/transfer?address=${WALLET.address}`,
          links: [{ app: "metamask", url: "https://metamask.app.link/send/x" }],
        }),
      reveal: async () => create(spendingWalletsV1.RevealResponseSchema, { wallet: { ...WALLET, revealedAt: at }, secret: SECRET }),
      archive: async () => create(spendingWalletsV1.ArchiveResponseSchema, { wallet: { ...WALLET, status: "archived", archivedAt: at } }),
      listEvents: async () =>
        create(spendingWalletsV1.ListEventsResponseSchema, {
          events: [{ id: "evt_Event000000000000000000", walletId: WALLET.id, kind: "refused", actor: "key:sk_test_test", reason: "test_key", at }],
        }),
      ...overrides,
    },
  });
}

const json = (body: unknown) => ({ "content-type": "application/json", body: JSON.stringify(body) });
async function call(url: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  return fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}
const PAY_BODY = { url: "https://seller.test/c/chk_X", max_usd: "0.50", params: { city: "Paris" } };
void json;

describe("the credential as the service's Caller", () => {
  it.each([
    ["a session", SESSION, { kind: CallerKind.SESSION, testMode: false, scope: "full", actor: "session" }],
    ["a live key", LIVE_KEY, { kind: CallerKind.API_KEY, testMode: false, scope: "payments", actor: "key:sk_live_live" }],
    ["a test key", TEST_KEY, { kind: CallerKind.API_KEY, testMode: true, scope: "full", actor: "key:sk_test_test" }],
    ["an OAuth token", OAUTH, { kind: CallerKind.OAUTH, testMode: false, scope: "payments", actor: "oauth:client_1" }],
  ])("pay sends %s as its Caller, with the body and the Idempotency-Key", async (_who, secret, caller) => {
    const { fakes, of } = walletFakes();
    const { url } = await serve.app(fakes);
    const res = await call(url, "POST", "/v1/spending-wallets/base/pay", { ...as(secret), "idempotency-key": "agent-run-7" }, PAY_BODY);
    expect(res.status).toBe(200);
    expect(of("pay")[0]).toMatchObject({
      accountId: ACCOUNT_ID,
      chain: Chain.BASE,
      url: PAY_BODY.url,
      maxUsd: "0.50",
      params: { city: "Paris" },
      idempotencyKey: "agent-run-7",
      caller,
    });
  });

  it("a session's create, limits, funding, reveal and archive all name it SESSION (never a test key)", async () => {
    const { fakes, of } = walletFakes();
    const { url } = await serve.app(fakes);
    const session = as(SESSION);
    expect((await call(url, "POST", "/v1/spending-wallets/solana", session)).status).toBe(201);
    expect((await call(url, "PUT", "/v1/spending-wallets/base/limits", session, { per_payment_usd: "2", per_day_usd: "20.5" })).status).toBe(200);
    expect((await call(url, "GET", "/v1/spending-wallets/base/funding?amount=25", session)).status).toBe(200);
    expect((await call(url, "POST", "/v1/spending-wallets/base/reveal", session)).status).toBe(200);
    expect((await call(url, "DELETE", "/v1/spending-wallets/base", session)).status).toBe(200);
    const sessionCaller = { kind: CallerKind.SESSION, testMode: false };
    expect(of("createWallet")[0]).toMatchObject({ chain: Chain.SOLANA, caller: sessionCaller });
    expect(of("setLimits")[0]).toMatchObject({ perPaymentUsd: "2", perDayUsd: "20.5", caller: sessionCaller });
    expect(of("getFunding")[0]).toMatchObject({ amountUsd: "25", caller: sessionCaller });
    expect(of("reveal")[0]).toMatchObject({ caller: sessionCaller });
    expect(of("archive")[0]).toMatchObject({ caller: sessionCaller });
  });
});

describe("who may call", () => {
  // Every row has its three cells: jest would take a missing third for `done`.
  const SESSION_ONLY: [string, string, unknown][] = [
    ["POST", "/v1/spending-wallets/base", undefined],
    ["DELETE", "/v1/spending-wallets/base", undefined],
    ["PUT", "/v1/spending-wallets/base/limits", { per_payment_usd: "1", per_day_usd: "10" }],
    ["GET", "/v1/spending-wallets/base/funding", undefined],
    ["GET", "/v1/spending-wallets/base/funding.svg", undefined],
    ["POST", "/v1/spending-wallets/keys", undefined],
  ];

  it.each(SESSION_ONLY)("%s %s: a key or an OAuth token is 403 forbidden, and nothing is asked of the service", async (method, path, body) => {
    const { fakes, called } = walletFakes();
    const { url } = await serve.app(fakes);
    for (const secret of [LIVE_KEY, TEST_KEY, OAUTH]) {
      const res = await call(url, method, path, as(secret), body);
      expect([secret, res.status]).toEqual([secret, 403]);
      expect((await bodyOf(res)).type).toBe(`${SITE_URL}/problems/forbidden`);
    }
    expect(called().filter((c) => c.startsWith("spendingWallets.") || c === "identity.createApiKey")).toEqual([]);
  });

  it.each([
    ["GET", "/v1/spending-wallets"],
    ["GET", "/v1/spending-wallets/base/balance"],
    ["GET", "/v1/spending-wallets/base/limits"],
    ["GET", "/v1/spending-wallets/base/events"],
    ["GET", "/v1/rehearsal-checkout"],
  ])("%s %s: any key or a session; an OAuth token is 403", async (method, path) => {
    const { fakes } = walletFakes({}, rehearsalFakes());
    const { url } = await serve.app(fakes);
    for (const secret of [SESSION, READ_KEY, TEST_KEY]) expect((await call(url, method, path, as(secret))).status).toBe(200);
    const oauth = await call(url, method, path, as(OAUTH));
    expect(oauth.status).toBe(403);
    expect((await bodyOf(oauth)).reason).toBe("oauth_token_refused");
  });

  it("pay needs the payments rung: a read_only key is 403 before the service is asked", async () => {
    const { fakes, of } = walletFakes();
    const { url } = await serve.app(fakes);
    expect((await call(url, "POST", "/v1/spending-wallets/base/pay", as(READ_KEY), PAY_BODY)).status).toBe(403);
    expect(of("pay")).toHaveLength(0);
  });

  it("reveal refuses an API key even with a valid session cookie, and the service is told who tried (to record it)", async () => {
    const { fakes, of } = walletFakes({
      reveal: async (req: { caller?: { kind?: spendingWalletsV1.CallerKind } }) => {
        if (req.caller?.kind !== CallerKind.SESSION)
          throw new ProblemError("forbidden", { message: "Reveal is for a session.", extensions: { reason: "not_session" } });
        return create(spendingWalletsV1.RevealResponseSchema, { wallet: WALLET, secret: SECRET });
      },
    });
    const { url } = await serve.app(fakes);
    const res = await call(url, "POST", "/v1/spending-wallets/base/reveal", { ...as(LIVE_KEY), cookie: `c402_session=${SESSION}`, origin: BASE_URL });
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).not.toContain(SECRET.privateKey);
    expect(of("reveal")[0]).toMatchObject({ caller: { kind: CallerKind.API_KEY, actor: "key:sk_live_live" } });
  });

  it("reveal never answers the secret to a key, even should the service answer it", async () => {
    const { fakes } = walletFakes();
    const { url } = await serve.app(fakes);
    for (const secret of [LIVE_KEY, OAUTH]) {
      const res = await call(url, "POST", "/v1/spending-wallets/base/reveal", as(secret));
      expect(res.status).toBe(403);
      expect(await res.text()).not.toContain(SECRET.phrase);
    }
  });

  it("the session's reveal and create answer the secret, no-store", async () => {
    const { fakes } = walletFakes();
    const { url } = await serve.app(fakes);
    const revealed = await call(url, "POST", "/v1/spending-wallets/base/reveal", as(SESSION));
    expect(revealed.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(revealed)).toMatchObject({
      wallet: { id: WALLET.id, revealed_at: "2026-12-07T12:00:00.000Z" },
      secret: { phrase: SECRET.phrase, private_key: SECRET.privateKey, derivation_path: SECRET.derivationPath },
    });
    const created = await call(url, "POST", "/v1/spending-wallets/base", as(SESSION));
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(created)).toMatchObject({
      wallet: { chain: "base", address: WALLET.address, status: "active" },
      secret: { private_key: SECRET.privateKey },
      limits: { per_payment_usd: "1.00", per_day_usd: "10.00", spent_today_usd: "0.00", left_today_usd: "10.00" },
      note: expect.stringMatching(/shown once/i),
    });
  });

  it("the list shows addresses only: no secret field", async () => {
    const { fakes } = walletFakes();
    const { url } = await serve.app(fakes);
    const body = await bodyOf(await call(url, "GET", "/v1/spending-wallets", as(SESSION)));
    expect(body.wallets).toEqual([
      {
        id: WALLET.id,
        object: "spending_wallet",
        chain: "base",
        network: "eip155:84532",
        address: WALLET.address,
        status: "active",
        created_at: "2026-12-07T12:00:00.000Z",
        revealed_at: null,
        archived_at: null,
      },
    ]);
  });

  it("POST /v1/spending-wallets/keys mints a live payments key named agent for a session, shown once", async () => {
    const { fakes, of } = walletFakes(
      {},
      {
        identity: {
          createApiKey: async () =>
            create(identityV1.CreateApiKeyResponseSchema, {
              apiKey: {
                id: "key_Agent0000000000000000000",
                name: "agent",
                prefix: "sk_live_agen",
                scope: identityV1.Scope.PAYMENTS,
                mode: identityV1.KeyMode.LIVE,
                createdAt: at,
              },
              secret: "sk_live_agentSecretAAAAbbbbCCCC",
            }),
        },
      },
    );
    const { url } = await serve.app(fakes);
    const res = await call(url, "POST", "/v1/spending-wallets/keys", as(SESSION));
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(res)).toMatchObject({ object: "api_key", scope: "payments", mode: "live", secret: "sk_live_agentSecretAAAAbbbbCCCC" });
    expect(of("createApiKey")[0]).toMatchObject({ name: "agent", scope: identityV1.Scope.PAYMENTS, mode: identityV1.KeyMode.LIVE, actor: "session" });
    const named = await call(url, "POST", "/v1/spending-wallets/keys", as(SESSION), { name: "x".repeat(101) });
    expect(named.status).toBe(422);
  });
});

describe("the service's problems reach the client unchanged", () => {
  it.each([
    [
      "a test key refused",
      new ProblemError("forbidden", { message: "A test key cannot pay.", extensions: { reason: "test_key" } }),
      403,
      "forbidden",
      { reason: "test_key" },
    ],
    ["a short wallet", new ProblemError("payment-required", { message: "Insufficient balance: the wallet holds $0.00." }), 402, "payment-required", {}],
    [
      "an outcome not known",
      new ProblemError("upstream-failed", { message: "The seller did not answer after payment.", extensions: { reason: "outcome_unknown" } }),
      502,
      "upstream-failed",
      { reason: "outcome_unknown" },
    ],
    ["a conflict", new ProblemError("conflict", { message: "A payment with this Idempotency-Key is in flight." }), 409, "conflict", {}],
  ])("%s: %s", async (_what, problem, status, slug, extensions) => {
    const { fakes } = walletFakes({
      pay: async () => {
        throw problem;
      },
    });
    const { url } = await serve.app(fakes);
    const res = await call(url, "POST", "/v1/spending-wallets/base/pay", as(LIVE_KEY), PAY_BODY);
    expect(res.status).toBe(status);
    const body = await bodyOf(res);
    expect(body).toMatchObject({ type: `${SITE_URL}/problems/${slug}`, status, ...extensions });
    expect(JSON.stringify(body)).toContain(problem.message);
  });

  it("a second create is the service's 409", async () => {
    const { fakes } = walletFakes({
      createWallet: async () => {
        throw new ProblemError("conflict", "The account already has an active base wallet.");
      },
    });
    const { url } = await serve.app(fakes);
    expect((await call(url, "POST", "/v1/spending-wallets/base", as(SESSION))).status).toBe(409);
  });
});

describe("validation", () => {
  it.each([
    ["a url that is not http(s)", { url: "ftp://seller.test/x" }, "url"],
    ["a url over 2048 characters", { url: `https://seller.test/${"a".repeat(2048)}` }, "url"],
    ["no url", {}, "url"],
    ["a max_usd that is not a decimal", { url: "https://seller.test/x", max_usd: "1e3" }, "max_usd"],
    ["a max_usd as a number", { url: "https://seller.test/x", max_usd: 1 }, "max_usd"],
    ["too many params", { url: "https://seller.test/x", params: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, "v"])) }, "params"],
    ["a param that is not a string", { url: "https://seller.test/x", params: { n: 1 } }, "params.n"],
    ["an unknown field", { url: "https://seller.test/x", to: "0xdead" }, "to"],
  ])("pay with %s is 422 naming the field, and the service is not asked", async (_what, body, field) => {
    const { fakes, of } = walletFakes();
    const { url } = await serve.app(fakes);
    const res = await call(url, "POST", "/v1/spending-wallets/base/pay", as(LIVE_KEY), body);
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(of("pay")).toHaveLength(0);
  });

  it("an unknown chain is 404 not-found, on every chain route", async () => {
    const { fakes, called } = walletFakes();
    const { url } = await serve.app(fakes);
    for (const [method, path, body] of [
      ["POST", "/v1/spending-wallets/ethereum", undefined],
      ["GET", "/v1/spending-wallets/stellar/balance", undefined],
      ["POST", "/v1/spending-wallets/BASE/pay", PAY_BODY],
      ["GET", "/v1/spending-wallets/tron/events", undefined],
    ] as const) {
      const res = await call(url, method, path, as(SESSION), body);
      expect([path, res.status]).toEqual([path, 404]);
      expect((await bodyOf(res)).type).toBe(`${SITE_URL}/problems/not-found`);
    }
    expect(called().filter((c) => c.startsWith("spendingWallets."))).toEqual([]);
  });

  it("limits need both decimals; funding's amount must be a decimal", async () => {
    const { fakes } = walletFakes();
    const { url } = await serve.app(fakes);
    expect((await call(url, "PUT", "/v1/spending-wallets/base/limits", as(SESSION), { per_payment_usd: "1" })).status).toBe(422);
    expect((await call(url, "PUT", "/v1/spending-wallets/base/limits", as(SESSION), { per_payment_usd: "-1", per_day_usd: "1" })).status).toBe(422);
    expect((await call(url, "GET", "/v1/spending-wallets/base/funding?amount=lots", as(SESSION))).status).toBe(422);
    expect((await call(url, "GET", "/v1/spending-wallets/base/events?cursor=%21", as(SESSION))).status).toBe(422);
  });

  it("there is no transfer-out: …/withdraw and …/transfer are 404", async () => {
    const { fakes } = walletFakes();
    const { url } = await serve.app(fakes);
    for (const path of ["/v1/spending-wallets/base/withdraw", "/v1/spending-wallets/base/transfer", "/v1/spending-wallets/solana/withdraw"]) {
      expect((await call(url, "POST", path, as(SESSION), { to: "0xdead", amount: "1" })).status).toBe(404);
    }
  });
});

describe("answers", () => {
  it.each([
    ["JSON: parsed", goods("application/json", '{"a":[1,2]}'), { a: [1, 2] }],
    ["a +json type: parsed", goods("application/problem+json", '{"title":"x"}'), { title: "x" }],
    ["JSON that does not parse: its text", goods("application/json", "{oops"), "{oops"],
    ["text: as text", goods("text/plain; charset=utf-8", "hello"), "hello"],
    ["binary: base64 with its type", goods("image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47])), { content_type: "image/png", base64: "iVBORw==" }],
  ])("goods %s", async (_what, g, rendered) => {
    const { fakes } = walletFakes({ pay: async () => create(spendingWalletsV1.PayResponseSchema, { ...PAID, goods: g }) });
    const { url } = await serve.app(fakes);
    const body = await bodyOf(await call(url, "POST", "/v1/spending-wallets/base/pay", as(LIVE_KEY), PAY_BODY));
    expect(body.goods).toEqual(rendered);
    expect(body.content_type).toBe(g.contentType);
  });

  it("a paid answer carries the receipt and the limits", async () => {
    const { fakes } = walletFakes();
    const { url } = await serve.app(fakes);
    const res = await call(url, "POST", "/v1/spending-wallets/base/pay", as(SESSION), PAY_BODY);
    expect(await bodyOf(res)).toEqual({
      paid: true,
      url: PAID.url,
      status: 200,
      content_type: "application/json; charset=utf-8",
      receipt: {
        spend_id: "spd_Spend00000000000000000000",
        network: "eip155:84532",
        transaction: `0x${"ab".repeat(32)}`,
        payer: WALLET.address,
        pay_to: "0x1111111111111111111111111111111111111111",
        amount: "10000",
        amount_usd: "0.01",
        receipt_url: "https://seller.test/r/pay_X",
        paid_at: "2026-12-07T12:00:00.000Z",
      },
      goods: { temp_c: 21 },
      limits: { per_payment_usd: "1.00", per_day_usd: "10.00", spent_today_usd: "0.00", left_today_usd: "10.00", day_resets_at: "2026-12-07T12:00:00.000Z" },
    });
  });

  it("funding.svg is the funding uri as an SVG QR code", async () => {
    const { fakes } = walletFakes();
    const { url } = await serve.app(fakes);
    const res = await call(url, "GET", "/v1/spending-wallets/base/funding.svg?amount=5", as(SESSION));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    expect(await res.text()).toMatch(/^<svg|<\?xml/);
  });

  it("events are paged: limit+1 asked, has_more and a next_cursor that pages on", async () => {
    const events = [0, 1, 2].map((i) => ({
      id: `evt_Event000000000000000000${i}`,
      walletId: WALLET.id,
      kind: "spent",
      actor: "session",
      at: timestampFromDate(new Date(Date.UTC(2026, 11, 7, 12, 0, 10 - i))),
    }));
    const { fakes, of } = walletFakes({ listEvents: async () => create(spendingWalletsV1.ListEventsResponseSchema, { events }) });
    const { url } = await serve.app(fakes);
    const first = await bodyOf(await call(url, "GET", "/v1/spending-wallets/base/events?limit=2", as(LIVE_KEY)));
    expect(first.events.map((e: { id: string }) => e.id)).toEqual([events[0]!.id, events[1]!.id]);
    expect(first.has_more).toBe(true);
    expect(of("listEvents")[0]).toMatchObject({ pageSize: 3 });
    await call(url, "GET", `/v1/spending-wallets/base/events?limit=2&cursor=${first.next_cursor}`, as(LIVE_KEY));
    expect(of("listEvents")[1]).toMatchObject({ afterId: events[1]!.id });
  });

  it("health: 200 when ok, 503 with the same body naming the problems when not", async () => {
    const ok = walletFakes();
    const a = await serve.app(ok.fakes);
    const good = await fetch(`${a.url}/v1/spending-wallets/health`);
    expect(good.status).toBe(200);
    expect(await bodyOf(good)).toEqual({ ok: true, problems: [], chains: ["base", "solana"] });
    const bad = walletFakes({
      selfCheck: async () =>
        create(spendingWalletsV1.SelfCheckResponseSchema, { ok: false, problems: [{ component: "keyring", message: "no key" }], chains: ["base"] }),
    });
    const b = await serve.app(bad.fakes);
    const down = await fetch(`${b.url}/v1/spending-wallets/health`);
    expect(down.status).toBe(503);
    expect(down.headers.get("retry-after")).toBe("30");
    expect(await bodyOf(down)).toEqual({ ok: false, problems: [{ component: "keyring", message: "no key" }], chains: ["base"] });
  });
});

/** The catalog's idempotent create, answering one checkout for the rehearsal key (an account that is no platform). */
function rehearsalFakes(): Fakes {
  return {
    identity: {
      getPlatformSettings: async () => create(identityV1.GetPlatformSettingsResponseSchema, {}),
      getPayoutWallets: async () => create(identityV1.GetPayoutWalletsResponseSchema, {}),
    },
    escrow: { getEscrowSettings: async () => create(escrowV1.GetEscrowSettingsResponseSchema, {}) },
    catalog: rehearsalCatalog(),
  };
}

function rehearsalCatalog(): Fakes["catalog"] {
  return {
    createCheckout: async () =>
      create(catalogV1.CreateCheckoutResponseSchema, {
        checkout: checkout({ id: "chk_Rehearsal000000000000000", title: "Rehearsal checkout" }),
        replayed: true,
      }),
  };
}

describe("GET /v1/rehearsal-checkout", () => {
  it("creates (or finds) the account's rehearsal checkout through the idempotent create and answers its test face and an ask", async () => {
    const { fakes, of } = walletFakes({}, rehearsalFakes());
    const { url } = await serve.app(fakes);
    const res = await call(url, "GET", "/v1/rehearsal-checkout", as(READ_KEY));
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body.url).toBe(`${BASE_URL}/c/chk_Rehearsal000000000000000/test`);
    expect(body.ask).toContain(body.url);
    expect(body.ask).toMatch(/nothing moves/);
    expect(of("createCheckout")[0]).toMatchObject({
      idempotencyKey: "rehearsal-checkout/v1",
      title: "Rehearsal checkout",
      priceUsd: "0.01",
      createdWithLiveKey: false,
    });
  });
});

describe("the pay rate limit", () => {
  it("past the budget of pays a minute per account and chain: 429 with Retry-After and X-RateLimit-*", async () => {
    const { fakes, of } = walletFakes();
    const app = createGatewayApp({
      clients: fakeClients(fakes),
      cache: new MemoryCache(),
      logger: createLogger({ service: "gateway-test", level: "silent" }),
      settings: {
        serviceName: "c402",
        version: "0.0.0",
        runMode: "embedded",
        authRateLimitPerMinute: 30,
        baseUrl: BASE_URL,
        siteUrl: SITE_URL,
        spendingPaysPerMinute: 2,
      },
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const first = await call(url, "POST", "/v1/spending-wallets/base/pay", as(LIVE_KEY), PAY_BODY);
      expect(first.headers.get("x-ratelimit-limit")).toBe("2");
      expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
      expect((await call(url, "POST", "/v1/spending-wallets/base/pay", as(LIVE_KEY), PAY_BODY)).status).toBe(200);
      const third = await call(url, "POST", "/v1/spending-wallets/base/pay", as(LIVE_KEY), PAY_BODY);
      expect(third.status).toBe(429);
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(of("pay")).toHaveLength(2);
      // Another chain has its own budget.
      expect((await call(url, "POST", "/v1/spending-wallets/solana/pay", as(LIVE_KEY), PAY_BODY)).status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("the MCP spending tools", () => {
  const rpc = (url: string, secret: string, method: string, params: Record<string, unknown> = {}) =>
    fetch(`${url}/mcp`, {
      method: "POST",
      headers: { ...as(secret), "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    }).then((r) => r.json() as Promise<any>);
  const tool = (url: string, secret: string, name: string, args: Record<string, unknown>) => rpc(url, secret, "tools/call", { name, arguments: args });

  it("are listed; no tool creates, reveals or funds a wallet", async () => {
    const { fakes } = walletFakes();
    const { url } = await serve.app(fakes);
    const names: string[] = (await rpc(url, LIVE_KEY, "tools/list")).result.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["list_spending_wallets", "spending_wallet_balance", "pay_x402", "spending_budget", "spending_wallet_events"]),
    );
    expect(names.filter((n) => /reveal|fund|create_(spending_)?wallet|withdraw|transfer/.test(n))).toEqual([]);
  });

  it("run the REST operations for a live key: pay_x402 defaults to base", async () => {
    const { fakes, of } = walletFakes();
    const { url } = await serve.app(fakes);
    expect((await tool(url, LIVE_KEY, "list_spending_wallets", {})).result.structuredContent.wallets[0].address).toBe(WALLET.address);
    expect((await tool(url, LIVE_KEY, "spending_wallet_balance", { chain: "base" })).result.structuredContent.usd).toBe("2.50");
    expect((await tool(url, LIVE_KEY, "spending_budget", { chain: "solana" })).result.structuredContent.left_today_usd).toBe("10.00");
    expect((await tool(url, LIVE_KEY, "spending_wallet_events", { chain: "base", limit: 10 })).result.structuredContent.events[0].reason).toBe("test_key");
    const paid = await tool(url, LIVE_KEY, "pay_x402", { url: PAY_BODY.url, max_usd: "0.25" });
    expect(paid.result.structuredContent).toMatchObject({ paid: true, goods: { temp_c: 21 } });
    expect(of("pay")[0]).toMatchObject({ chain: Chain.BASE, maxUsd: "0.25", caller: { kind: CallerKind.API_KEY, testMode: false } });
  });

  it("refuse a test key with the forbidden error form; pay_x402 lets the service refuse it (and record it)", async () => {
    const { fakes, of } = walletFakes({
      pay: async (req: { caller?: { testMode?: boolean } }) => {
        if (req.caller?.testMode) throw new ProblemError("forbidden", { message: "A test key cannot pay.", extensions: { reason: "test_key" } });
        return PAID;
      },
    });
    const { url } = await serve.app(fakes);
    for (const [name, args] of [
      ["list_spending_wallets", {}],
      ["spending_wallet_balance", { chain: "base" }],
      ["spending_budget", { chain: "base" }],
      ["spending_wallet_events", { chain: "base" }],
      ["pay_x402", { url: PAY_BODY.url }],
    ] as const) {
      const answer = await tool(url, TEST_KEY, name, args);
      expect([name, answer.error?.data?.status, answer.error?.data?.reason]).toEqual([name, 403, "test_key"]);
    }
    expect(of("pay")).toHaveLength(1);
    expect(of("listWallets")).toHaveLength(0);
  });
});
