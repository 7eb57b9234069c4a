import { TestSmartWallet } from "@c402/evm-contracts";
import { breakdown } from "@c402/money";
import { createWalletClient, getAddress, http, type Hex, type LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { LiveChain } from "../src/domain/settlement/live-evm";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { liveCheckout, openSagaFixture, signedLivePayment, type SagaFixture } from "./support/devchain-payments";
import { liveSaga } from "./support/live-saga";

/**
 * A buyer paying from a contract wallet: the signature is not the payer's own
 * ECDSA signature, so only the wallet (EIP-1271, asked through the chain) can
 * vouch for it; the token asks the wallet again when the split settles.
 */
describe("contract-wallet buyers (EIP-1271) on the devchain", () => {
  let fixture: SagaFixture;
  let devchain: SagaFixture["devchain"];
  let database: SagaFixture["database"];
  let live: LiveChain;
  let usdc: SagaFixture["usdc"];
  const owner = privateKeyToAccount(generatePrivateKey());
  let wallet: Hex;

  beforeAll(async () => {
    fixture = await openSagaFixture();
    ({ devchain, database, live, usdc } = fixture);
    const deployer = createWalletClient({ account: usdc.minter, transport: http(devchain.url) });
    const hash = await deployer.deployContract({ abi: TestSmartWallet.abi, bytecode: TestSmartWallet.bytecode, args: [owner.address], chain: null });
    wallet = (await usdc.client.waitForTransactionReceipt({ hash })).contractAddress as Hex;
    await usdc.mint(wallet, 1_000_000n);
  }, 90_000);
  afterAll(() => fixture?.close());

  const saga = () => liveSaga(database.db, live);
  const rows = (id: string) => database.db.selectFrom("payments").selectAll().where("checkout_id", "=", id).execute();

  const checkout = () => liveCheckout();

  /** `signer` signs an authorization whose `from` is the wallet. */
  const payFromWallet = (c: CheckoutForPayment, signer: LocalAccount) => signedLivePayment(live, c, signer, { overrides: { from: wallet } });

  it("pays when the wallet approves its owner's signature: verified through the chain, settled through the split", async () => {
    const c = checkout();
    const before = await usdc.balance(wallet);
    const { payload, requirement } = await payFromWallet(c, owner);
    const outcome = await saga().submit(c, payload, requirement);
    expect(outcome).toMatchObject({ kind: "settled", row: { payer: getAddress(wallet), status: "settled" } });
    const b = breakdown(100_000n);
    expect(await usdc.balance(wallet)).toBe(before - b.total);
    expect(await usdc.balance(c.payTo)).toBe(b.providerAmount);
  });

  it("is refused, with nothing recorded, when the wallet does not approve the signature", async () => {
    const c = checkout();
    const before = await usdc.balance(wallet);
    const { payload, requirement } = await payFromWallet(c, privateKeyToAccount(generatePrivateKey()));
    await expect(saga().submit(c, payload, requirement)).rejects.toMatchObject({ extensions: { reason: "invalid_exact_evm_signature" } });
    expect(await rows(c.id)).toEqual([]);
    expect(await usdc.balance(wallet)).toBe(before);
  });

  it("an EOA's signature for an address without code is still only the EOA's own", async () => {
    const c = checkout();
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    const { payload, requirement } = await signedLivePayment(live, c, owner, { overrides: { from: stranger } });
    await expect(saga().submit(c, payload, requirement)).rejects.toMatchObject({ extensions: { reason: "invalid_exact_evm_signature" } });
  });
});
