import { create } from "@bufbuild/protobuf";
import { catalogV1, identityV1, paymentsV1 } from "@c402/contracts";
import { invalid, ProblemError } from "@c402/problems";
import { ACCOUNT_ID, bodyOf, checkout, CHECKOUT_ID, PAY_TO, recorded, resolveCredential, SELLER_KEY, servers } from "../support/fake-gateway";

/** GET, PUT /v1/account/wallets, POST /v1/account/wallets/preview and POST /v1/checkouts/{id}/payouts (routes/payouts.ts). */

const serve = servers();
const auth = { authorization: `Bearer ${SELLER_KEY}` };
const SIGNER = "0x5B38Da6a701c568545dCfcB03FcB875f56beddC4";
const OTHER_EVM = "0xAb8483F64d9C6d1EcF9b849Ae677dD3315835cb2";
const SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const STELLAR = "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H";

const wallet = (chainFamily: string, address: string, verified: boolean, isDefault: boolean) =>
  create(identityV1.PayoutWalletSchema, { chainFamily, address, verified, isDefault });

/** The wallets after a PUT that made OTHER_EVM stand for EVM and added Solana. */
const AFTER = [wallet("eip155", SIGNER, true, false), wallet("eip155", OTHER_EVM, false, true), wallet("solana", SOLANA, false, true)];
const PUT_ANSWER = create(identityV1.PutPayoutWalletsResponseSchema, {
  wallets: AFTER,
  changes: [{ chainFamily: "eip155", before: SIGNER, after: OTHER_EVM }, { chainFamily: "solana", after: SOLANA }, { chainFamily: "stellar" }],
  changed: true,
});

function fakes(opts: { scope?: identityV1.Scope; putFailure?: Error; railFailure?: Error; accountExists?: boolean; solanaRail?: string } = {}) {
  return recorded({
    identity: {
      resolveCredential: resolveCredential(opts.scope ?? identityV1.Scope.FULL),
      getPayoutWallets: async () => create(identityV1.GetPayoutWalletsResponseSchema, { wallets: [wallet("eip155", SIGNER, true, true)] }),
      putPayoutWallets: async () => {
        if (opts.putFailure) throw opts.putFailure;
        return PUT_ANSWER;
      },
    },
    payments: {
      checkPayoutAccounts: async (req) =>
        create(paymentsV1.CheckPayoutAccountsResponseSchema, {
          checks: (req.rails ?? [])
            .filter((r) => r.chainFamily === "solana")
            .map((r) => ({
              chainFamily: r.chainFamily,
              address: r.address,
              network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
              asset: "USDC",
              account: "ATA",
              exists: opts.accountExists ?? true,
            })),
        }),
    },
    catalog: {
      getCheckout: async () =>
        create(catalogV1.GetCheckoutResponseSchema, {
          checkout: checkout({
            payoutRails: [{ chainFamily: "eip155", address: PAY_TO }, ...(opts.solanaRail ? [{ chainFamily: "solana", address: opts.solanaRail }] : [])],
          }),
        }),
      addPayoutRail: async () => {
        if (opts.railFailure) throw opts.railFailure;
        return create(catalogV1.AddPayoutRailResponseSchema, {
          checkout: checkout({
            payoutRails: [
              { chainFamily: "eip155", address: PAY_TO },
              { chainFamily: "stellar", address: STELLAR },
            ],
          }),
        });
      },
    },
  });
}

const send = (url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = auth) =>
  fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });

const STANDING_NOW = {
  base: { address: OTHER_EVM, verified: false, offered: true },
  solana: { address: SOLANA, verified: false, offered: true },
  stellar: null,
};

describe("GET /v1/account/wallets", () => {
  it("answers the standing wallet per chain and the sign-in wallets (a read_only key suffices)", async () => {
    const { fakes: f, of } = fakes({ scope: identityV1.Scope.READ_ONLY });
    const { url } = await serve.app(f);
    const res = await send(url, "GET", "/v1/account/wallets");
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({
      object: "payout_wallets",
      wallets: { base: { address: SIGNER, verified: true, offered: true }, solana: null, stellar: null },
      verified_wallets: [{ chain: "base", address: SIGNER }],
      note: expect.stringContaining("Base, Solana and Stellar rails are offered"),
    });
    expect(of("getPayoutWallets")).toEqual([{ accountId: ACCOUNT_ID }]);
  });
});

