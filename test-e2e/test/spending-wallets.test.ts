import { generateKeyPairSigner } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { devchainWallets } from "../src/devchain";
import { call, newSeller, payRehearsal } from "../src/http";
import { DEVNET_USDC, SOLANA_DEVNET, SOLANA_ENABLED, solanaDevnet } from "../src/solana";

/**
 * Spending wallets (ADR 21) through the whole service: a session creates a
 * wallet (its secret shown once), the limits, the agent key, the refusals the
 * service records (test key, over the limit, short wallet), reveal and
 * archive, the rehearsal checkout and the health check; an agent holding
 * only a live key pays another seller's live checkout on the devchain from a
 * wallet its owner funded (funder index 3).
 */

const sessionOf = (seller: Awaited<ReturnType<typeof newSeller>>) => seller.verified.body.session.token as string;

describe("spending wallets", () => {
  let seller: Awaited<ReturnType<typeof newSeller>>;
  let session: string;
  let created: any;

  beforeAll(async () => {
    seller = await newSeller();
    session = sessionOf(seller);
    const r = await call("POST", "/v1/spending-wallets/base", { key: session });
    expect(r.status).toBe(201);
    created = r.body;
  });

  it("health answers ok", async () => {
    const r = await call("GET", "/v1/spending-wallets/health");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, problems: [] });
  });

  it("a session creates a base wallet: the secret shown once (no-store), its key the wallet's address; a second create is 409", async () => {
    expect(created.wallet).toMatchObject({ chain: "base", status: "active" });
    expect(privateKeyToAccount(created.secret.private_key).address).toBe(created.wallet.address);
    expect(created.secret.phrase.split(" ")).toHaveLength(12);
    expect((await call("POST", "/v1/spending-wallets/base", { key: session })).status).toBe(409);
  });

  it("the list shows the address only, for a key too", async () => {
    const r = await call("GET", "/v1/spending-wallets", { key: seller.key });
    expect(r.status).toBe(200);
    expect(r.body.wallets.map((w: { address: string }) => w.address)).toEqual([created.wallet.address]);
    expect(r.text).not.toContain(created.secret.private_key);
    expect(r.text).not.toContain(created.secret.phrase);
  });

  it("limits default to 1.00 and 10.00 with spent and left; a session changes them, a key cannot (403)", async () => {
    const limits = await call("GET", "/v1/spending-wallets/base/limits", { key: seller.key });
    expect(limits.body).toMatchObject({ spent_today_usd: expect.any(String), left_today_usd: expect.any(String) });
    expect(Number(limits.body.per_payment_usd)).toBe(1);
    expect(Number(limits.body.per_day_usd)).toBe(10);
    const body = { per_payment_usd: "0.50", per_day_usd: "5" };
    expect((await call("PUT", "/v1/spending-wallets/base/limits", { key: seller.key, body })).status).toBe(403);
    const set = await call("PUT", "/v1/spending-wallets/base/limits", { key: session, body });
    expect(set.status).toBe(200);
    expect(Number(set.body.per_payment_usd)).toBe(0.5);
    await call("PUT", "/v1/spending-wallets/base/limits", { key: session, body: { per_payment_usd: "1.00", per_day_usd: "10.00" } });
  });

  it("a test key cannot pay (403, reason test_key) and the refusal is a refused event", async () => {
    const r = await call("POST", "/v1/spending-wallets/base/pay", { key: seller.key, body: { url: "http://127.0.0.1:9/nothing" } });
    expect(r.status).toBe(403);
    const events = await call("GET", "/v1/spending-wallets/base/events", { key: session });
    expect(events.body.events).toEqual(expect.arrayContaining([expect.objectContaining({ kind: "refused", reason: "test_key" })]));
  });

  it("an agent key (live, payments) pays; a short wallet answers 402 and no transaction; above the limit is 403 refused", async () => {
    const minted = await call("POST", "/v1/spending-wallets/keys", { key: session, body: { name: "agent" } });
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ scope: "payments", mode: "live" });
    expect((await call("POST", "/v1/spending-wallets/keys", { key: seller.key })).status).toBe(403);
    const agent = minted.body.secret as string;

    const other = await newSeller();
    const cheap = await call("POST", "/v1/checkouts", { key: other.key, body: { title: "Cheap", price_usd: "0.10", payload: { ok: true }, reusable: true } });
    const dear = await call("POST", "/v1/checkouts", { key: other.key, body: { title: "Dear", price_usd: "2.00", payload: { ok: true }, reusable: true } });
    for (const c of [cheap, dear]) await call("POST", `/v1/checkouts/${c.body.id}/go-live`, { key: other.key });

    const short = await call("POST", "/v1/spending-wallets/base/pay", { key: agent, body: { url: cheap.body.url } });
    expect(short.status).toBe(402);
    expect(short.text).toMatch(/insufficient/i);
    const over = await call("POST", "/v1/spending-wallets/base/pay", { key: agent, body: { url: dear.body.url } });
    expect(over.status).toBe(403);
    const lowered = await call("POST", "/v1/spending-wallets/base/pay", { key: agent, body: { url: cheap.body.url, max_usd: "0.01" } });
    expect(lowered.status).toBe(403);
    const events = await call("GET", "/v1/spending-wallets/base/events", { key: session });
    expect(events.body.events.filter((e: { kind: string }) => e.kind === "refused").length).toBeGreaterThanOrEqual(3);
    expect(events.body.events.filter((e: { kind: string }) => e.kind === "spent")).toEqual([]);

    // The owner funds the wallet on the devchain; the agent pays: the goods, the seller's receipt, exact balances.
    const chain = await devchainWallets(3);
    const wallet = created.wallet.address as `0x${string}`;
    await chain.fund(wallet, 1_000_000n);
    const sellerBefore = await chain.balance(other.wallet.address);
    const paid = await call("POST", "/v1/spending-wallets/base/pay", {
      key: agent,
      body: { url: cheap.body.url },
      headers: { "idempotency-key": "agent-run-1" },
    });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ paid: true, url: cheap.body.url, goods: { fulfillment: { payload: { ok: true } } } });
    expect(paid.body.receipt).toMatchObject({ network: "eip155:84532", payer: wallet, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const amount = BigInt(paid.body.receipt.amount);
    expect(await chain.balance(wallet)).toBe(1_000_000n - amount);
    const receipt = await call("GET", new URL(paid.body.receipt.receipt_url).pathname, { headers: { accept: "application/json" } });
    expect(receipt.status).toBe(200);
    expect(await chain.balance(other.wallet.address)).toBe(sellerBefore + BigInt(receipt.body.provider_amount));
    expect(Number(paid.body.limits.spent_today_usd)).toBeCloseTo(Number(paid.body.receipt.amount_usd), 6);
    // The same idempotency key answers the first payment again: nothing moves twice.
    const again = await call("POST", "/v1/spending-wallets/base/pay", {
      key: agent,
      body: { url: cheap.body.url },
      headers: { "idempotency-key": "agent-run-1" },
    });
    expect(again.status).toBe(200);
    expect(again.body.receipt.transaction).toBe(paid.body.receipt.transaction);
    expect(await chain.balance(wallet)).toBe(1_000_000n - amount);
    const spent = (await call("GET", "/v1/spending-wallets/base/events", { key: session })).body.events.filter((e: { kind: string }) => e.kind === "spent");
    expect(spent).toEqual([expect.objectContaining({ transaction: paid.body.receipt.transaction, actor: expect.stringMatching(/^key:sk_live_/) })]);
  });

  it("reveal: a session gets the key (revealed_at set); a key is 403 even with a valid session cookie", async () => {
    const refused = await call("POST", "/v1/spending-wallets/base/reveal", { key: seller.key, headers: { cookie: `c402_session=${session}` } });
    expect(refused.status).toBe(403);
    expect(refused.text).not.toContain(created.secret.private_key);
    const revealed = await call("POST", "/v1/spending-wallets/base/reveal", { key: session });
    expect(revealed.status).toBe(200);
    expect(revealed.headers.get("cache-control")).toBe("no-store");
    expect(privateKeyToAccount(revealed.body.secret.private_key).address).toBe(created.wallet.address);
    const listed = await call("GET", "/v1/spending-wallets", { key: session });
    expect(listed.body.wallets[0].revealed_at).toEqual(expect.any(String));
  });

  it("GET /v1/rehearsal-checkout answers {url, ask}, and any x402 client pays that face free", async () => {
    const r = await call("GET", "/v1/rehearsal-checkout", { key: seller.key });
    expect(r.status).toBe(200);
    expect(r.body.url).toMatch(/\/c\/chk_[0-9A-Za-z]+\/test$/);
    expect(r.body.ask).toContain(r.body.url);
    const again = await call("GET", "/v1/rehearsal-checkout", { key: session });
    expect(again.body.url).toBe(r.body.url);
    const id = /\/c\/(chk_[0-9A-Za-z]+)\/test$/.exec(r.body.url)![1]!;
    expect((await payRehearsal(id)).status).toBe(200);
  });

  it("there is no transfer-out: …/withdraw and …/transfer are 404", async () => {
    for (const path of ["/v1/spending-wallets/base/withdraw", "/v1/spending-wallets/base/transfer"]) {
      expect((await call("POST", path, { key: session, body: { to: created.wallet.address } })).status).toBe(404);
    }
  });

  it("archive: the wallet leaves the list", async () => {
    const archived = await call("DELETE", "/v1/spending-wallets/base", { key: session });
    expect(archived.status).toBe(200);
    expect(archived.body.wallet.status).toBe("archived");
    const listed = await call("GET", "/v1/spending-wallets", { key: session });
    expect(listed.body.wallets).toEqual([]);
    // Funds untouched: what the wallet held is still on chain at its address.
    const chain = await devchainWallets(3);
    expect(await chain.balance(created.wallet.address)).toBeGreaterThan(0n);
  });
});

