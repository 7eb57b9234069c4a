import { eventually } from "@c402/testkit";
import { createWalletClient, http } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { devchainWallets } from "../src/devchain";
import { call, callFrom, newSeller, otherLoopbackAddress } from "../src/http";

/**
 * Account escrow settings (spec, Endpoints: Escrow; GET, PUT
 * /v1/account/escrow and GET /v1/account/escrow/readiness), kept by the
 * escrow service and answered through the gateway: the defaults, a PUT that
 * changes the fields it names, the per-family address checks, the payout
 * wallets copied as arbiters (a snapshot), the scopes, the account event,
 * and the MCP tools get_escrow_settings and set_escrow_settings.
 */

const EVM = "0xAb8483F64d9C6d1EcF9b849Ae677dD3315835cb2";
/** One letter's case flipped: a wrong EIP-55 checksum. */
const BAD_EVM = EVM.replace("Ab84", "aB84");
const SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const PRESETS = {
  instant: { settle_window: 3_600, hold_window: 86_400, backstop_window: 604_800 },
  standard: { settle_window: 259_200, hold_window: 604_800, backstop_window: 2_592_000 },
  shipping: { settle_window: 1_209_600, hold_window: 1_209_600, backstop_window: 5_184_000 },
};

async function mintKey(key: string, scope: "read_only" | "payments" | "full"): Promise<string> {
  const r = await call("POST", "/v1/keys", { key, body: { scope, mode: "test", name: `escrow ${scope}` } });
  if (r.status !== 201) throw new Error(`mint ${scope}: ${r.status} ${r.text}`);
  return r.body.secret as string;
}

async function mcp(key: string, name: string, args: Record<string, unknown> = {}) {
  const r = await call("POST", "/mcp", { key, body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } } });
  return r.body as { result?: { structuredContent: any }; error?: { code: number; data: any } };
}

const problemFields = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field);

