import { eventually } from "@c402/testkit";
import { getAddress } from "viem";
import { call, decoded, newCheckout, newSeller, payRehearsal } from "../src/http";
import { createUsdcAccounts, SOLANA_DEVNET, SOLANA_ENABLED } from "../src/solana";
import { STELLAR_ENABLED, stellarStandin } from "../src/stellar";

/**
 * Payout wallets and payout rails over the running services: PUT, preview
 * and GET /v1/account/wallets (identity), the copy a checkout takes at create
 * and POST /v1/checkouts/{id}/payouts (catalog), what the faces quote, and the
 * account events both leave.
 */

const OTHER_EVM = "0xAb8483F64d9C6d1EcF9b849Ae677dD3315835cb2";
const SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOLANA_2 = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const STELLAR = "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H";
/** One letter's case flipped: a wrong EIP-55 checksum. */
const BAD_EVM = OTHER_EVM.replace("Ab84", "aB84");
/** One character mistyped: a wrong strkey checksum. */
const BAD_STELLAR = `${STELLAR.slice(0, 20)}${STELLAR[20] === "A" ? "B" : "A"}${STELLAR.slice(21)}`;
/** Base58 of 31 bytes: not a Solana public key. */
const SHORT_SOLANA = "2".repeat(42);

async function mintKey(key: string, scope: "read_only" | "payments" | "full"): Promise<string> {
  const r = await call("POST", "/v1/keys", { key, body: { scope, mode: "test", name: `payouts ${scope}` } });
  if (r.status !== 201) throw new Error(`mint ${scope}: ${r.status} ${r.text}`);
  return r.body.secret as string;
}

async function eventsOf(key: string, prefix: string) {
  const r = await call("GET", `/v1/account/events?action=${prefix}`, { key });
  if (r.status !== 200) throw new Error(`events: ${r.status} ${r.text}`);
  return r.body.events as { action: string; object_id: string; actor: string; detail: Record<string, unknown> }[];
}

const standing = (address: string, offered: boolean, verified = false) => ({ address, verified, offered });

// A checkout takes a Solana wallet only once its USDC account exists, a Stellar one only with its USDC trustline
// (test-e2e/test/solana-payout-accounts.test.ts, stellar-payments.test.ts).
beforeAll(async () => {
  await createUsdcAccounts(SOLANA, SOLANA_2);
  if (STELLAR_ENABLED) await (await stellarStandin()).fundWithUsdc(STELLAR, 0n);
});

