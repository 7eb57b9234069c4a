import { generateKeyPairSigner } from "@solana/kit";
import { call, newCheckout, newSeller } from "../src/http";
import { associatedUsdcAccount, createUsdcAccounts, DEVNET_USDC, SOLANA_DEVNET, SOLANA_ENABLED } from "../src/solana";

/**
 * A buyer's Solana payment is one transfer to the associated USDC account of
 * the seller's wallet, which the service never creates (ADR 15). So a
 * checkout does not take a Solana payout wallet without one: create (with
 * the account's standing wallet) and POST /v1/checkouts/{id}/payouts refuse
 * it with 422 payout-account-missing, and nothing is created. With
 * SOLANA_ENABLED=false (embedded only) nothing is checked.
 */
describe("a Solana payout wallet needs its USDC account before a checkout takes it", () => {
  const onSolana = SOLANA_ENABLED ? it : it.skip;
  const withoutSolana = SOLANA_ENABLED ? it.skip : it;

  /** A seller whose standing Solana wallet is a fresh key: no USDC account yet. */
  async function sellerWithSolanaWallet() {
    const seller = await newSeller();
    const wallet = (await generateKeyPairSigner()).address as string;
    const put = await call("PUT", "/v1/account/wallets", { key: seller.key, body: { solana: wallet } });
    // Registering the wallet is never refused: the account may be created later, and only a checkout needs it.
    expect(put.status).toBe(200);
    return { seller, wallet };
  }

  const checkoutIds = async (key: string) => {
    const list = await call("GET", "/v1/checkouts?include_voided=true", { key });
    expect(list.status).toBe(200);
    return (list.body.checkouts as { id: string }[]).map((c) => c.id);
  };

  onSolana(
    "create refuses the standing wallet without its USDC account (422 naming it, nothing created); once it exists the same request creates",
    async () => {
      const { seller, wallet } = await sellerWithSolanaWallet();
      const account = await associatedUsdcAccount(wallet);
      const body = { title: "Paid in USDC on Solana", price_usd: "0.25", payload: "goods", test_mode: false };
      const headers = { "idempotency-key": `solana-ata-${wallet}` };

      for (const attempt of [body, { ...body, test_mode: true }]) {
        const refused = await call("POST", "/v1/checkouts", { key: seller.key, body: attempt, headers });
        expect(refused.status).toBe(422);
        expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(refused.body).toMatchObject({
          type: expect.stringMatching(/\/problems\/payout-account-missing$/),
          title: "Payout account missing",
          status: 422,
          chain: "solana",
          address: wallet,
          network: SOLANA_DEVNET,
          asset: DEVNET_USDC,
          token_account: account,
          help: { retry_is_safe: false },
        });
        expect(refused.body.help.fix).toContain(account);
        expect(refused.body.help.fix).toContain(`spl-token create-account ${DEVNET_USDC} --owner ${wallet}`);
      }
      expect(await checkoutIds(seller.key)).toEqual([]);

      // The refusal released the Idempotency-Key: the same request, once the account exists, creates the checkout.
      await createUsdcAccounts(wallet);
      const created = await call("POST", "/v1/checkouts", { key: seller.key, body, headers });
      expect(created.status).toBe(201);
      expect(created.body.payouts).toEqual([
        { chain: "base", address: seller.wallet.address, offered: true },
        { chain: "solana", address: wallet, offered: true },
      ]);
      expect(await checkoutIds(seller.key)).toEqual([created.body.id]);
    },
  );

  onSolana("a pay_to sent takes no Solana rail: nothing to check, the create succeeds", async () => {
    const { seller } = await sellerWithSolanaWallet();
    const named = await newCheckout(seller.key, { pay_to: seller.wallet.address });
    expect(named.payouts).toEqual([{ chain: "base", address: seller.wallet.address, offered: true }]);
  });

  onSolana("POST /payouts refuses a Solana wallet without its USDC account (the checkout keeps its rails), adds it once the account exists", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { title: "Base first" });
    const wallet = (await generateKeyPairSigner()).address as string;
    const refused = await call("POST", `/v1/checkouts/${checkout.id}/payouts`, { key: seller.key, body: { chain: "solana", address: wallet } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      type: expect.stringMatching(/\/problems\/payout-account-missing$/),
      token_account: await associatedUsdcAccount(wallet),
    });
    expect((await call("GET", `/v1/checkouts/${checkout.id}`, { key: seller.key })).body.payouts).toHaveLength(1);

    await createUsdcAccounts(wallet);
    const added = await call("POST", `/v1/checkouts/${checkout.id}/payouts`, { key: seller.key, body: { chain: "solana", address: wallet } });
    expect(added.status).toBe(200);
    expect(added.body.payouts.map((p: { chain: string }) => p.chain)).toEqual(["base", "solana"]);
  });

  withoutSolana("without Solana (SOLANA_ENABLED=false) nothing is checked: the rail is copied, as stored and shown", async () => {
    const { seller, wallet } = await sellerWithSolanaWallet();
    const created = await newCheckout(seller.key, { title: "No Solana here" });
    expect(created.payouts).toEqual([
      { chain: "base", address: seller.wallet.address, offered: true },
      { chain: "solana", address: wallet, offered: true },
    ]);
  });
});