(SOLANA_ENABLED ? describe : describe.skip)("a spending wallet on Solana (the devnet)", () => {
  it("an agent key pays another seller's live Solana checkout from the wallet its owner funded: goods, receipt, exact balances", async () => {
    const devnet = await solanaDevnet();
    const owner = await newSeller();
    const session = sessionOf(owner);
    const created = await call("POST", "/v1/spending-wallets/solana", { key: session });
    expect(created.status).toBe(201);
    expect(created.body.wallet).toMatchObject({ chain: "solana", network: SOLANA_DEVNET });
    expect(created.body.secret.derivation_path).toBe("m/44'/501'/0'/0'");
    const wallet = created.body.wallet.address as string;
    await devnet.setUsdc(wallet, 1_000_000n);
    const balance = await call("GET", "/v1/spending-wallets/solana/balance", { key: owner.key });
    expect(balance.body).toMatchObject({ usdc: "1000000", asset: DEVNET_USDC, nagging: false });
    const funding = await call("GET", "/v1/spending-wallets/solana/funding?amount=5", { key: session });
    expect(funding.body.uri).toMatch(new RegExp(`^solana:${wallet}\\?amount=5&spl-token=${DEVNET_USDC}`));

    const seller = await newSeller();
    const payout = (await generateKeyPairSigner()).address as string;
    await devnet.setUsdc(payout, 0n);
    expect((await call("PUT", "/v1/account/wallets", { key: seller.key, body: { solana: payout } })).status).toBe(200);
    const checkout = await call("POST", "/v1/checkouts", {
      key: seller.key,
      body: { title: "Solana weather", price_usd: "0.10", payload: { temp_c: 23 }, test_mode: false, reusable: true },
    });
    expect(checkout.status).toBe(201);
    const agent = (await call("POST", "/v1/spending-wallets/keys", { key: session })).body.secret as string;
    const paid = await call("POST", "/v1/spending-wallets/solana/pay", { key: agent, body: { url: checkout.body.url } });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ paid: true, goods: { fulfillment: { payload: { temp_c: 23 } } } });
    expect(paid.body.receipt).toMatchObject({ network: SOLANA_DEVNET, payer: wallet, pay_to: payout });
    const amount = BigInt(paid.body.receipt.amount);
    expect(await devnet.usdc(wallet)).toBe(1_000_000n - amount);
    expect(await devnet.usdc(payout)).toBe(100_000n);
  });
});
