import { create } from "@bufbuild/protobuf";
import { identityV1, supportedMessage } from "@c402/contracts";
import { bodyOf, recorded, resolveCredential, SELLER_KEY, servers } from "../support/fake-gateway";

/**
 * GET /v1/platform/quote (routes/platform.ts): the split of a price under a
 * platform fee, from @c402/money's integer maths; GET and PUT
 * /v1/account/platform: the account's settings and its fee wallet per network.
 */

const serve = servers();

async function quote(query: string) {
  const { fakes, called } = recorded({});
  const { url } = await serve.app(fakes);
  const res = await fetch(`${url}/v1/platform/quote${query}`);
  // A quote is arithmetic: no service is asked.
  expect(called()).toEqual([]);
  return res;
}

describe("GET /v1/platform/quote", () => {
  it.each([
    // The spec's example: a price of 0.10 is 100000 units; the fee 0.5% + $0.01 makes the buyer pay 110500.
    [
      "?price_usd=0.10",
      { price_usd: "0.100000", platform_fee_bps: 0, buyer_pays: "0.110500", seller_receives: "0.100000", platform_cut: "0.000000", protocol_fee: "0.010500" },
    ],
    [
      "?price_usd=0.10&platform_fee_bps=0",
      { price_usd: "0.100000", platform_fee_bps: 0, buyer_pays: "0.110500", seller_receives: "0.100000", platform_cut: "0.000000", protocol_fee: "0.010500" },
    ],
    [
      "?price_usd=0.10&platform_fee_bps=250",
      { price_usd: "0.100000", platform_fee_bps: 250, buyer_pays: "0.110500", seller_receives: "0.097500", platform_cut: "0.002500", protocol_fee: "0.010500" },
    ],
    [
      "?price_usd=10&platform_fee_bps=2000",
      {
        price_usd: "10.000000",
        platform_fee_bps: 2000,
        buyer_pays: "10.060000",
        seller_receives: "8.000000",
        platform_cut: "2.000000",
        protocol_fee: "0.060000",
      },
    ],
    // The smallest price: the percentages round down to nothing, the flat $0.01 stays.
    [
      "?price_usd=0.000001&platform_fee_bps=2000",
      {
        price_usd: "0.000001",
        platform_fee_bps: 2000,
        buyer_pays: "0.010001",
        seller_receives: "0.000001",
        platform_cut: "0.000000",
        protocol_fee: "0.010000",
      },
    ],
    // 199 units: the cut is 39.8 units → 39, the fee's 0.995 units → 0.
    [
      "?price_usd=0.000199&platform_fee_bps=2000",
      {
        price_usd: "0.000199",
        platform_fee_bps: 2000,
        buyer_pays: "0.010199",
        seller_receives: "0.000160",
        platform_cut: "0.000039",
        protocol_fee: "0.010000",
      },
    ],
    // 200 units: the fee's percentage reaches one unit.
    [
      "?price_usd=0.0002&platform_fee_bps=1",
      { price_usd: "0.000200", platform_fee_bps: 1, buyer_pays: "0.010201", seller_receives: "0.000200", platform_cut: "0.000000", protocol_fee: "0.010001" },
    ],
    // The largest price a checkout takes.
    [
      "?price_usd=1000000&platform_fee_bps=2000",
      {
        price_usd: "1000000.000000",
        platform_fee_bps: 2000,
        buyer_pays: "1005000.010000",
        seller_receives: "800000.000000",
        platform_cut: "200000.000000",
        protocol_fee: "5000.010000",
      },
    ],
    // Unknown parameters are ignored; a leading-zero bps is still that integer.
    [
      "?price_usd=1.5&platform_fee_bps=0150&currency=EUR",
      { price_usd: "1.500000", platform_fee_bps: 150, buyer_pays: "1.517500", seller_receives: "1.477500", platform_cut: "0.022500", protocol_fee: "0.017500" },
    ],
  ])("%s answers the exact split", async (query, expected) => {
    const res = await quote(query);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(await bodyOf(res)).toStrictEqual(expected);
  });

  it("keeps the identities exact for every price and fee: seller + cut = price, price + fee = what the buyer pays", async () => {
    const { fakes } = recorded({});
    const { url } = await serve.app(fakes);
    const atomic = (usd: string) => BigInt(usd.replace(".", ""));
    for (const price of ["0.000001", "0.000199", "0.333333", "7.777777", "123456.789012"]) {
      for (const bps of [0, 1, 333, 1999, 2000]) {
        const q = await bodyOf(await fetch(`${url}/v1/platform/quote?price_usd=${price}&platform_fee_bps=${bps}`));
        expect(atomic(q.seller_receives) + atomic(q.platform_cut)).toBe(atomic(q.price_usd));
        expect(atomic(q.price_usd) + atomic(q.protocol_fee)).toBe(atomic(q.buyer_pays));
        expect(atomic(q.platform_cut)).toBe((atomic(q.price_usd) * BigInt(bps)) / 10_000n);
      }
    }
  });

  it.each([
    ["2001 bps", "?price_usd=0.10&platform_fee_bps=2001", [{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }]],
    ["a fractional bps", "?price_usd=0.10&platform_fee_bps=1.5", [{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }]],
    ["a negative bps", "?price_usd=0.10&platform_fee_bps=-1", [{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }]],
    ["an empty bps", "?price_usd=0.10&platform_fee_bps=", [{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }]],
    ["a bps in exponent form", "?price_usd=0.10&platform_fee_bps=1e3", [{ field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" }]],
    ["a missing price", "?platform_fee_bps=100", [{ field: "price_usd", reason: "is required" }]],
    ["no query at all", "", [{ field: "price_usd", reason: "is required" }]],
    ["a zero price", "?price_usd=0", [{ field: "price_usd", reason: "must be greater than zero" }]],
    ["a price over 1000000", "?price_usd=1000000.000001", [{ field: "price_usd", reason: "must be at most 1000000" }]],
    ["seven decimals", "?price_usd=0.1000001", [{ field: "price_usd", reason: "has more than 6 decimal places" }]],
    ["a price that is not a decimal", "?price_usd=%240.10", [{ field: "price_usd", reason: 'must be a decimal string such as "0.10"' }]],
    ["a negative price", "?price_usd=-0.10", [{ field: "price_usd", reason: 'must be a decimal string such as "0.10"' }]],
    ["a repeated price", "?price_usd=0.10&price_usd=0.10", [{ field: "price_usd", reason: "must be given once, as a plain value" }]],
    [
      "both wrong",
      "?price_usd=abc&platform_fee_bps=5000",
      [
        { field: "price_usd", reason: 'must be a decimal string such as "0.10"' },
        { field: "platform_fee_bps", reason: "must be an integer from 0 to 2000" },
      ],
    ],
  ])("refuses %s with 422 naming the field", async (_what, query, errors) => {
    const res = await quote(query);
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.get("cache-control")).toBeNull();
    const problem = await bodyOf(res);
    expect(problem).toMatchObject({ type: "https://site.test/problems/invalid-request", status: 422 });
    expect(problem.errors).toEqual(errors);
  });
});

describe("GET, PUT /v1/account/platform: fee_wallets per network", () => {
  const FEE_WALLET = "0x3333333333333333333333333333333333333333";
  const PLATFORM_SOLANA = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV";
  const DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
  const BASE_SEPOLIA = "eip155:84532";
  const auth = { authorization: `Bearer ${SELLER_KEY}` };
  const PLATFORM = create(identityV1.PlatformSettingsSchema, { platformAccount: true, platformFeeBps: 300, platformFeeTo: FEE_WALLET });
  const standing = (chainFamily: string, address: string, isDefault = true) => create(identityV1.PayoutWalletSchema, { chainFamily, address, isDefault });

  /** The run settles base on Base Sepolia and, when `solana`, Solana on the devnet (payments' facilitator answer). */
  function fakes(opts: { settings?: identityV1.PlatformSettings; wallets?: identityV1.PayoutWallet[]; solana?: boolean }) {
    const networks: Record<string, string[]> = { base: [BASE_SEPOLIA], solana: opts.solana ? [DEVNET] : [], stellar: [] };
    return recorded({
      identity: {
        resolveCredential: resolveCredential(identityV1.Scope.FULL),
        getPlatformSettings: async () => create(identityV1.GetPlatformSettingsResponseSchema, { settings: opts.settings ?? PLATFORM }),
        putPlatformSettings: async () => create(identityV1.PutPlatformSettingsResponseSchema, { settings: opts.settings ?? PLATFORM }),
        getPayoutWallets: async () => create(identityV1.GetPayoutWalletsResponseSchema, { wallets: opts.wallets ?? [] }),
      },
      payments: {
        facilitatorSupported: async ({ family }: { family?: string }) =>
          supportedMessage({
            kinds: (networks[family ?? ""] ?? []).map((network) => ({ x402Version: 2, scheme: "exact", network })),
            extensions: [],
            signers: {},
          }),
      },
    });
  }

  it("maps the Solana network this run settles on to the platform's standing Solana wallet, beside the EVM networks' platform_fee_to", async () => {
    const { fakes: f } = fakes({
      solana: true,
      wallets: [standing("eip155", FEE_WALLET), standing("solana", "Old1111111111111111111111111111111", false), standing("solana", PLATFORM_SOLANA)],
    });
    const { url } = await serve.app(f);
    const body = await bodyOf(await fetch(`${url}/v1/account/platform`, { headers: auth }));
    expect(body).toEqual({
      platform_account: true,
      platform_fee_bps: 300,
      platform_fee_to: FEE_WALLET,
      fee_wallets: { [BASE_SEPOLIA]: FEE_WALLET, [DEVNET]: PLATFORM_SOLANA },
      max_bps: 2000,
    });
  });

  it("the PUT answers the same fee wallets", async () => {
    const { fakes: f } = fakes({ solana: true, wallets: [standing("solana", PLATFORM_SOLANA)] });
    const { url } = await serve.app(f);
    const res = await fetch(`${url}/v1/account/platform`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ platform_account: true, platform_fee_bps: 300, platform_fee_to: FEE_WALLET }),
    });
    expect(res.status).toBe(200);
    expect((await bodyOf(res)).fee_wallets).toEqual({ [BASE_SEPOLIA]: FEE_WALLET, [DEVNET]: PLATFORM_SOLANA });
  });

  it("lists no Solana network for a platform without a Solana wallet", async () => {
    const { fakes: f } = fakes({ solana: true, wallets: [standing("eip155", FEE_WALLET)] });
    const { url } = await serve.app(f);
    expect((await bodyOf(await fetch(`${url}/v1/account/platform`, { headers: auth }))).fee_wallets).toEqual({ [BASE_SEPOLIA]: FEE_WALLET });
  });

  it("asks identity for no wallet when the run does not settle on Solana, or when no cut can be taken (no platform_fee_to)", async () => {
    const offSolana = fakes({ solana: false, wallets: [standing("solana", PLATFORM_SOLANA)] });
    const served = await serve.app(offSolana.fakes);
    expect((await bodyOf(await fetch(`${served.url}/v1/account/platform`, { headers: auth }))).fee_wallets).toEqual({ [BASE_SEPOLIA]: FEE_WALLET });
    expect(offSolana.called()).not.toContain("identity.getPayoutWallets");

    const noFeeWallet = fakes({
      solana: true,
      settings: create(identityV1.PlatformSettingsSchema, { platformAccount: true }),
      wallets: [standing("solana", PLATFORM_SOLANA)],
    });
    const other = await serve.app(noFeeWallet.fakes);
    expect((await bodyOf(await fetch(`${other.url}/v1/account/platform`, { headers: auth }))).fee_wallets).toEqual({});
    expect(noFeeWallet.called()).not.toContain("identity.getPayoutWallets");
  });
});
