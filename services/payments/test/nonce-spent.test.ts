import { devchainSettlement } from "@c402/devchain";
import { breakdown } from "@c402/money";
import type { RpcFaultProxy } from "@c402/testkit";
import { createPublicClient, http, parseTransaction, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { LiveChain } from "../src/domain/settlement/live-evm";
import { liveCheckout, openProxiedSagaFixture, signedLivePayment } from "./support/devchain-payments";
import { liveSaga } from "./support/live-saga";

/**
 * G12's gap: a settlement signed and recorded, whose broadcast never reached
 * the node, and whose nonce another transaction of the facilitator key then
 * took (the key used elsewhere). Rebroadcasting it can only ever meet "nonce
 * too low". The sweep must see that, sign the settlement again with a fresh
 * nonce, and settle the payment once: the buyer charged once, the seller paid
 * once, one payment row.
 */
describe("a recorded settlement whose nonce another transaction took", () => {
  let fixture: Awaited<ReturnType<typeof openProxiedSagaFixture>>;
  let proxy: RpcFaultProxy;
  let live: LiveChain;

  beforeAll(async () => {
    fixture = await openProxiedSagaFixture(500);
    ({ proxy, live } = fixture);
  }, 120_000);
  afterAll(() => fixture?.close());

  it("is signed again by the sweep and settles once", async () => {
    const saga = liveSaga(fixture.database.db, live, { settleTimeoutMs: 2_000 });
    const c = liveCheckout();
    const buyer = privateKeyToAccount(generatePrivateKey());
    await fixture.usdc.mint(buyer.address, 1_000_000n);
    const price = breakdown(100_000n);

    // The broadcast never reaches the node: the payment is recorded as settling, with its signed transaction.
    proxy.dropBroadcasts();
    const payment = await signedLivePayment(live, c, buyer);
    const first = await saga.submit(c, payment.payload, payment.requirement);
    expect(first).toMatchObject({ kind: "pending", row: { status: "settling" } });
    const recorded = await fixture.database.db.selectFrom("payments").select(["raw_tx", "tx_hash"]).where("id", "=", first.row.id).executeTakeFirstOrThrow();
    const nonce = parseTransaction(recorded.raw_tx as Hex).nonce!;

    // The facilitator key is used elsewhere: another transaction takes that nonce, and is mined.
    const chain = createPublicClient({ transport: http(fixture.devchain.url) });
    const facilitator = privateKeyToAccount(devchainSettlement(fixture.devchain).facilitatorKey as Hex);
    const fees = await chain.estimateFeesPerGas();
    const other = await facilitator.signTransaction({
      chainId: await chain.getChainId(),
      nonce,
      to: facilitator.address,
      value: 0n,
      gas: 21_000n,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      type: "eip1559",
    });
    await chain.waitForTransactionReceipt({ hash: await chain.sendRawTransaction({ serializedTransaction: other }) });
    proxy.heal();

    const errors: unknown[] = [];
    const swept = liveSaga(fixture.database.db, live, { settleTimeoutMs: 5_000, onSweepError: (err) => errors.push(err) });
    expect(await swept.sweep(0)).toBe(1);
    expect(errors).toEqual([]);
    const row = await fixture.database.db.selectFrom("payments").selectAll().where("checkout_id", "=", c.id).execute();
    expect(row).toHaveLength(1);
    expect(row[0]).toMatchObject({ id: first.row.id, status: "settled" });
    expect(row[0]!.tx_hash).not.toBe(recorded.tx_hash);
    expect(parseTransaction(row[0]!.raw_tx as Hex).nonce).toBeGreaterThan(nonce);
    expect(await fixture.usdc.balance(buyer.address)).toBe(1_000_000n - price.total);
    expect(await fixture.usdc.balance(c.payTo)).toBe(price.providerAmount);

    // A second sweep finds nothing left to do.
    expect(await swept.sweep(0)).toBe(0);
  }, 120_000);
});