describe("payout wallets (/v1/account/wallets)", () => {
  it("GET shows the sign-in wallet; a PUT sets Solana and Stellar beside it; GET reads it back; one wallets.updated event", async () => {
    const seller = await newSeller();
    const signer = seller.wallet.address;
    const fresh = await call("GET", "/v1/account/wallets", { key: seller.key });
    expect(fresh.status).toBe(200);
    expect(fresh.body).toMatchObject({
      object: "payout_wallets",
      wallets: { base: standing(signer, true, true), solana: null, stellar: null },
      verified_wallets: [{ chain: "base", address: signer }],
    });

    const put = await call("PUT", "/v1/account/wallets", { key: seller.key, body: { solana: SOLANA, stellar: STELLAR } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      object: "payout_wallets",
      wallets: { base: standing(signer, true, true), solana: standing(SOLANA, true), stellar: standing(STELLAR, true) },
      verified_wallets: [{ chain: "base", address: signer }],
      changed: true,
      changes: { base: "unchanged", solana: "added", stellar: "added" },
    });
    const read = await call("GET", "/v1/account/wallets", { key: seller.key });
    expect(read.body.wallets).toEqual(put.body.wallets);

    // The same set again changes nothing and records nothing.
    const again = await call("PUT", "/v1/account/wallets", { key: seller.key, body: { base: signer.toLowerCase(), solana: SOLANA, stellar: STELLAR } });
    expect(again.body).toMatchObject({ changed: false, changes: { base: "unchanged", solana: "unchanged", stellar: "unchanged" } });
    const events = await eventsOf(seller.key, "wallets.");
    expect(events).toEqual([
      expect.objectContaining({
        action: "wallets.updated",
        object_id: seller.accountId,
        actor: `key:${seller.key.slice(0, 12)}`,
        detail: { wallets: { base: signer, solana: SOLANA, stellar: STELLAR }, changes: { solana: "added", stellar: "added" } },
      }),
    ]);
  });

  it("a new EVM wallet stands checksummed; the sign-in wallet stays verified, still signs in, and stands again when a PUT names none", async () => {
    const seller = await newSeller();
    const signer = seller.wallet.address;
    const put = await call("PUT", "/v1/account/wallets", { key: seller.key, body: { base: OTHER_EVM.toLowerCase() } });
    expect(put.body).toMatchObject({ wallets: { base: standing(OTHER_EVM, true) }, verified_wallets: [{ chain: "base", address: signer }] });
    // Signing in with the original wallet still reaches this account.
    const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: signer, network: "eip155:8453" } });
    const signature = await seller.wallet.signMessage({ message: challenge.body.message });
    const signedIn = await call("POST", "/auth/wallet/verify", { body: { message: challenge.body.message, signature } });
    expect(signedIn.body.account.id).toBe(seller.accountId);
    // A PUT is the whole set: without base, the sign-in wallet stands for base again.
    const back = await call("PUT", "/v1/account/wallets", { key: seller.key, body: {} });
    expect(back.body).toMatchObject({ wallets: { base: standing(signer, true, true), solana: null, stellar: null }, changes: { base: "replaced" } });
  });

  it("preview answers what the PUT would store, normalised, and writes nothing; a read_only key may preview", async () => {
    const seller = await newSeller();
    const readOnly = await mintKey(seller.key, "read_only");
    const body = { base: OTHER_EVM.toLowerCase(), solana: SOLANA };
    const preview = await call("POST", "/v1/account/wallets/preview", { key: readOnly, body });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({
      object: "payout_wallets_preview",
      wallets: { base: standing(OTHER_EVM, true), solana: standing(SOLANA, true), stellar: null },
      changed: true,
      changes: { base: "replaced", solana: "added", stellar: "none" },
    });
    expect((await call("GET", "/v1/account/wallets", { key: readOnly })).body.wallets).toMatchObject({
      base: { address: seller.wallet.address },
      solana: null,
    });
    expect(await eventsOf(seller.key, "wallets.")).toEqual([]);
    const put = await call("PUT", "/v1/account/wallets", { key: seller.key, body });
    const { object: _p, ...previewed } = preview.body;
    const { object: _s, ...stored } = put.body;
    expect(stored).toEqual(previewed);
  });

  it("PUT needs scope full: read_only and payments keys get 403 naming it, and nothing changes", async () => {
    const seller = await newSeller();
    for (const scope of ["read_only", "payments"] as const) {
      const r = await call("PUT", "/v1/account/wallets", { key: await mintKey(seller.key, scope), body: { solana: SOLANA } });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ needed_scope: "full" });
    }
    expect((await call("GET", "/v1/account/wallets", { key: seller.key })).body.wallets.solana).toBeNull();
    expect((await call("PUT", "/v1/account/wallets", { body: { solana: SOLANA } })).status).toBe(401);
  });

  it.each(["PUT /v1/account/wallets", "POST /v1/account/wallets/preview"])("%s refuses bad addresses with 422 naming each chain", async (route) => {
    const seller = await newSeller();
    const [method, path] = route.split(" ") as [string, string];
    const r = await call(method, path, { key: seller.key, body: { base: BAD_EVM, solana: SHORT_SOLANA, stellar: BAD_STELLAR } });
    expect(r.status).toBe(422);
    expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(r.body.errors).toEqual([
      { field: "base", reason: expect.stringContaining("EIP-55 checksum") },
      { field: "solana", reason: expect.stringContaining("32-byte") },
      { field: "stellar", reason: expect.stringContaining("checksum") },
    ]);
    const shape = await call(method, path, { key: seller.key, body: { tron: "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb", solana: 1 } });
    expect(shape.status).toBe(422);
    expect(shape.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["solana", "tron"]);
    expect((await call("GET", "/v1/account/wallets", { key: seller.key })).body.wallets).toMatchObject({ solana: null, stellar: null });
  });
});

