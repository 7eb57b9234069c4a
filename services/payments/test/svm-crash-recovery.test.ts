import { resolve } from "node:path";
import type { ServiceDatabase } from "@c402/db";
import { DELIVERY_FAILPOINTS, type FailpointName } from "@c402/failpoints";
import { newId } from "@c402/ids";
import type { SolanaDevnet } from "@c402/solana-devnet";
import { describeWith, infraAvailable } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import { generateKeyPairSigner } from "@solana/kit";
import { toClientSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { requirementsFor, type CheckoutForPayment } from "../src/domain/requirements";
import type { LiveSvmSettlement } from "../src/domain/settlement/live-svm";
import { startFulfillmentRig, type FulfillmentRig } from "./support/fulfillment-rig";
import { onePaymentInput, paymentRecords, runOnePayment, sweepUntilConcluded } from "./support/rail-saga";
import { openSvmRig, openSvmSaga, type SvmRig, type SvmSagaConfig } from "./support/svm-saga";

/**
 * G6–G8 on the Solana rail, with a real kill -9: each payment is submitted by
 * a payments process of its own (fixtures/svm-saga-process.ts) on PostgreSQL
 * and the local Solana devnet, which SIGKILLs itself at one step of the
 * saga; the sweep of a fresh settlement then recovers it. After every run the
 * chain and the ledger agree: one transfer (the seller's and the buyer's
 * balances moved by the price once), one settled row, one outbox event, and
 * the payment presented again redelivers the same receipt.
 */
const SVM_FAILPOINTS: FailpointName[] = ["after-claim", "after-sign", "after-broadcast", "after-receipt", "after-ledger-commit"];
const DRIVER = resolve(__dirname, "fixtures/svm-saga-process.ts");
const PRICE = 250_000n;
const RECOVERY_LIMIT_MS = 30_000;
const kafkaBrokers = infraAvailable("kafka");

describeWith("postgres")("Solana saga: kill -9 at every step, duplicates, an expired blockhash (PostgreSQL, Solana devnet)", () => {
  let rig: SvmRig;
  let devnet: SolanaDevnet;
  let database: ServiceDatabase;
  let config: SvmSagaConfig;
  let saga: LiveSvmSettlement;
  let seller: string;

  beforeAll(async () => {
    rig = await openSvmRig("svm-crash-secret");
    ({ devnet, database, config, saga } = rig);
    seller = (await generateKeyPairSigner()).address;
    await devnet.setTokenBalance(seller as never, 0n);
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  function checkout(): CheckoutForPayment {
    return {
      id: newId("checkout"),
      accountId: "acc_svm",
      title: "Solana goods",
      priceAtomic: PRICE,
      payTo: "0x1111111111111111111111111111111111111111",
      armed: true,
      reusable: false,
      status: "open",
      payoutAddresses: { solana: seller },
    };
  }

  /** A buyer holding 1 USDC signs, with the official client, a payment for the checkout's Solana requirement. */
  async function signedPayment(
    c: CheckoutForPayment,
    quoting: LiveSvmSettlement = saga,
  ): Promise<{ buyer: string; requirement: PaymentRequirements; payload: AnyPaymentPayload }> {
    const buyer = await generateKeyPairSigner();
    await devnet.setTokenBalance(buyer.address, 1_000_000n);
    const requirement = requirementsFor("live", c, quoting.rails()).find((r) => r.network === devnet.network) as PaymentRequirements;
    const client = new ExactSvmScheme(toClientSvmSigner(buyer), { rpcUrl: devnet.url });
    return { buyer: buyer.address, requirement, payload: await officialPayment(client, requirement, requirement) };
  }

  const rowsOf = (checkoutId: string) => paymentRecords(database).rowsOf(checkoutId);
  const outboxEventsOf = (paymentId: string) => paymentRecords(database).outboxEventsOf(paymentId);
  const recover = (checkoutId: string) => sweepUntilConcluded(saga, database, checkoutId);

  it.each(SVM_FAILPOINTS)(
    "killed %s: recovered to one transfer, one settled row, one event; presented again, the same receipt",
    async (failpoint) => {
      const c = checkout();
      const payment = await signedPayment(c);
      const sellerBefore = await devnet.tokenBalance(seller as never);
      const exit = await runOnePayment(DRIVER, onePaymentInput(config, c, payment), failpoint);
      expect({ signal: exit.signal, reachedFailpoint: exit.reachedFailpoint, outcome: exit.outcome }).toEqual({
        signal: "SIGKILL",
        reachedFailpoint: true,
        outcome: undefined,
      });

      const recovery = await recover(c.id);
      expect(recovery.status).toBe("settled");
      const [row] = await rowsOf(c.id);
      expect(await rowsOf(c.id)).toHaveLength(1);
      expect(await outboxEventsOf(row?.id as string)).toBe(1);
      expect(await devnet.tokenBalance(seller as never)).toBe(sellerBefore + PRICE);
      expect(await devnet.tokenBalance(payment.buyer as never)).toBe(1_000_000n - PRICE);

      const again = await saga.submit(c, payment.payload, payment.requirement);
      expect(again).toMatchObject({ kind: "settled", redelivered: true, row: { id: row?.id, tx_hash: row?.tx_hash } });
      expect(await devnet.tokenBalance(seller as never)).toBe(sellerBefore + PRICE);
      expect(await outboxEventsOf(row?.id as string)).toBe(1);
    },
    90_000,
  );

  it("the same payment presented 20 times at once settles once", async () => {
    const c = { ...checkout(), reusable: true };
    const payment = await signedPayment(c);
    const sellerBefore = await devnet.tokenBalance(seller as never);
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => saga.submit(c, payment.payload, payment.requirement)));
    const ids = new Set(outcomes.map((o) => (o.kind === "settled" ? o.row.id : `pending ${o.row.id}`)));
    expect([...ids]).toHaveLength(1);
    expect(outcomes.every((o) => o.kind === "settled")).toBe(true);
    expect(outcomes.filter((o) => o.kind === "settled" && !o.redelivered)).toHaveLength(1);
    expect(await rowsOf(c.id)).toHaveLength(1);
    expect(await devnet.tokenBalance(seller as never)).toBe(sellerBefore + PRICE);
    expect(await devnet.tokenBalance(payment.buyer as never)).toBe(1_000_000n - PRICE);
  }, 60_000);

  it("killed after signing, its blockhash expired before the restart: failed, nothing charged, never sent", async () => {
    const c = checkout();
    const payment = await signedPayment(c);
    const sellerBefore = await devnet.tokenBalance(seller as never);
    const exit = await runOnePayment(DRIVER, onePaymentInput(config, c, payment), "after-sign");
    expect(exit.signal).toBe("SIGKILL");
    devnet.advanceBlocks(151);
    expect((await recover(c.id)).status).toBe("failed");
    expect(await devnet.tokenBalance(seller as never)).toBe(sellerBefore);
    expect(await devnet.tokenBalance(payment.buyer as never)).toBe(1_000_000n);
    await expect(saga.submit(c, payment.payload, payment.requirement)).rejects.toMatchObject({ extensions: { reason: "settlement_failed" } });
  }, 90_000);

  it("refuses before recording anything: a payment for another amount, one to another wallet", async () => {
    const c = checkout();
    const { requirement } = await signedPayment(c);
    const buyer = await generateKeyPairSigner();
    await devnet.setTokenBalance(buyer.address, 1_000_000n);
    const client = new ExactSvmScheme(toClientSvmSigner(buyer), { rpcUrl: devnet.url });
    const stranger = (await generateKeyPairSigner()).address;
    await devnet.setTokenBalance(stranger, 0n);
    const tampers: [PaymentRequirements, string][] = [
      [{ ...requirement, amount: "1" }, "invalid_exact_svm_payload_amount_mismatch"],
      [{ ...requirement, payTo: stranger }, "invalid_exact_svm_payload_recipient_mismatch"],
    ];
    for (const [tampered, reason] of tampers) {
      const payload = await officialPayment(client, tampered, requirement);
      await expect(saga.submit(c, payload, requirement)).rejects.toMatchObject({ extensions: { reason } });
    }
    expect(await rowsOf(c.id)).toHaveLength(0);
    expect(await devnet.tokenBalance(buyer.address)).toBe(1_000_000n);
  }, 60_000);

  /**
   * A relay sale (ADR 9) killed around its origin call: fulfillment (a real
   * gRPC service) and the seller's origin (a real HTTP server) run on. The
   * buyer's request died with the process, so nothing may be sent behind it:
   * the restart releases the claim once that request could no longer be
   * answered; the buyer presenting the same transaction again (its blockhash
   * still young enough) gets a fresh delivery, sent and settled once.
   */
  (kafkaBrokers ? describe : describe.skip)("a relay sale killed around its origin call (fulfillment, a real origin)", () => {
    /** The buyer's request waits 15 s: the origin gets 15 - 5 (settlement wait) - 3 - 5 = 2 s, and the claim is released 3 s after. */
    const ANSWER_WITHIN_MS = 15_000;
    let origin: FakeOrigin;
    let fulfillment: FulfillmentRig;
    let relayConfig: SvmSagaConfig;
    let relay: Awaited<ReturnType<typeof openSvmSaga>>;

    beforeAll(async () => {
      origin = await startFakeOrigin();
      fulfillment = await startFulfillmentRig(config.databaseUrl, kafkaBrokers!, "svm-relay-crash-fulfillment");
      relayConfig = { ...config, settleTimeoutMs: 5_000, fulfillmentAddress: fulfillment.address };
      relay = await openSvmSaga(relayConfig);
    }, 60_000);

    afterAll(async () => {
      await relay?.close();
      await fulfillment?.close();
      await origin?.close();
    });

    it.each<FailpointName>(["after-claim", ...DELIVERY_FAILPOINTS])(
      "killed %s: nothing sent behind the buyer's back; presented again, delivered and sent exactly once",
      async (failpoint) => {
        const run = `${failpoint}-${newId("checkout")}`;
        const c: CheckoutForPayment = {
          ...checkout(),
          reusable: true,
          relay: { url: `${origin.url}/echo?run=${run}`, method: "GET", oneOffCredential: false, testDeliveryDailyCap: 25 },
        };
        const originCalls = () => origin.calls.filter((call) => call.query.run === run).length;
        const payment = await signedPayment(c, relay.saga);
        const sellerBefore = await devnet.tokenBalance(seller as never);
        const exit = await runOnePayment(DRIVER, { ...onePaymentInput(relayConfig, c, payment), answerWithinMs: ANSWER_WITHIN_MS }, failpoint);
        expect({ signal: exit.signal, reachedFailpoint: exit.reachedFailpoint }).toEqual({ signal: "SIGKILL", reachedFailpoint: true });
        const calledBefore = failpoint === "after-claim" ? 0 : 1;
        expect(originCalls()).toBe(calledBefore);

        // The restart: the claim is released once its buyer's request can no longer be answered; nothing was sent.
        const started = Date.now();
        while ((await rowsOf(c.id)).length > 0) {
          if (Date.now() - started > RECOVERY_LIMIT_MS) throw new Error(`claim not released in ${RECOVERY_LIMIT_MS} ms: ${JSON.stringify(await rowsOf(c.id))}`);
          await relay.saga.sweep(0);
          await new Promise((r) => setTimeout(r, 200));
        }
        expect(await devnet.tokenBalance(payment.buyer as never)).toBe(1_000_000n);
        expect(await devnet.tokenBalance(seller as never)).toBe(sellerBefore);

        // Presented again: a fresh delivery, one transfer, one receipt, one event.
        const again = await relay.saga.submit(c, payment.payload, payment.requirement);
        expect(again).toMatchObject({ kind: "settled", redelivered: false, delivery: { outcome: "delivered", status: 200 } });
        expect(originCalls()).toBe(calledBefore + 1);
        const rows = await rowsOf(c.id);
        expect(rows).toMatchObject([{ status: "settled", tx_hash: again.row.tx_hash }]);
        expect(await outboxEventsOf(rows[0]!.id)).toBe(1);
        expect(await devnet.tokenBalance(seller as never)).toBe(sellerBefore + PRICE);
        expect(await devnet.tokenBalance(payment.buyer as never)).toBe(1_000_000n - PRICE);
      },
      90_000,
    );
  });
});

/** The official client's transaction for `signed`, presented as a payment for `accepted` (the two differ when a test tampers). */
async function officialPayment(client: ExactSvmScheme, signed: PaymentRequirements, accepted: PaymentRequirements): Promise<AnyPaymentPayload> {
  const created = await client.createPaymentPayload(2, signed as Parameters<ExactSvmScheme["createPaymentPayload"]>[1]);
  return { x402Version: 2, accepted, payload: { transaction: String(created.payload.transaction) } };
}
