import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogV1, escrowV1, identityV1, paymentsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import {
  ACCOUNT_ID,
  BASE_URL,
  bodyOf,
  CHECKOUT_ID,
  checkout,
  PAY_TO,
  quote,
  recorded,
  resolveCredential,
  SELLER_KEY,
  servers,
  SITE_URL,
} from "../support/fake-gateway";

/** /v1/checkouts: create, list, read, go live (routes/checkouts.ts). */

const serve = servers();
const auth = { authorization: `Bearer ${SELLER_KEY}` };
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { ...auth, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

const SOLANA = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const SOLANA_ATA = "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi";
const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
const DEVNET_USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
const standing = (chainFamily: string, address: string) => create(identityV1.PayoutWalletSchema, { chainFamily, address, isDefault: true });

const FEE_WALLET = "0x3333333333333333333333333333333333333333";
const PLATFORM_SOLANA = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV";
/** A platform account taking 300 bps by default, paid to FEE_WALLET on EVM. */
const PLATFORM = create(identityV1.PlatformSettingsSchema, { platformAccount: true, platformFeeBps: 300, platformFeeTo: FEE_WALLET });

/**
 * The fakes of a create: the account's standing wallets (EVM only unless
 * given), its platform settings (an ordinary seller unless given), and
 * payments' answer about their accounts (every one missing in `missing`
 * when `exists` is false).
 */
const ARBITER = "0x4444444444444444444444444444444444444444";
/** What the fake escrow service resolves: the shipping preset's windows, a Base arbiter, no Solana one. */
const RESOLVED_TERMS = create(escrowV1.EscrowTermsSchema, {
  preset: escrowV1.EscrowPreset.SHIPPING,
  windows: { settleSeconds: 1_209_600, holdSeconds: 1_209_600, backstopSeconds: 5_184_000 },
  rails: [
    { family: "evm", arbiter: ARBITER, source: escrowV1.ArbiterSource.CREATE, offered: true },
    { family: "svm", offered: false, reason: "No arbiter is named for this chain family, so it offers no escrow rail." },
  ],
});

function catalogFakes(
  scope: identityV1.Scope = identityV1.Scope.FULL,
  accounts: {
    wallets?: identityV1.PayoutWallet[];
    platform?: identityV1.PlatformSettings;
    exists?: boolean;
    failure?: Error;
    escrowPolicy?: escrowV1.EscrowPolicy;
    escrowRefusal?: Error;
  } = {},
) {
  return recorded({
    identity: {
      resolveCredential: resolveCredential(scope),
      getPayoutWallets: async () => create(identityV1.GetPayoutWalletsResponseSchema, { wallets: accounts.wallets ?? [standing("eip155", PAY_TO)] }),
      getPlatformSettings: async () =>
        create(identityV1.GetPlatformSettingsResponseSchema, { settings: accounts.platform ?? create(identityV1.PlatformSettingsSchema, {}) }),
    },
    // Every plain create asks the account's escrow policy (always would make it an escrow one).
    escrow: {
      getEscrowSettings: async () =>
        create(escrowV1.GetEscrowSettingsResponseSchema, { settings: { policy: accounts.escrowPolicy ?? escrowV1.EscrowPolicy.SELLER_CHOICE } }),
      resolveEscrowTerms: async () => {
        if (accounts.escrowRefusal) throw accounts.escrowRefusal;
        return create(escrowV1.ResolveEscrowTermsResponseSchema, { terms: RESOLVED_TERMS });
      },
    },
    catalog: {
      createCheckout: async (req) =>
        create(catalogV1.CreateCheckoutResponseSchema, {
          checkout: checkout({ title: req.title ?? "", payloadJson: req.payloadJson, ...(req.schedule ? { schedule: req.schedule } : {}) }),
          replayed: req.idempotencyKey === "again",
        }),
      listCheckouts: async () => {
        const summaries = [1, 2].map((n) =>
          create(catalogV1.CheckoutSummarySchema, {
            id: `chk_Listed${n}`.padEnd(28, "0"),
            accountId: ACCOUNT_ID,
            title: `Listed ${n}`,
            priceAtomic: 250_000n,
            payTo: PAY_TO,
            status: n === 1 ? catalogV1.CheckoutStatus.OPEN : catalogV1.CheckoutStatus.PAID,
            createdAt: timestampFromDate(new Date(Date.UTC(2025, 0, 3 - n))),
          }),
        );
        return create(catalogV1.ListCheckoutsResponseSchema, { checkouts: summaries });
      },
      getCheckout: async () => create(catalogV1.GetCheckoutResponseSchema, { checkout: checkout() }),
      goLive: async () => create(catalogV1.GoLiveResponseSchema, { checkout: checkout({ armed: true }), alreadyLive: false }),
    },
    payments: {
      quotePayment: async () => quote(paymentsV1.SettlementKind.SIMULATED),
      checkPayoutAccounts: async (req) => {
        if (accounts.failure) throw accounts.failure;
        return create(paymentsV1.CheckPayoutAccountsResponseSchema, {
          checks: (req.rails ?? [])
            .filter((r) => r.chainFamily === "solana")
            .map((r) => ({
              chainFamily: r.chainFamily,
              address: r.address,
              network: DEVNET,
              asset: DEVNET_USDC,
              account: SOLANA_ATA,
              exists: accounts.exists ?? true,
            })),
        });
      },
    },
  });
}

describe("creating a checkout", () => {
  it("maps the body to catalog's request and answers 201 with the checkout's view", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/checkouts`, {
      title: "Weather for Paris",
      price_usd: "0.10",
      payload: { temp_c: 21 },
      description: null,
      reusable: true,
      test_mode: false,
      expires_in_minutes: 60,
      freshness: "hourly",
      example_output: [1, 2],
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("idempotency-replayed")).toBeNull();
    expect(await bodyOf(res)).toMatchObject({
      id: CHECKOUT_ID,
      object: "checkout",
      url: `${BASE_URL}/c/${CHECKOUT_ID}`,
      test_url: `${BASE_URL}/c/${CHECKOUT_ID}/test`,
      status: "open",
      title: "Weather for Paris",
      price_usd: "0.100000",
      pay_to: PAY_TO,
      fulfillment: "inline",
      test_mode: true,
      created_at: "2025-01-02T03:04:05.000Z",
      expires_at: null,
      payload: { temp_c: 21 },
      freshness: "hourly",
      test: { id: CHECKOUT_ID, url: `${BASE_URL}/c/${CHECKOUT_ID}/test` },
    });
    expect(of("createCheckout")).toEqual([
      {
        accountId: ACCOUNT_ID,
        actor: "key:sk_test_abcd",
        createdWithLiveKey: false,
        requestFingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        title: "Weather for Paris",
        priceUsd: "0.10",
        payloadJson: '{"temp_c":21}',
        reusable: true,
        testMode: false,
        expiresInMinutes: 60n,
        offer: { freshness: "hourly", exampleOutputJson: "[1,2]" },
      },
    ]);
  });

  it("fingerprints the body whatever its key order, and marks an idempotent replay", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", payload: { b: 1, a: [2, { d: 3, c: 4 }] } }, { "idempotency-key": "first" });
    const replay = await post(`${url}/v1/checkouts`, { payload: { a: [2, { c: 4, d: 3 }], b: 1 }, price_usd: "1", title: "T" }, { "idempotency-key": "again" });
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    const [first, second] = of("createCheckout") as { requestFingerprint: string; idempotencyKey: string }[];
    const canonical = '{"payload":{"a":[2,{"c":4,"d":3}],"b":1},"price_usd":"1","title":"T"}';
    expect(first?.requestFingerprint).toBe(createHash("sha256").update(canonical).digest("hex"));
    expect(second?.requestFingerprint).toBe(first?.requestFingerprint);
    expect([first?.idempotencyKey, second?.idempotencyKey]).toEqual(["first", "again"]);
  });

  it("refuses unknown fields and bad Idempotency-Keys with 422, asking catalog nothing", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    const notYet = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", package_ttl_days: 0, colour: "red" });
    expect(notYet.status).toBe(422);
    expect((await bodyOf(notYet)).errors).toEqual([
      { field: "colour", reason: "is not a known field" },
      { field: "package_ttl_days", reason: "must be >= 1" },
    ]);
    const badKey = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1" }, { "idempotency-key": "has space" });
    expect(badKey.status).toBe(422);
    expect((await bodyOf(badKey)).errors).toEqual([{ field: "Idempotency-Key", reason: "must be 1 to 255 visible ASCII characters" }]);
    expect(of("createCheckout")).toHaveLength(0);
  });

  it("passes the checkout settings on, and answers them in the checkout's view", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    const parties = { buyer: { name: "Ada", email: "ada@example.com", ref: null }, seller: { ref: "s-9" } };
    const res = await post(`${url}/v1/checkouts`, {
      title: "T",
      price_usd: "1",
      parties,
      platform_fee_bps: 0,
      inherit_account_payouts: false,
      wallet_button: true,
      test_delivery_daily_cap: 3,
    });
    expect(res.status).toBe(201);
    expect(of("createCheckout")[0]).toMatchObject({
      partiesJson: JSON.stringify(parties),
      platformFeeBps: 0,
      inheritAccountPayouts: false,
      walletButton: true,
      testDeliveryDailyCap: 3,
    });
    // The fake catalog answers a checkout without settings: the view shows the defaults.
    expect(await bodyOf(res)).toMatchObject({
      parties: null,
      platform_fee_bps: 0,
      inherit_account_payouts: true,
      wallet_button: false,
      test_delivery_daily_cap: 25,
    });
  });

  it.each([
    [{ schedule_periods: 4 }, ["schedule_interval_days"], "both or neither"],
    [{ schedule_interval_days: 0, schedule_periods: 4 }, ["schedule_interval_days"], "must be >= 1"],
    [{ schedule_periods: 25 }, ["schedule_periods"], "must be <= 24"],
    [{ escrow_offer: "always" }, ["escrow_offer"], "must be equal to one of the allowed values"],
    [{ content: { kind: "article" } }, ["content.kind"], "is not a known field"],
    [{ content: { pass_hours: 8761 } }, ["content.pass_hours"], "must be <= 8760"],
    [{ content: "text" }, ["content"], "must be object"],
    [{ max_deliveries: 0 }, ["max_deliveries"], "must be >= 1"],
    [{ parties: { buyer: { phone: "1" } } }, ["parties.buyer.phone"], "is not a known field"],
    [{ platform_fee_bps: 2001 }, ["platform_fee_bps"], "must be <= 2000"],
  ])("validates %j before asking anyone (422 naming the field)", async (extra, fields, reason) => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", ...extra });
    expect(res.status).toBe(422);
    const errors = (await bodyOf(res)).errors as { field: string; reason: string }[];
    expect(errors.map((e) => e.field).sort()).toEqual(fields);
    expect(errors.some((e) => e.reason.includes(reason))).toBe(true);
    expect(of("createCheckout")).toHaveLength(0);
  });

  it("asks payments about the standing Solana wallet the checkout copies, and creates when its USDC account exists", async () => {
    const { fakes, of, called } = catalogFakes(identityV1.Scope.FULL, { wallets: [standing("eip155", PAY_TO), standing("solana", SOLANA)] });
    const { url } = await serve.app(fakes);
    expect((await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1" })).status).toBe(201);
    expect(of("checkPayoutAccounts")).toEqual([{ rails: [{ chainFamily: "solana", address: SOLANA }] }]);
    expect(called()).toEqual([
      "identity.resolveCredential",
      "escrow.getEscrowSettings",
      "identity.getPlatformSettings",
      "identity.getPayoutWallets",
      "payments.checkPayoutAccounts",
      "catalog.createCheckout",
    ]);
  });

  it("refuses a standing Solana wallet without a USDC account: 422 payout-account-missing naming the account, nothing created", async () => {
    const { fakes, of } = catalogFakes(identityV1.Scope.FULL, { wallets: [standing("eip155", PAY_TO), standing("solana", SOLANA)], exists: false });
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1" });
    expect(res.status).toBe(422);
    const problem = await bodyOf(res);
    expect(problem).toMatchObject({
      type: `${SITE_URL}/problems/payout-account-missing`,
      title: "Payout account missing",
      status: 422,
      chain: "solana",
      address: SOLANA,
      network: DEVNET,
      asset: DEVNET_USDC,
      token_account: SOLANA_ATA,
      help: { retry_is_safe: false },
    });
    expect(problem.help.fix).toContain(SOLANA_ATA);
    expect(problem.help.fix).toContain(`spl-token create-account ${DEVNET_USDC} --owner ${SOLANA}`);
    expect(of("createCheckout")).toHaveLength(0);
  });

  it("answers 503 unavailable, creating nothing, when payments cannot tell (the network does not answer)", async () => {
    const failure = new ProblemError("unavailable", { message: "The network did not answer.", retryAfterSeconds: 5 });
    const { fakes, of } = catalogFakes(identityV1.Scope.FULL, { wallets: [standing("solana", SOLANA)], failure });
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1" });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await bodyOf(res)).toMatchObject({ type: `${SITE_URL}/problems/unavailable`, help: { retry_is_safe: true } });
    expect(of("createCheckout")).toHaveLength(0);
  });

  it("asks nothing about accounts for a pay_to sent (its only rail, EVM) or an account whose only wallet is EVM", async () => {
    const { fakes, called } = catalogFakes(identityV1.Scope.FULL, { wallets: [standing("solana", SOLANA)], exists: false });
    const { url } = await serve.app(fakes);
    expect((await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", pay_to: PAY_TO })).status).toBe(201);
    expect(called()).toEqual(["identity.resolveCredential", "escrow.getEscrowSettings", "identity.getPlatformSettings", "catalog.createCheckout"]);
    const evmOnly = catalogFakes();
    const served = await serve.app(evmOnly.fakes);
    expect((await post(`${served.url}/v1/checkouts`, { title: "T", price_usd: "1" })).status).toBe(201);
    expect(evmOnly.called()).toEqual([
      "identity.resolveCredential",
      "escrow.getEscrowSettings",
      "identity.getPlatformSettings",
      "identity.getPayoutWallets",
      "catalog.createCheckout",
    ]);
  });

  describe("a platform's Solana fee wallet", () => {
    const platformWallets = [standing("eip155", PAY_TO), standing("solana", PLATFORM_SOLANA)];

    it("asks payments about the platform's standing Solana wallet when the create takes a cut, and creates when its USDC account exists", async () => {
      const { fakes, of, called } = catalogFakes(identityV1.Scope.FULL, { wallets: platformWallets, platform: PLATFORM });
      const { url } = await serve.app(fakes);
      expect((await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", pay_to: PAY_TO })).status).toBe(201);
      expect(of("checkPayoutAccounts")).toEqual([{ rails: [{ chainFamily: "solana", address: PLATFORM_SOLANA }] }]);
      expect(called()).toEqual([
        "identity.resolveCredential",
        "escrow.getEscrowSettings",
        "identity.getPlatformSettings",
        "identity.getPayoutWallets",
        "payments.checkPayoutAccounts",
        "catalog.createCheckout",
      ]);
    });

    it("refuses a platform Solana wallet without a USDC account: 422 payout-account-missing naming it as the platform fee wallet, nothing created", async () => {
      const { fakes, of } = catalogFakes(identityV1.Scope.FULL, { wallets: platformWallets, platform: PLATFORM, exists: false });
      const { url } = await serve.app(fakes);
      const res = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", pay_to: PAY_TO, platform_fee_bps: 150 });
      expect(res.status).toBe(422);
      const problem = await bodyOf(res);
      expect(problem).toMatchObject({
        type: `${SITE_URL}/problems/payout-account-missing`,
        chain: "solana",
        address: PLATFORM_SOLANA,
        token_account: SOLANA_ATA,
        help: { retry_is_safe: false },
      });
      expect(problem.detail.message).toContain(`solana platform fee wallet ${PLATFORM_SOLANA}`);
      expect(problem.detail.message).toContain("platform cut");
      expect(problem.help.fix).toContain(`spl-token create-account ${DEVNET_USDC} --owner ${PLATFORM_SOLANA}`);
      expect(of("createCheckout")).toHaveLength(0);
    });

    it("one question when the platform's Solana wallet is both its payout rail and its fee wallet, named as its payout wallet", async () => {
      const { fakes, of } = catalogFakes(identityV1.Scope.FULL, { wallets: platformWallets, platform: PLATFORM, exists: false });
      const { url } = await serve.app(fakes);
      const res = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", inherit_account_payouts: true });
      expect(res.status).toBe(422);
      expect(of("checkPayoutAccounts")).toEqual([{ rails: [{ chainFamily: "solana", address: PLATFORM_SOLANA }] }]);
      expect((await bodyOf(res)).detail.message).toContain(`solana payout wallet ${PLATFORM_SOLANA}`);
      expect(of("createCheckout")).toHaveLength(0);
    });

    it.each([
      [
        "the create sends platform_fee_bps 0 (no cut: the platform's settings are not even asked)",
        PLATFORM,
        { platform_fee_bps: 0 },
        ["identity.resolveCredential", "escrow.getEscrowSettings", "catalog.createCheckout"],
      ],
      [
        "the platform's standing fee is 0",
        create(identityV1.PlatformSettingsSchema, { platformAccount: true, platformFeeTo: FEE_WALLET }),
        {},
        ["identity.resolveCredential", "escrow.getEscrowSettings", "identity.getPlatformSettings", "catalog.createCheckout"],
      ],
      [
        "the platform has no fee wallet (catalog refuses a cut)",
        create(identityV1.PlatformSettingsSchema, { platformAccount: true }),
        { platform_fee_bps: 100 },
        ["identity.resolveCredential", "escrow.getEscrowSettings", "identity.getPlatformSettings", "catalog.createCheckout"],
      ],
      [
        "the account is not a platform (catalog refuses a cut)",
        undefined,
        { platform_fee_bps: 100 },
        ["identity.resolveCredential", "escrow.getEscrowSettings", "identity.getPlatformSettings", "catalog.createCheckout"],
      ],
    ])("checks no fee wallet when %s", async (_, platform, extra, calls) => {
      const { fakes, called } = catalogFakes(identityV1.Scope.FULL, { wallets: platformWallets, ...(platform ? { platform } : {}), exists: false });
      const { url } = await serve.app(fakes);
      expect((await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", pay_to: PAY_TO, ...extra })).status).toBe(201);
      expect(called()).toEqual(calls);
    });

    it("a platform without a Solana wallet: nothing to check, the checkout is created", async () => {
      const { fakes, called } = catalogFakes(identityV1.Scope.FULL, { wallets: [standing("eip155", PAY_TO)], platform: PLATFORM, exists: false });
      const { url } = await serve.app(fakes);
      expect((await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", pay_to: PAY_TO })).status).toBe(201);
      expect(called()).toEqual([
        "identity.resolveCredential",
        "escrow.getEscrowSettings",
        "identity.getPlatformSettings",
        "identity.getPayoutWallets",
        "catalog.createCheckout",
      ]);
    });
  });

  it("needs a credential with scope payments", async () => {
    const { fakes } = catalogFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const anonymous = await fetch(`${url}/v1/checkouts`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="c402"');
    const readOnly = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1" });
    expect(readOnly.status).toBe(403);
    expect(await bodyOf(readOnly)).toMatchObject({ type: `${SITE_URL}/problems/forbidden`, needed_scope: "payments" });
  });
});

describe("creating an escrow checkout", () => {
  const FROZEN = { preset: "shipping", settleSeconds: 1_209_600, holdSeconds: 1_209_600, backstopSeconds: 5_184_000, arbiterEvm: ARBITER };

  it("POST /v1/escrow-checkouts asks the escrow service for the terms of the fields sent, and hands catalog the terms it resolved", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/escrow-checkouts`, {
      title: "Chair",
      price_usd: "120",
      escrow_preset: "shipping",
      escrow_hold_window: 7200,
      arbiter_evm: ARBITER,
    });
    expect(res.status).toBe(201);
    expect(of("resolveEscrowTerms")).toEqual([
      expect.objectContaining({ accountId: ACCOUNT_ID, preset: escrowV1.EscrowPreset.SHIPPING, holdSeconds: 7200, arbiterEvm: ARBITER, forSubSeller: false }),
    ]);
    expect(of("createCheckout")[0]).toMatchObject({ title: "Chair", escrow: FROZEN });
    expect(of("createCheckout")[0]).not.toHaveProperty("escrowTwin");
  });

  it("a platform account's create is for a sub-seller unless it inherits its own payouts", async () => {
    const { fakes, of } = catalogFakes(identityV1.Scope.FULL, { platform: PLATFORM });
    const { url } = await serve.app(fakes);
    await post(`${url}/v1/escrow-checkouts`, { title: "Chair", price_usd: "120", pay_to: PAY_TO, platform_fee_bps: 0 });
    await post(`${url}/v1/escrow-checkouts`, { title: "Chair", price_usd: "120", inherit_account_payouts: true, platform_fee_bps: 0 });
    expect(of("resolveEscrowTerms").map((r) => (r as { forSubSeller: boolean }).forSubSeller)).toEqual([true, false]);
  });

  it("escrow_offer optional asks for the account's default terms and hands them to catalog as the twin's", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    expect((await post(`${url}/v1/checkouts`, { title: "Chair", price_usd: "120", escrow_offer: "optional" })).status).toBe(201);
    expect(of("resolveEscrowTerms")).toEqual([expect.not.objectContaining({ preset: expect.anything() })]);
    expect(of("createCheckout")[0]).toMatchObject({ escrowTwin: FROZEN });
    expect(of("createCheckout")[0]).not.toHaveProperty("escrow");
  });

  it("the policy always makes a plain create an escrow one; the escrow service's refusal passes through and nothing is created", async () => {
    const always = catalogFakes(identityV1.Scope.FULL, { escrowPolicy: escrowV1.EscrowPolicy.ALWAYS });
    const { url } = await serve.app(always.fakes);
    expect((await post(`${url}/v1/checkouts`, { title: "Chair", price_usd: "120" })).status).toBe(201);
    expect(always.of("createCheckout")[0]).toMatchObject({ escrow: FROZEN });

    const refusal = new ProblemError("conflict", "The account's escrow policy is disabled: it creates no escrow checkouts.");
    const disabled = catalogFakes(identityV1.Scope.FULL, { escrowRefusal: refusal });
    const other = await serve.app(disabled.fakes);
    const res = await post(`${other.url}/v1/escrow-checkouts`, { title: "Chair", price_usd: "120" });
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(disabled.of("createCheckout")).toHaveLength(0);
  });

  it("refuses series fields with escrow by name, asking neither the escrow service nor catalog", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/escrow-checkouts`, { title: "Chair", price_usd: "120", schedule_interval_days: 7, schedule_periods: 4 });
    expect(res.status).toBe(422);
    expect(((await bodyOf(res)).errors as { field: string; reason: string }[]).map((e) => [e.field, /escrow/.test(e.reason)])).toEqual([
      ["schedule_interval_days", true],
      ["schedule_periods", true],
    ]);
    expect(of("resolveEscrowTerms")).toHaveLength(0);
    expect(of("createCheckout")).toHaveLength(0);
  });
});

describe("creating a recurring series", () => {
  it("hands catalog the series' terms and shows them on the created checkout; a plain checkout's schedule is null", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/checkouts`, { title: "Digest", price_usd: "1", schedule_interval_days: 7, schedule_periods: 4 });
    expect(res.status).toBe(201);
    expect(of("createCheckout")[0]).toMatchObject({ schedule: { intervalDays: 7, periods: 4 } });
    expect(await bodyOf(res)).toMatchObject({ schedule: { interval_days: 7, periods: 4 }, escrow: null });
    const plain = await post(`${url}/v1/checkouts`, { title: "Once", price_usd: "1" });
    expect((await bodyOf(plain)).schedule).toBeNull();
    expect(of("createCheckout")[1]).not.toHaveProperty("schedule");
  });

  it("a series with escrow_offer is refused by the escrow rule, naming both series fields; catalog is not asked", async () => {
    const { fakes, of } = catalogFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/checkouts`, { title: "T", price_usd: "1", escrow_offer: "required", schedule_interval_days: 7, schedule_periods: 4 });
    expect(res.status).toBe(422);
    expect(((await bodyOf(res)).errors as { field: string }[]).map((e) => e.field)).toEqual(["schedule_interval_days", "schedule_periods"]);
    expect(of("createCheckout")).toHaveLength(0);
  });

  it("lists and reads show a series' schedule", async () => {
    const { fakes } = catalogFakes(identityV1.Scope.READ_ONLY);
    const series = { intervalDays: 30, periods: 12 };
    fakes.catalog = {
      ...fakes.catalog,
      getCheckout: async () => create(catalogV1.GetCheckoutResponseSchema, { checkout: checkout({ schedule: series }) }),
      listCheckouts: async () =>
        create(catalogV1.ListCheckoutsResponseSchema, {
          checkouts: [
            create(catalogV1.CheckoutSummarySchema, {
              id: CHECKOUT_ID,
              title: "Digest",
              priceAtomic: 1_000_000n,
              payTo: PAY_TO,
              schedule: series,
              createdAt: timestampFromDate(new Date()),
            }),
          ],
        }),
    };
    const { url } = await serve.app(fakes);
    const one = await bodyOf(await fetch(`${url}/v1/checkouts/${CHECKOUT_ID}`, { headers: auth }));
    expect(one.schedule).toEqual({ interval_days: 30, periods: 12 });
    const list = await bodyOf(await fetch(`${url}/v1/checkouts`, { headers: auth }));
    expect((list.checkouts as { schedule: unknown }[])[0]?.schedule).toEqual({ interval_days: 30, periods: 12 });
  });
});

describe("reading checkouts", () => {
  it("lists summaries newest first, a page at a time", async () => {
    const { fakes, of } = catalogFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/checkouts?limit=1&include_voided=true`, { headers: auth });
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body.checkouts).toHaveLength(1);
    expect(body.checkouts[0]).toMatchObject({
      id: "chk_Listed1".padEnd(28, "0"),
      object: "checkout",
      status: "open",
      price_usd: "0.250000",
      created_at: "2025-01-02T00:00:00.000Z",
    });
    expect(body.checkouts[0]).not.toHaveProperty("payload");
    expect(body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    expect(of("listCheckouts")).toEqual([{ accountId: ACCOUNT_ID, includeVoided: true, pageSize: 2 }]);
    const bad = await fetch(`${url}/v1/checkouts?include_voided=maybe`, { headers: auth });
    expect(bad.status).toBe(422);
  });

  it("reads one checkout of the caller's account, goods and offer card included", async () => {
    const { fakes, of } = catalogFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/checkouts/${CHECKOUT_ID}`, { headers: auth });
    expect(await bodyOf(res)).toMatchObject({ id: CHECKOUT_ID, payload: { temp_c: 21 }, freshness: "hourly", input_schema: null });
    expect(of("getCheckout")).toEqual([{ checkoutId: CHECKOUT_ID, accountId: ACCOUNT_ID }]);
  });

  it.each([
    [
      "a cut with the platform's Solana wallet frozen",
      {
        platformFeeBps: 300,
        platformFeeTo: FEE_WALLET,
        platformFeeRails: [
          { chainFamily: "eip155", address: FEE_WALLET },
          { chainFamily: "solana", address: PLATFORM_SOLANA },
        ],
      },
      { base: FEE_WALLET, solana: PLATFORM_SOLANA },
    ],
    [
      "a cut of a platform without a Solana wallet",
      { platformFeeBps: 300, platformFeeTo: FEE_WALLET, platformFeeRails: [{ chainFamily: "eip155", address: FEE_WALLET }] },
      { base: FEE_WALLET },
    ],
    ["a cut answered by a catalog that sends no fee rails yet", { platformFeeBps: 300, platformFeeTo: FEE_WALLET }, { base: FEE_WALLET }],
    ["no cut", { platformFeeBps: 0 }, {}],
  ])("answers platform_fee_wallets by chain: %s", async (_, settings, wallets) => {
    const { fakes } = catalogFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app({
      ...fakes,
      catalog: { getCheckout: async () => create(catalogV1.GetCheckoutResponseSchema, { checkout: checkout({ settings }) }) },
    });
    const body = await bodyOf(await fetch(`${url}/v1/checkouts/${CHECKOUT_ID}`, { headers: auth }));
    expect(body.platform_fee_wallets).toEqual(wallets);
    expect(body.platform_fee_to).toBe("platformFeeTo" in settings ? settings.platformFeeTo : null);
  });
});

describe("going live", () => {
  it("arms the checkout, answers its view with the rehearsal note, and drops the faces' cached 402s", async () => {
    const { fakes, of, called } = catalogFakes();
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/c/${CHECKOUT_ID}`)).status).toBe(402);
    expect((await fetch(`${url}/c/${CHECKOUT_ID}/test`)).status).toBe(402);
    const res = await post(`${url}/v1/checkouts/${CHECKOUT_ID}/go-live`, {});
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toMatchObject({
      id: CHECKOUT_ID,
      test_mode: false,
      already_live: false,
      rehearsal: { test_url: `${BASE_URL}/c/${CHECKOUT_ID}/test`, note: expect.stringContaining("can never be armed") },
    });
    expect(of("goLive")).toEqual([{ accountId: ACCOUNT_ID, actor: "key:sk_test_abcd", checkoutId: CHECKOUT_ID }]);
    expect((await fetch(`${url}/c/${CHECKOUT_ID}`)).status).toBe(402);
    expect((await fetch(`${url}/c/${CHECKOUT_ID}/test`)).status).toBe(402);
    expect(of("quotePayment")).toHaveLength(4);
    // The faces ask payments only (the quote carries the checkout); catalog was asked to go live, nothing else.
    expect(called().filter((c) => c.startsWith("catalog."))).toEqual(["catalog.goLive"]);
  });
});