describe("payout rails of checkouts", () => {
  it("create copies the standing wallets when pay_to is omitted; later wallet changes leave the checkout alone; a pay_to sent is the only rail", async () => {
    const seller = await newSeller();
    const signer = seller.wallet.address;
    expect((await call("PUT", "/v1/account/wallets", { key: seller.key, body: { solana: SOLANA, stellar: STELLAR } })).status).toBe(200);
    const copied = await newCheckout(seller.key, { title: "Copied rails" });
    const rails = [
      { chain: "base", address: signer, offered: true },
      { chain: "solana", address: SOLANA, offered: true },
      { chain: "stellar", address: STELLAR, offered: true },
    ];
    expect(copied).toMatchObject({ pay_to: signer, payouts: rails });

    expect((await call("PUT", "/v1/account/wallets", { key: seller.key, body: { base: OTHER_EVM, solana: SOLANA_2 } })).status).toBe(200);
    expect((await call("GET", `/v1/checkouts/${copied.id}`, { key: seller.key })).body).toMatchObject({ pay_to: signer, payouts: rails });
    const later = await newCheckout(seller.key, { title: "Later rails" });
    expect(later.payouts).toEqual([
      { chain: "base", address: OTHER_EVM, offered: true },
      { chain: "solana", address: SOLANA_2, offered: true },
    ]);

    const named = await newCheckout(seller.key, { title: "Named pay_to", pay_to: getAddress(OTHER_EVM).toLowerCase() });
    expect(named.payouts).toEqual([{ chain: "base", address: OTHER_EVM, offered: true }]);
  });

  it("POST /payouts adds a rail (additive only: 409 for a chain that has one); reads and lists show it; the faces quote it (EVM paid to the EVM rail, Solana to the Solana one); the event arrives", async () => {
    const seller = await newSeller();
    const signer = seller.wallet.address;
    const payments = await mintKey(seller.key, "payments");
    const checkout = await newCheckout(seller.key, { title: "Rails", reusable: true });
    expect(checkout.payouts).toEqual([{ chain: "base", address: signer, offered: true }]);

    const added = await call("POST", `/v1/checkouts/${checkout.id}/payouts`, { key: payments, body: { chain: "solana", address: SOLANA } });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ id: checkout.id, pay_to: signer });
    expect(added.body.payouts).toEqual([
      { chain: "base", address: signer, offered: true },
      { chain: "solana", address: SOLANA, offered: true },
    ]);
    for (const body of [
      { chain: "solana", address: SOLANA_2 },
      { chain: "solana", address: SOLANA },
      { chain: "base", address: OTHER_EVM },
    ]) {
      const refused = await call("POST", `/v1/checkouts/${checkout.id}/payouts`, { key: payments, body });
      expect(refused.status).toBe(409);
      expect(refused.body.type).toMatch(/\/problems\/conflict$/);
    }
    const bad = await call("POST", `/v1/checkouts/${checkout.id}/payouts`, { key: payments, body: { chain: "stellar", address: BAD_STELLAR } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ field: "address", reason: expect.stringContaining("checksum") }]);
    expect(
      (
        await call("POST", `/v1/checkouts/${checkout.id}/payouts`, {
          key: await mintKey(seller.key, "read_only"),
          body: { chain: "stellar", address: STELLAR },
        })
      ).status,
    ).toBe(403);

    expect((await call("GET", `/v1/checkouts/${checkout.id}`, { key: seller.key })).body.payouts).toEqual(added.body.payouts);
    const list = await call("GET", "/v1/checkouts", { key: seller.key });
    expect(list.body.checkouts.find((c: { id: string }) => c.id === checkout.id).payouts).toEqual(added.body.payouts);

    // Both faces (this checkout rehearses on both) quote what this run settles: EVM paid to the EVM rail, and the
    // added Solana rail where Solana is on (ADR 5, ADR 15); never the Solana address on an EVM requirement.
    for (const face of ["", "/test"]) {
      const unpaid = await call("GET", `/c/${checkout.id}${face}`);
      expect(unpaid.status).toBe(402);
      const accepts = decoded(unpaid.headers.get("payment-required")).accepts as { network: string; payTo: string }[];
      expect(accepts.map((a) => [a.network, a.payTo])).toEqual([["eip155:84532", signer], ...(SOLANA_ENABLED ? [[SOLANA_DEVNET, SOLANA]] : [])]);
    }
    expect((await payRehearsal(checkout.id)).body.receipt.pay_to).toBe(signer);

    const events = await eventually(
      () => eventsOf(seller.key, "checkout.payouts_added"),
      (rows) => rows.length > 0,
    );
    expect(events).toEqual([
      expect.objectContaining({
        action: "checkout.payouts_added",
        object_id: checkout.id,
        actor: `key:${payments.slice(0, 12)}`,
        detail: { chain: "solana", address: SOLANA },
      }),
    ]);
  });

  it("another account's checkout is 404 and unchanged; a void checkout is 409 until restored", async () => {
    const owner = await newSeller();
    const other = await newSeller();
    const checkout = await newCheckout(owner.key, { title: "Mine" });
    const foreign = await call("POST", `/v1/checkouts/${checkout.id}/payouts`, { key: other.key, body: { chain: "solana", address: SOLANA } });
    expect(foreign.status).toBe(404);
    expect((await call("GET", `/v1/checkouts/${checkout.id}`, { key: owner.key })).body.payouts).toHaveLength(1);

    expect((await call("DELETE", `/v1/checkouts/${checkout.id}`, { key: owner.key })).status).toBe(200);
    expect((await call("POST", `/v1/checkouts/${checkout.id}/payouts`, { key: owner.key, body: { chain: "solana", address: SOLANA } })).status).toBe(409);
    expect((await call("POST", `/v1/checkouts/${checkout.id}/restore`, { key: owner.key })).status).toBe(200);
    expect((await call("POST", `/v1/checkouts/${checkout.id}/payouts`, { key: owner.key, body: { chain: "solana", address: SOLANA } })).status).toBe(200);
  });
});
