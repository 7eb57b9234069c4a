import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { escrowV1, identityV1 } from "@c402/contracts";
import { ACCOUNT_ID, bodyOf, recorded, resolveCredential, SELLER_KEY, servers } from "../support/fake-gateway";

/**
 * GET and PUT /v1/account/escrow, GET /v1/account/escrow/readiness
 * (routes/escrow-settings.ts): what the gateway sends the escrow service and
 * answers; `{arbiter: "payouts"}` read from identity's standing wallets and
 * sent as explicit values.
 */

const serve = servers();
const auth = { authorization: `Bearer ${SELLER_KEY}`, "content-type": "application/json" };
const BASE_WALLET = "0x1111111111111111111111111111111111111111";
const SOLANA_WALLET = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV";
const PRESETS = [
  { preset: escrowV1.EscrowPreset.INSTANT, windows: { settleSeconds: 3_600, holdSeconds: 86_400, backstopSeconds: 604_800 } },
  { preset: escrowV1.EscrowPreset.STANDARD, windows: { settleSeconds: 259_200, holdSeconds: 604_800, backstopSeconds: 2_592_000 } },
  { preset: escrowV1.EscrowPreset.SHIPPING, windows: { settleSeconds: 1_209_600, holdSeconds: 1_209_600, backstopSeconds: 5_184_000 } },
];
const standing = (chainFamily: string, address: string, isDefault = true) => create(identityV1.PayoutWalletSchema, { chainFamily, address, isDefault });

function fakes(opts: { scope?: identityV1.Scope; wallets?: identityV1.PayoutWallet[]; arbitersChanged?: boolean } = {}) {
  const settings = create(escrowV1.EscrowSettingsSchema, {
    policy: escrowV1.EscrowPolicy.ALWAYS,
    defaultPreset: escrowV1.EscrowPreset.SHIPPING,
    arbiterEvm: BASE_WALLET,
    updatedAt: timestampFromDate(new Date("2026-12-07T10:00:00Z")),
  });
  return recorded({
    identity: {
      resolveCredential: resolveCredential(opts.scope ?? identityV1.Scope.FULL),
      getPayoutWallets: async () => create(identityV1.GetPayoutWalletsResponseSchema, { wallets: opts.wallets ?? [] }),
    },
    escrow: {
      getEscrowSettings: async () => create(escrowV1.GetEscrowSettingsResponseSchema, { settings, presets: PRESETS }),
      putEscrowSettings: async () =>
        create(escrowV1.PutEscrowSettingsResponseSchema, { settings, presets: PRESETS, changed: true, arbitersChanged: opts.arbitersChanged ?? false }),
      getArbiterReadiness: async () =>
        create(escrowV1.GetArbiterReadinessResponseSchema, {
          evm: { arbiter: BASE_WALLET, escrowOffered: true, network: "eip155:84532", gasBalance: "0", rulingsAffordable: 0, note: "cannot pay" },
        }),
    },
  });
}

const put = (url: string, body: unknown) => fetch(`${url}/v1/account/escrow`, { method: "PUT", headers: auth, body: JSON.stringify(body) });

