import { generateKeyPairSigner } from "@solana/kit";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call, newSeller } from "../src/http";
import { associatedUsdcAccount, createUsdcAccounts, DEVNET_USDC, SOLANA_DEVNET, SOLANA_ENABLED } from "../src/solana";

/**
 * A platform's Solana fee wallet (docs/decisions.md, Platform fee wallet): a
 * checkout created with a platform cut freezes the platform account's
 * standing Solana payout wallet beside `platform_fee_to`, read back as
 * `platform_fee_wallets`; GET /v1/account/platform names it on the Solana
 * network this run settles on. A wallet without its USDC account is refused
 * at create like a payout wallet, naming it as the platform's fee wallet.
 */
describe("a platform's Solana fee wallet", () => {
  const onSolana = SOLANA_ENABLED ? it : it.skip;
  const freshEvm = () => privateKeyToAccount(generatePrivateKey()).address;
  const freshSolana = async () => (await generateKeyPairSigner()).address as string;

  /** A seller in platform mode taking 300 bps, with `solana` as its standing Solana wallet when given. */
  async function platform(solana?: string) {
    const seller = await newSeller();
    const feeWallet = getAddress(freshEvm());
    const put = await call("PUT", "/v1/account/platform", {
      key: seller.key,
      body: { platform_account: true, platform_fee_bps: 300, platform_fee_to: feeWallet },
    });
    expect(put.status).toBe(200);
    if (solana !== undefined) expect((await call("PUT", "/v1/account/wallets", { key: seller.key, body: { solana } })).status).toBe(200);
    return { seller, feeWallet };
  }

  const checkoutIds = async (key: string) =>
    ((await call("GET", "/v1/checkouts?include_voided=true", { key })).body.checkouts as { id: string }[]).map((c) => c.id);

  onSolana("freezes the platform's standing Solana wallet on a checkout with a cut; a later wallet change leaves the checkout alone", async () => {
    const solana = await freshSolana();
    await createUsdcAccounts(solana);
    const { seller, feeWallet } = await platform(solana);

    const got = await call("GET", "/v1/account/platform", { key: seller.key });
    expect(got.status).toBe(200);
    expect(got.body.fee_wallets).toEqual({ "eip155:84532": feeWallet, [SOLANA_DEVNET]: solana });

    const created = await call("POST", "/v1/checkouts", { key: seller.key, body: { title: "Sold by a platform", price_usd: "0.50", pay_to: freshEvm() } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ platform_fee_bps: 300, platform_fee_to: feeWallet, platform_fee_wallets: { base: feeWallet, solana } });

    // A new standing wallet is the fee wallet of checkouts created from now on, never of this one.
    const later = await freshSolana();
    await createUsdcAccounts(later);
    expect((await call("PUT", "/v1/account/wallets", { key: seller.key, body: { solana: later } })).status).toBe(200);
    const read = await call("GET", `/v1/checkouts/${created.body.id}`, { key: seller.key });
    expect(read.body.platform_fee_wallets).toEqual({ base: feeWallet, solana });
    expect((await call("GET", "/v1/account/platform", { key: seller.key })).body.fee_wallets[SOLANA_DEVNET]).toBe(later);

    // No cut, no fee wallets.
    const uncut = await call("POST", "/v1/checkouts", {
      key: seller.key,
      body: { title: "No cut", price_usd: "0.50", pay_to: freshEvm(), platform_fee_bps: 0 },
    });
    expect(uncut.status).toBe(201);
    expect(uncut.body).toMatchObject({ platform_fee_bps: 0, platform_fee_to: null, platform_fee_wallets: {} });
  });

  onSolana("refuses a create with a cut while the platform's Solana wallet has no USDC account: 422 payout-account-missing, nothing created", async () => {
    const solana = await freshSolana();
    const { seller } = await platform(solana);
    const body = { title: "Sold by a platform", price_usd: "0.50", pay_to: freshEvm() };
    const refused = await call("POST", "/v1/checkouts", { key: seller.key, body });
    expect(refused.status).toBe(422);
    const account = await associatedUsdcAccount(solana);
    expect(refused.body).toMatchObject({
      type: expect.stringMatching(/\/problems\/payout-account-missing$/),
      status: 422,
      chain: "solana",
      address: solana,
      network: SOLANA_DEVNET,
      asset: DEVNET_USDC,
      token_account: account,
      help: { retry_is_safe: false },
    });
    expect(refused.body.detail.message).toContain(`platform fee wallet ${solana}`);
    expect(await checkoutIds(seller.key)).toEqual([]);

    // Without a cut the platform's wallets are not taken: the same create succeeds.
    expect((await call("POST", "/v1/checkouts", { key: seller.key, body: { ...body, platform_fee_bps: 0 } })).status).toBe(201);
    // Once the account exists, the cut is taken.
    await createUsdcAccounts(solana);
    const created = await call("POST", "/v1/checkouts", { key: seller.key, body });
    expect(created.status).toBe(201);
    expect(created.body.platform_fee_wallets.solana).toBe(solana);
  });

  it("a platform without a Solana wallet: its checkouts carry the base fee wallet only, and fee_wallets no Solana network", async () => {
    const { seller, feeWallet } = await platform();
    const created = await call("POST", "/v1/checkouts", { key: seller.key, body: { title: "Base only", price_usd: "0.50", pay_to: freshEvm() } });
    expect(created.status).toBe(201);
    expect(created.body.platform_fee_wallets).toEqual({ base: feeWallet });
    expect((await call("GET", `/v1/checkouts/${created.body.id}`, { key: seller.key })).body.platform_fee_wallets).toEqual({ base: feeWallet });
    expect((await call("GET", "/v1/account/platform", { key: seller.key })).body.fee_wallets).toEqual({ "eip155:84532": feeWallet });
  });
});