describe("PUT /v1/account/wallets", () => {
  it("sends the body to identity by stored family (null and absent name none), with the credential's account and actor", async () => {
    const { fakes: f, of } = fakes();
    const { url } = await serve.app(f);
    const res = await send(url, "PUT", "/v1/account/wallets", { base: OTHER_EVM.toLowerCase(), solana: SOLANA, stellar: null });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({
      object: "payout_wallets",
      wallets: STANDING_NOW,
      verified_wallets: [{ chain: "base", address: SIGNER }],
      note: expect.any(String),
      changed: true,
      changes: { base: "replaced", solana: "added", stellar: "none" },
    });
    expect(of("putPayoutWallets")).toEqual([
      { accountId: ACCOUNT_ID, wallets: { eip155: OTHER_EVM.toLowerCase(), solana: SOLANA }, dryRun: false, actor: "key:sk_test_abcd" },
    ]);
  });

  it.each([
    ["read_only", identityV1.Scope.READ_ONLY],
    ["payments", identityV1.Scope.PAYMENTS],
  ])("refuses a %s key with 403 naming scope full, asking identity nothing more", async (_name, scope) => {
    const { fakes: f, called } = fakes({ scope });
    const { url } = await serve.app(f);
    const res = await send(url, "PUT", "/v1/account/wallets", { solana: SOLANA });
    expect(res.status).toBe(403);
    expect(await bodyOf(res)).toMatchObject({ needed_scope: "full" });
    expect(called()).toEqual(["identity.resolveCredential"]);
  });

  it("refuses unknown fields, wrong types, empty and overlong addresses with 422 naming each, asking identity nothing", async () => {
    const { fakes: f, called } = fakes();
    const { url } = await serve.app(f);
    const res = await send(url, "PUT", "/v1/account/wallets", { evm: SIGNER, base: 7, solana: "", stellar: "G".repeat(129) });
    expect(res.status).toBe(422);
    const body = await bodyOf(res);
    expect(body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["base", "evm", "solana", "stellar"]);
    expect((await send(url, "PUT", "/v1/account/wallets", "[]")).status).toBe(422);
    // No body at all is not "replace with nothing": that must be asked for with {}.
    const bodiless = await send(url, "PUT", "/v1/account/wallets");
    expect(bodiless.status).toBe(422);
    expect((await bodyOf(bodiless)).errors).toEqual([{ field: "(body)", reason: expect.stringContaining("is required") }]);
    expect(called()).toEqual(["identity.resolveCredential", "identity.resolveCredential", "identity.resolveCredential"]);
  });

  it("answers identity's 422 for an address its chain refuses as it came, naming the chain", async () => {
    const failure = invalid([{ field: "stellar", reason: "has a wrong strkey checksum (check the address)" }]);
    const { fakes: f } = fakes({ putFailure: failure });
    const { url } = await serve.app(f);
    const res = await send(url, "PUT", "/v1/account/wallets", { stellar: `${STELLAR.slice(0, 55)}A` });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect((await bodyOf(res)).errors).toEqual([{ field: "stellar", reason: "has a wrong strkey checksum (check the address)" }]);
  });

  it("401 without a credential, before the body is read", async () => {
    const { fakes: f, called } = fakes();
    const { url } = await serve.app(f);
    expect((await send(url, "PUT", "/v1/account/wallets", { nonsense: 1 }, {})).status).toBe(401);
    expect(called()).toEqual([]);
  });
});

describe("POST /v1/account/wallets/preview", () => {
  it("takes a read_only key, asks identity for a dry run and answers what the PUT would store", async () => {
    const { fakes: f, of } = fakes({ scope: identityV1.Scope.READ_ONLY });
    const { url } = await serve.app(f);
    const res = await send(url, "POST", "/v1/account/wallets/preview", { base: OTHER_EVM, solana: SOLANA });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toMatchObject({ object: "payout_wallets_preview", wallets: STANDING_NOW, changed: true, changes: { base: "replaced" } });
    expect(of("putPayoutWallets")).toEqual([
      { accountId: ACCOUNT_ID, wallets: { eip155: OTHER_EVM, solana: SOLANA }, dryRun: true, actor: "key:sk_test_abcd" },
    ]);
  });

  it("validates the same body as the PUT (422 naming the field)", async () => {
    const { fakes: f, called } = fakes({ scope: identityV1.Scope.READ_ONLY });
    const { url } = await serve.app(f);
    const res = await send(url, "POST", "/v1/account/wallets/preview", { tron: "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb" });
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors).toEqual([{ field: "tron", reason: "is not a known field" }]);
    expect(called()).toEqual(["identity.resolveCredential"]);
  });
});