describe("escrow settings (/v1/account/escrow)", () => {
  it("answers the defaults to an account that never set them: seller_choice, standard, no arbiters, the presets' windows", async () => {
    const seller = await newSeller();
    const r = await call("GET", "/v1/account/escrow", { key: seller.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      object: "escrow_settings",
      escrow_policy: "seller_choice",
      escrow_default_preset: "standard",
      escrow_arbiter_evm: null,
      escrow_arbiter_svm: null,
      updated_at: null,
      presets: PRESETS,
      note: expect.stringMatching(/copy these settings at create/),
    });
    const readiness = await call("GET", "/v1/account/escrow/readiness", { key: seller.key });
    expect(readiness.body).toEqual({
      object: "escrow_readiness",
      readiness: { evm: null, svm: null },
      custody_note: expect.stringMatching(/holds no arbiter key/),
    });
  });

  it("a PUT changes the fields it names and keeps the others, answers the arbiters' readiness when they change, and reads back", async () => {
    const seller = await newSeller();
    const put = await call("PUT", "/v1/account/escrow", {
      key: seller.key,
      body: { escrow_policy: "always", escrow_default_preset: "shipping", escrow_arbiter_evm: EVM.toLowerCase() },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      object: "escrow_settings",
      escrow_policy: "always",
      escrow_default_preset: "shipping",
      escrow_arbiter_evm: EVM,
      escrow_arbiter_svm: null,
      changed: true,
      readiness: {
        evm: {
          arbiter: EVM,
          escrow_offered: true,
          network: expect.stringMatching(/^eip155:/),
          gas_balance: "0",
          rulings_affordable: 0,
          note: expect.any(String),
        },
        svm: null,
      },
      custody_note: expect.any(String),
    });
    expect(Date.parse(put.body.updated_at)).not.toBeNaN();

    // A change that leaves the arbiters alone answers no readiness; the other fields stay.
    const preset = await call("PUT", "/v1/account/escrow", { key: seller.key, body: { escrow_default_preset: "instant" } });
    expect(preset.body).toMatchObject({ escrow_policy: "always", escrow_default_preset: "instant", escrow_arbiter_evm: EVM, changed: true });
    expect(preset.body.readiness).toBeUndefined();
    const same = await call("PUT", "/v1/account/escrow", { key: seller.key, body: { escrow_arbiter_evm: EVM } });
    expect(same.body).toMatchObject({ changed: false });
    expect(same.body.readiness).toBeUndefined();

    const read = await call("GET", "/v1/account/escrow", { key: seller.key });
    expect(read.body).toMatchObject({ escrow_policy: "always", escrow_default_preset: "instant", escrow_arbiter_evm: EVM, escrow_arbiter_svm: null });
    expect(read.body.changed).toBeUndefined();

    // null removes an arbiter; the Solana one is kept (no Solana escrow rail is offered here).
    const svm = await call("PUT", "/v1/account/escrow", { key: seller.key, body: { escrow_arbiter_evm: null, escrow_arbiter_svm: SOLANA } });
    expect(svm.body).toMatchObject({
      escrow_arbiter_evm: null,
      escrow_arbiter_svm: SOLANA,
      readiness: { evm: null, svm: { arbiter: SOLANA, escrow_offered: false, rulings_use_service_gas: true } },
    });
    expect((await call("GET", "/v1/account/escrow/readiness", { key: seller.key })).body.readiness).toEqual(svm.body.readiness);

    // Each change is one account event naming the credential, with the settings before and after.
    const events = await eventually(
      async () => (await call("GET", "/v1/account/events?action=escrow_settings.", { key: seller.key })).body.events as any[],
      (e) => e.length === 3,
    );
    expect(events.map((e) => e.action)).toEqual(["escrow_settings.updated", "escrow_settings.updated", "escrow_settings.updated"]);
    expect(events[2]).toMatchObject({
      object_id: seller.accountId,
      actor: `key:${seller.key.slice(0, 12)}`,
      detail: {
        escrow_policy: "always",
        escrow_default_preset: "shipping",
        escrow_arbiter_evm: EVM,
        escrow_arbiter_svm: null,
        before: { escrow_policy: "seller_choice", escrow_default_preset: "standard", escrow_arbiter_evm: null, escrow_arbiter_svm: null },
      },
    });
  });

  it('{arbiter: "payouts"} copies the standing payout wallets as arbiters, a snapshot later wallet changes do not follow', async () => {
    const seller = await newSeller();
    const signer = seller.wallet.address;
    const copied = await call("PUT", "/v1/account/escrow", { key: seller.key, body: { arbiter: "payouts" } });
    expect(copied.status).toBe(200);
    expect(copied.body).toMatchObject({ escrow_arbiter_evm: signer, escrow_arbiter_svm: null, changed: true, readiness: { evm: { arbiter: signer } } });

    expect((await call("PUT", "/v1/account/wallets", { key: seller.key, body: { base: EVM, solana: SOLANA } })).status).toBe(200);
    // The wallets moved; the arbiters did not.
    expect((await call("GET", "/v1/account/escrow", { key: seller.key })).body).toMatchObject({ escrow_arbiter_evm: signer, escrow_arbiter_svm: null });
    // Copied again, they take the wallets standing now (the sign-in wallet stays verified, but the PUT named another for Base).
    const wallets = (await call("GET", "/v1/account/wallets", { key: seller.key })).body.wallets;
    const again = await call("PUT", "/v1/account/escrow", { key: seller.key, body: { arbiter: "payouts", escrow_policy: "seller_choice" } });
    expect(again.body).toMatchObject({ escrow_arbiter_evm: wallets.base.address, escrow_arbiter_svm: SOLANA, changed: true });
  });

  it("the readiness reads each EVM arbiter's gas balance from the chain: none affords no ruling, a funded one affords some", async () => {
    const seller = await newSeller();
    const arbiter = privateKeyToAccount(generatePrivateKey()).address;
    const put = await call("PUT", "/v1/account/escrow", { key: seller.key, body: { escrow_arbiter_evm: arbiter } });
    expect(put.body.readiness.evm).toMatchObject({ arbiter, gas_balance: "0", rulings_affordable: 0, note: expect.stringMatching(/cannot pay for a ruling/) });

    // One ETH from a demo account of the devchain this suite alone spends from.
    const { rpcUrl, pub } = await devchainWallets(11);
    const funder = createWalletClient({
      account: mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 11 }),
      transport: http(rpcUrl),
    });
    await pub.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: arbiter, value: 10n ** 18n, chain: null }) });
    const r = await call("GET", "/v1/account/escrow/readiness", { key: seller.key });
    expect(r.status).toBe(200);
    expect(r.body.readiness.evm).toMatchObject({
      arbiter,
      escrow_offered: true,
      gas_balance: "1000000000000000000",
      note: expect.stringMatching(/can pay for about/),
    });
    expect(r.body.readiness.evm.rulings_affordable).toBeGreaterThan(0);
    expect(r.body.readiness.evm.network).toMatch(/^eip155:[0-9]+$/);
    // The MCP tool reads the same.
    const checked = await mcp(seller.key, "get_escrow_settings", { check_balances: true });
    expect(checked.result?.structuredContent.readiness.evm).toMatchObject({ gas_balance: "1000000000000000000" });
  });

  it("refuses bad input with 422 problem documents naming each field; nothing changes", async () => {
    const seller = await newSeller();
    const refused = async (body: unknown) => {
      const r = await call("PUT", "/v1/account/escrow", { key: seller.key, body });
      expect({ body, status: r.status, type: r.headers.get("content-type") }).toEqual({
        body,
        status: 422,
        type: expect.stringMatching(/^application\/problem\+json/),
      });
      expect(r.body).toMatchObject({ type: expect.stringMatching(/\/problems\/invalid-request$/), status: 422 });
      return problemFields(r.body);
    };
    expect(await refused({ escrow_policy: "sometimes" })).toEqual(["escrow_policy"]);
    expect(await refused({ escrow_default_preset: "custom" })).toEqual(["escrow_default_preset"]);
    expect(await refused({ escrow_arbiter_evm: BAD_EVM, escrow_arbiter_svm: EVM })).toEqual(["escrow_arbiter_evm", "escrow_arbiter_svm"]);
    expect(await refused({ escrow_arbiter_evm: "0x0000000000000000000000000000000000000000" })).toEqual(["escrow_arbiter_evm"]);
    expect(await refused({ escrow_arbiter_evm: 42 })).toEqual(["escrow_arbiter_evm"]);
    expect(await refused({ arbiter: "payouts", escrow_arbiter_evm: EVM })).toEqual(["escrow_arbiter_evm"]);
    expect(await refused({ arbiter: "mine" })).toEqual(["arbiter"]);
    expect(await refused({ escrow_policy: "always", surprise: true })).toEqual(["surprise"]);
    expect(await refused({})).toEqual(["(body)"]);
    const r = await call("PUT", "/v1/account/escrow", { key: seller.key, body: { escrow_arbiter_evm: BAD_EVM } });
    expect(r.body.errors[0].reason).toMatch(/EIP-55 checksum/);
    expect((await call("GET", "/v1/account/escrow", { key: seller.key })).body).toMatchObject({
      escrow_policy: "seller_choice",
      escrow_arbiter_evm: null,
      updated_at: null,
    });
  });

  it("reading takes any seller credential; changing takes a full one; none or a revoked one gets 401", async () => {
    const seller = await newSeller();
    const readOnly = await mintKey(seller.key, "read_only");
    const payments = await mintKey(seller.key, "payments");
    expect((await call("GET", "/v1/account/escrow", { key: readOnly })).status).toBe(200);
    expect((await call("GET", "/v1/account/escrow/readiness", { key: readOnly })).status).toBe(200);
    for (const key of [readOnly, payments]) {
      const r = await call("PUT", "/v1/account/escrow", { key, body: { escrow_policy: "disabled" } });
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ type: expect.stringMatching(/\/problems\/forbidden$/), needed_scope: "full" });
    }
    // From an address of its own: failed authentications are counted per client address.
    const stranger = otherLoopbackAddress();
    for (const path of ["/v1/account/escrow", "/v1/account/escrow/readiness"]) {
      const r = await callFrom(stranger, "GET", path);
      expect(r.status).toBe(401);
      expect(r.body.type).toMatch(/\/problems\/unauthenticated$/);
    }
    expect((await callFrom(stranger, "PUT", "/v1/account/escrow", { body: { escrow_policy: "disabled" } })).status).toBe(401);
    const revoked = await call("POST", "/v1/keys", { key: seller.key, body: { scope: "full", mode: "test", name: "revoked" } });
    expect((await call("DELETE", `/v1/keys/${revoked.body.id}`, { key: seller.key })).status).toBe(204);
    expect((await callFrom(stranger, "PUT", "/v1/account/escrow", { key: revoked.body.secret, body: { escrow_policy: "disabled" } })).status).toBe(401);
    // Nothing changed, and one account's settings are never another's.
    const other = await newSeller();
    await call("PUT", "/v1/account/escrow", { key: other.key, body: { escrow_policy: "disabled" } });
    expect((await call("GET", "/v1/account/escrow", { key: seller.key })).body.escrow_policy).toBe("seller_choice");
    expect((await call("GET", "/v1/account/escrow", { key: other.key })).body.escrow_policy).toBe("disabled");
  });

  it("get_escrow_settings and set_escrow_settings are the same operations over MCP", async () => {
    const seller = await newSeller();
    const set = await mcp(seller.key, "set_escrow_settings", { arbiter: "payouts", escrow_default_preset: "instant" });
    expect(set.result?.structuredContent).toMatchObject({
      object: "escrow_settings",
      escrow_default_preset: "instant",
      escrow_arbiter_evm: seller.wallet.address,
      changed: true,
    });
    const got = await mcp(seller.key, "get_escrow_settings");
    expect(got.result?.structuredContent).toMatchObject({ escrow_default_preset: "instant", escrow_arbiter_evm: seller.wallet.address });
    expect(got.result?.structuredContent.readiness).toBeUndefined();
    const checked = await mcp(seller.key, "get_escrow_settings", { check_balances: true });
    expect(checked.result?.structuredContent).toMatchObject({
      readiness: { evm: { arbiter: seller.wallet.address }, svm: null },
      custody_note: expect.any(String),
    });
    const refused = await mcp(seller.key, "set_escrow_settings", { escrow_arbiter_evm: BAD_EVM });
    expect(refused.error).toMatchObject({ code: -32602, data: { status: 422, errors: [{ field: "escrow_arbiter_evm" }] } });
    const readOnly = await mintKey(seller.key, "read_only");
    expect((await mcp(readOnly, "set_escrow_settings", { escrow_policy: "disabled" })).error).toMatchObject({ data: { status: 403 } });
    expect((await mcp(readOnly, "get_escrow_settings")).result?.structuredContent.escrow_default_preset).toBe("instant");
  });
});
