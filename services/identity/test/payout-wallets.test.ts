import { create } from "@bufbuild/protobuf";
import { identityV1 } from "@c402/contracts";
import { migrate } from "@c402/db";
import { newId } from "@c402/ids";
import type { CallContext } from "@c402/rpc";
import { describeOnEachDatabase, type TestDatabase } from "@c402/testkit";
import { identityMigrations } from "../src";
import { listAccountEvents } from "../src/domain/account-events";
import { Identity } from "../src/domain/identity";
import { PayoutWallets } from "../src/domain/payout-wallets";
import { identityRpc } from "../src/rpc/identity-rpc";
import { identityStore, type IdentityDb } from "../src/store/identity-store";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { OAuthServer } from "../src/domain/oauth";

const OTHER_EVM = "0xAb8483F64d9C6d1EcF9b849Ae677dD3315835cb2";
const SOLANA = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOLANA_2 = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const STELLAR = "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H";
const ACTOR = "key:sk_test_abcd";

/** Standing payout wallets (PUT /v1/account/wallets and its preview) on identity's domain and store, against a real database. */
function payoutWalletsContract(open: () => Promise<TestDatabase>) {
  let ctx: TestDatabase;
  let db: IdentityDb;
  let wallets: PayoutWallets;
  let clock = new Date("2026-11-23T10:00:00.000Z");

  beforeAll(async () => {
    ctx = await open();
    await migrate(ctx.database, identityMigrations);
    db = ctx.database.db as IdentityDb;
    wallets = new PayoutWallets(db, () => clock);
  });
  afterAll(() => ctx.close());

  /** The wallet the latest signedUpAccount signed up with (a verified wallet signs in to one account only). */
  let SIGNER = "";
  /** An account as a wallet sign-in leaves it: the signing wallet verified and standing for EVM. */
  async function signedUpAccount(): Promise<string> {
    const id = newId("account");
    SIGNER = privateKeyToAccount(generatePrivateKey()).address;
    await identityStore.insertAccount(db, { id, created_at: clock });
    await identityStore.insertPayoutWallet(db, { account_id: id, chain_family: "eip155", address: SIGNER, verified: true, is_default: true });
    return id;
  }
  const rows = async (accountId: string) =>
    (await identityStore.listPayoutWallets(db, accountId))
      .map(({ chain_family, address, verified, is_default }) => ({ chain_family, address, verified, is_default }))
      // By family, the verified (sign-in) wallet first.
      .sort((a, b) => a.chain_family.localeCompare(b.chain_family) || Number(b.verified) - Number(a.verified));
  const events = (accountId: string) => listAccountEvents(db, accountId, { size: 1000, actionPrefix: "wallets." });

  it("a PUT naming Solana and Stellar adds them unverified; the sign-in wallet keeps standing for EVM; one event", async () => {
    const accountId = await signedUpAccount();
    const put = await wallets.put(accountId, { solana: SOLANA, stellar: STELLAR }, ACTOR);
    expect(put.changed).toBe(true);
    expect(put.changes).toEqual([
      { chainFamily: "eip155", before: SIGNER, after: SIGNER },
      { chainFamily: "solana", before: null, after: SOLANA },
      { chainFamily: "stellar", before: null, after: STELLAR },
    ]);
    expect(await rows(accountId)).toEqual([
      { chain_family: "eip155", address: SIGNER, verified: true, is_default: true },
      { chain_family: "solana", address: SOLANA, verified: false, is_default: true },
      { chain_family: "stellar", address: STELLAR, verified: false, is_default: true },
    ]);
    expect(
      (await events(accountId)).map((e) => ({ action: e.action, object_id: e.object_id, actor: e.actor, test_mode: e.test_mode, detail: e.detail })),
    ).toEqual([
      {
        action: "wallets.updated",
        object_id: accountId,
        actor: ACTOR,
        test_mode: false,
        detail: { wallets: { base: SIGNER, solana: SOLANA, stellar: STELLAR }, changes: { solana: "added", stellar: "added" } },
      },
    ]);
  });

  it("a new EVM wallet (sent lowercase) stands checksummed and unverified; the sign-in wallet stays verified and still signs in", async () => {
    const accountId = await signedUpAccount();
    const put = await wallets.put(accountId, { eip155: OTHER_EVM.toLowerCase() }, "session");
    expect(put.changes[0]).toEqual({ chainFamily: "eip155", before: SIGNER, after: OTHER_EVM });
    expect(await rows(accountId)).toEqual([
      { chain_family: "eip155", address: SIGNER, verified: true, is_default: false },
      { chain_family: "eip155", address: OTHER_EVM, verified: false, is_default: true },
    ]);
    expect(await identityStore.findSignerWallet(db, "eip155", SIGNER)).toMatchObject({ account_id: accountId, verified: true });
    // A PUT never verifies an address: the new one cannot sign in.
    expect(await identityStore.findSignerWallet(db, "eip155", OTHER_EVM)).toBeUndefined();
    expect((await events(accountId))[0]?.detail).toEqual({ wallets: { base: OTHER_EVM, solana: null, stellar: null }, changes: { base: "replaced" } });
  });

  it("a PUT replaces the whole set: a chain it leaves out loses its address (EVM falls back to the sign-in wallet)", async () => {
    const accountId = await signedUpAccount();
    await wallets.put(accountId, { eip155: OTHER_EVM, solana: SOLANA, stellar: STELLAR }, ACTOR);
    clock = new Date(clock.getTime() + 1000);
    const put = await wallets.put(accountId, { solana: SOLANA_2 }, ACTOR);
    expect(put.changes).toEqual([
      { chainFamily: "eip155", before: OTHER_EVM, after: SIGNER },
      { chainFamily: "solana", before: SOLANA, after: SOLANA_2 },
      { chainFamily: "stellar", before: STELLAR, after: null },
    ]);
    expect(await rows(accountId)).toEqual([
      { chain_family: "eip155", address: SIGNER, verified: true, is_default: true },
      { chain_family: "solana", address: SOLANA_2, verified: false, is_default: true },
    ]);
    expect((await events(accountId))[0]?.detail).toEqual({
      wallets: { base: SIGNER, solana: SOLANA_2, stellar: null },
      changes: { base: "replaced", solana: "replaced", stellar: "removed" },
    });
    // An empty PUT leaves only the verified wallet.
    await wallets.put(accountId, {}, ACTOR);
    expect(await rows(accountId)).toEqual([{ chain_family: "eip155", address: SIGNER, verified: true, is_default: true }]);
  });

  it("the same set again changes nothing and records nothing (naming the sign-in wallet itself included)", async () => {
    const accountId = await signedUpAccount();
    await wallets.put(accountId, { solana: SOLANA }, ACTOR);
    const again = await wallets.put(accountId, { eip155: SIGNER.toLowerCase(), solana: SOLANA }, ACTOR);
    expect(again.changed).toBe(false);
    expect(again.changes.map((c) => c.before === c.after)).toEqual([true, true, true]);
    expect(await events(accountId)).toHaveLength(1);
  });

  it("a dry run answers exactly what the PUT then stores, and writes nothing", async () => {
    const accountId = await signedUpAccount();
    await wallets.put(accountId, { solana: SOLANA }, ACTOR);
    const before = await rows(accountId);
    const input = { eip155: OTHER_EVM.toLowerCase(), stellar: STELLAR };
    const preview = await wallets.put(accountId, input, ACTOR, { dryRun: true });
    expect(await rows(accountId)).toEqual(before);
    expect(await events(accountId)).toHaveLength(1);
    const put = await wallets.put(accountId, input, ACTOR);
    const shape = (r: typeof put) => ({
      ...r,
      wallets: r.wallets.map(({ chain_family, address, verified, is_default }) => ({ chain_family, address, verified, is_default })),
    });
    expect(shape(preview)).toEqual(shape(put));
    expect(preview.changes).toEqual([
      { chainFamily: "eip155", before: SIGNER, after: OTHER_EVM },
      { chainFamily: "solana", before: SOLANA, after: null },
      { chainFamily: "stellar", before: null, after: STELLAR },
    ]);
  });

  it("refuses every bad address at once, naming its chain as the REST API does, and changes nothing", async () => {
    const accountId = await signedUpAccount();
    const badEvm = OTHER_EVM.replace("Ab84", "aB84"); // mixed case, wrong EIP-55 checksum
    const badStellar = `${STELLAR.slice(0, 10)}${STELLAR[10] === "A" ? "B" : "A"}${STELLAR.slice(11)}`; // one character mistyped
    await expect(wallets.put(accountId, { eip155: badEvm, solana: "0OIl", stellar: badStellar }, ACTOR)).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [
        { field: "base", reason: expect.stringContaining("EIP-55 checksum") },
        { field: "solana", reason: expect.stringContaining("base58") },
        { field: "stellar", reason: expect.stringContaining("checksum") },
      ],
    });
    await expect(wallets.put(accountId, { solana: "1".repeat(32) }, ACTOR, { dryRun: true })).rejects.toMatchObject({
      errors: [{ field: "solana", reason: expect.stringContaining("System Program") }],
    });
    await expect(wallets.put(accountId, { tron: "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb" }, ACTOR)).rejects.toMatchObject({
      errors: [{ field: "tron", reason: expect.stringContaining("base, solana, stellar") }],
    });
    expect(await rows(accountId)).toEqual([{ chain_family: "eip155", address: SIGNER, verified: true, is_default: true }]);
    expect(await events(accountId)).toEqual([]);
  });

  it("an unknown account is not found", async () => {
    await expect(wallets.put(newId("account"), { solana: SOLANA }, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
  });

  it("racing PUTs of one account end with one standing wallet per family", async () => {
    const accountId = await signedUpAccount();
    await Promise.all([
      wallets.put(accountId, { solana: SOLANA }, ACTOR),
      wallets.put(accountId, { solana: SOLANA_2, stellar: STELLAR }, ACTOR),
      wallets.put(accountId, { eip155: OTHER_EVM }, ACTOR),
    ]);
    const standing = (await rows(accountId)).filter((r) => r.is_default);
    expect(new Set(standing.map((r) => r.chain_family)).size).toBe(standing.length);
    expect(await identityStore.findSignerWallet(db, "eip155", SIGNER)).toMatchObject({ account_id: accountId });
    expect(await events(accountId)).toHaveLength(3);
  });

  it("the database itself refuses a second default for a family, and a family it does not know", async () => {
    const accountId = await signedUpAccount();
    await expect(
      identityStore.insertPayoutWallet(db, { account_id: accountId, chain_family: "eip155", address: OTHER_EVM, verified: false, is_default: true }),
    ).rejects.toThrow(/payout_wallets_default/);
    await expect(
      identityStore.insertPayoutWallet(db, {
        account_id: accountId,
        chain_family: "tron",
        address: "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb",
        verified: false,
        is_default: false,
      }),
    ).rejects.toThrow(/payout_wallets_family/);
  });

  it("over RPC: the changes per family, the dry run, and an actor no account event can name", async () => {
    const accountId = await signedUpAccount();
    const rpc = identityRpc(
      new Identity(db, { baseUrl: "http://127.0.0.1:4020", challengeTtlSeconds: 600 }, () => clock),
      db,
      new OAuthServer(db, { baseUrl: "http://127.0.0.1:4020" }),
      undefined,
      undefined,
      wallets,
    );
    const call = {} as CallContext;
    const put = (wallets: Record<string, string>, dryRun = false, actor = "wallet") =>
      rpc.putPayoutWallets(create(identityV1.PutPayoutWalletsRequestSchema, { accountId, wallets, dryRun, actor }), call);
    const preview = await put({ solana: SOLANA }, true);
    expect(preview).toMatchObject({
      changed: true,
      changes: [{ chainFamily: "eip155", before: SIGNER, after: SIGNER }, { chainFamily: "solana", after: SOLANA }, { chainFamily: "stellar" }],
    });
    expect(preview.changes![1]?.before).toBeUndefined();
    expect(preview.changes![2]?.after).toBeUndefined();
    expect((await rpc.getPayoutWallets(create(identityV1.GetPayoutWalletsRequestSchema, { accountId }), call)).wallets).toHaveLength(1);
    const done = await put({ solana: SOLANA });
    expect(done.wallets!.map((w) => [w.chainFamily, w.address, w.verified, w.isDefault])).toEqual([
      ["eip155", SIGNER, true, true],
      ["solana", SOLANA, false, true],
    ]);
    await expect(put({ solana: SOLANA_2 }, false, "nobody")).rejects.toMatchObject({ slug: "invalid-request", errors: [{ field: "actor" }] });
  });
}

describeOnEachDatabase("standing payout wallets", "identity", payoutWalletsContract);