describe("GET, PUT /v1/account/escrow", () => {
  it("answers the escrow service's settings in the API's names, the presets' windows in seconds", async () => {
    const { fakes: f, called } = fakes();
    const { url } = await serve.app(f);
    const body = await bodyOf(await fetch(`${url}/v1/account/escrow`, { headers: auth }));
    expect(body).toEqual({
      object: "escrow_settings",
      escrow_policy: "always",
      escrow_default_preset: "shipping",
      escrow_arbiter_evm: BASE_WALLET,
      escrow_arbiter_svm: null,
      updated_at: "2026-12-07T10:00:00.000Z",
      presets: {
        instant: { settle_window: 3_600, hold_window: 86_400, backstop_window: 604_800 },
        standard: { settle_window: 259_200, hold_window: 604_800, backstop_window: 2_592_000 },
        shipping: { settle_window: 1_209_600, hold_window: 1_209_600, backstop_window: 5_184_000 },
      },
      note: expect.any(String),
    });
    expect(called()).toEqual(["identity.resolveCredential", "escrow.getEscrowSettings"]);
  });

  it("sends the fields named, an arbiter null as a clearing update, and the credential's actor", async () => {
    const { fakes: f, of } = fakes();
    const { url } = await serve.app(f);
    const res = await put(url, { escrow_policy: "disabled", escrow_default_preset: "instant", escrow_arbiter_evm: null, escrow_arbiter_svm: SOLANA_WALLET });
    expect(res.status).toBe(200);
    expect(of("putEscrowSettings")).toEqual([
      {
        accountId: ACCOUNT_ID,
        policy: escrowV1.EscrowPolicy.DISABLED,
        defaultPreset: escrowV1.EscrowPreset.INSTANT,
        arbiterEvm: {},
        arbiterSvm: { address: SOLANA_WALLET },
        actor: "key:sk_test_abcd",
      },
    ]);
    // Arbiters the service says did not change: no readiness asked or answered.
    const body = await bodyOf(res);
    expect(body).toMatchObject({ changed: true });
    expect(body.readiness).toBeUndefined();
    expect(of("getArbiterReadiness")).toEqual([]);
  });

  it('{arbiter: "payouts"} sends the standing Base and Solana payout wallets as the arbiters, and answers their readiness', async () => {
    const { fakes: f, of } = fakes({
      arbitersChanged: true,
      wallets: [standing("eip155", "0x2222222222222222222222222222222222222222", false), standing("eip155", BASE_WALLET), standing("stellar", "GABC")],
    });
    const { url } = await serve.app(f);
    const body = await bodyOf(await put(url, { arbiter: "payouts" }));
    expect(of("putEscrowSettings")).toEqual([{ accountId: ACCOUNT_ID, arbiterEvm: { address: BASE_WALLET }, arbiterSvm: {}, actor: "key:sk_test_abcd" }]);
    expect(body).toMatchObject({
      changed: true,
      readiness: {
        evm: { arbiter: BASE_WALLET, escrow_offered: true, network: "eip155:84532", gas_balance: "0", rulings_affordable: 0, note: "cannot pay" },
        svm: null,
      },
      custody_note: expect.any(String),
    });
  });

  it('refuses {arbiter: "payouts"} beside an explicit arbiter, and when the account has no wallet to copy, asking the escrow service nothing', async () => {
    const { fakes: f, of } = fakes({ wallets: [standing("stellar", "GABC")] });
    const { url } = await serve.app(f);
    const both = await put(url, { arbiter: "payouts", escrow_arbiter_svm: SOLANA_WALLET });
    expect(both.status).toBe(422);
    expect((await bodyOf(both)).errors).toEqual([{ field: "escrow_arbiter_svm", reason: 'cannot be sent with arbiter: "payouts", which sets both arbiters' }]);
    const none = await put(url, { arbiter: "payouts" });
    expect(none.status).toBe(422);
    expect((await bodyOf(none)).errors).toEqual([{ field: "arbiter", reason: expect.stringMatching(/no standing Base or Solana payout wallet/) }]);
    expect(of("putEscrowSettings")).toEqual([]);
  });

  it("a key below full may read but not change; GET /v1/account/escrow/readiness answers the escrow service's readiness", async () => {
    const { fakes: f, of } = fakes({ scope: identityV1.Scope.PAYMENTS });
    const { url } = await serve.app(f);
    const refused = await put(url, { escrow_policy: "disabled" });
    expect(refused.status).toBe(403);
    expect(await bodyOf(refused)).toMatchObject({ needed_scope: "full" });
    expect(of("putEscrowSettings")).toEqual([]);
    const readiness = await bodyOf(await fetch(`${url}/v1/account/escrow/readiness`, { headers: auth }));
    expect(readiness).toEqual({
      object: "escrow_readiness",
      readiness: { evm: expect.objectContaining({ arbiter: BASE_WALLET, gas_balance: "0" }), svm: null },
      custody_note: expect.any(String),
    });
  });
});