describe("POST /v1/checkouts/{id}/payouts", () => {
  it("adds the rail through catalog (chain base/solana/stellar as its stored family) and answers the checkout with every rail", async () => {
    const { fakes: f, of } = fakes({ scope: identityV1.Scope.PAYMENTS });
    const { url } = await serve.app(f);
    const res = await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "stellar", address: STELLAR });
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body).toMatchObject({ id: CHECKOUT_ID, object: "checkout", pay_to: PAY_TO });
    expect(body.payouts).toEqual([
      { chain: "base", address: PAY_TO, offered: true },
      { chain: "stellar", address: STELLAR, offered: true },
    ]);
    expect(of("addPayoutRail")).toEqual([
      { accountId: ACCOUNT_ID, actor: "key:sk_test_abcd", checkoutId: CHECKOUT_ID, chainFamily: "stellar", address: STELLAR },
    ]);
    expect((await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "base", address: SIGNER })).status).toBe(200);
    expect((of("addPayoutRail")[1] as { chainFamily: string }).chainFamily).toBe("eip155");
  });

  it("refuses a read_only key with 403 naming scope payments", async () => {
    const { fakes: f, called } = fakes({ scope: identityV1.Scope.READ_ONLY });
    const { url } = await serve.app(f);
    const res = await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "solana", address: SOLANA });
    expect(res.status).toBe(403);
    expect(await bodyOf(res)).toMatchObject({ needed_scope: "payments" });
    expect(called()).toEqual(["identity.resolveCredential"]);
  });

  it.each([
    [{ address: SOLANA }, "chain"],
    [{ chain: "tron", address: SOLANA }, "chain"],
    [{ chain: "solana" }, "address"],
    [{ chain: "solana", address: "" }, "address"],
    [{ chain: "solana", address: SOLANA, label: "x" }, "label"],
  ])("refuses %j with 422 naming %s, asking catalog nothing", async (body, field) => {
    const { fakes: f, called } = fakes();
    const { url } = await serve.app(f);
    const res = await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, body);
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors.map((e: { field: string }) => e.field)).toEqual([field]);
    expect(called()).toEqual(["identity.resolveCredential"]);
  });

  it("adds a Solana rail once payments says its USDC account exists; refuses it (422 payout-account-missing, nothing added) when not", async () => {
    const ready = fakes({ scope: identityV1.Scope.PAYMENTS });
    const served = await serve.app(ready.fakes);
    expect((await send(served.url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "solana", address: SOLANA })).status).toBe(200);
    expect(ready.called()).toEqual(["identity.resolveCredential", "catalog.getCheckout", "payments.checkPayoutAccounts", "catalog.addPayoutRail"]);

    const missing = fakes({ scope: identityV1.Scope.PAYMENTS, accountExists: false });
    const { url } = await serve.app(missing.fakes);
    const res = await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "solana", address: SOLANA });
    expect(res.status).toBe(422);
    expect(await bodyOf(res)).toMatchObject({ type: expect.stringMatching(/\/problems\/payout-account-missing$/), address: SOLANA, token_account: "ATA" });
    expect(missing.of("addPayoutRail")).toEqual([]);
  });

  it("leaves a second Solana address to catalog's 409 without looking at its account; asks nothing about base or a malformed address", async () => {
    const { fakes: f, called } = fakes({ solanaRail: SOLANA, accountExists: false, railFailure: new ProblemError("conflict", "already pays out on solana") });
    const { url } = await serve.app(f);
    expect((await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "solana", address: SOLANA })).status).toBe(409);
    expect((await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "base", address: SIGNER })).status).toBe(409);
    expect((await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "solana", address: "2".repeat(42) })).status).toBe(409);
    expect(called().filter((c) => c !== "identity.resolveCredential")).toEqual([
      "catalog.getCheckout",
      "catalog.addPayoutRail",
      "catalog.addPayoutRail",
      "catalog.addPayoutRail",
    ]);
  });

  it.each([
    ["a chain that already has an address", new ProblemError("conflict", "This checkout already pays out on solana; payout rails are additive only."), 409],
    ["another account's checkout", new ProblemError("not-found", "No such checkout."), 404],
    ["an address its chain refuses", invalid([{ field: "address", reason: "must decode to a 32-byte public key" }]), 422],
  ])("answers catalog's refusal of %s as its problem document", async (_what, failure, status) => {
    const { fakes: f } = fakes({ railFailure: failure });
    const { url } = await serve.app(f);
    const res = await send(url, "POST", `/v1/checkouts/${CHECKOUT_ID}/payouts`, { chain: "solana", address: SOLANA });
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });
});
