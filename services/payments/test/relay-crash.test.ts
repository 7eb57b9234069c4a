import type { ServiceDatabase } from "@c402/db";
import type { RunningDevchain } from "@c402/devchain";
import { DELIVERY_FAILPOINTS, type FailpointName } from "@c402/failpoints";
import { breakdown } from "@c402/money";
import { describeWith, freshPostgresDatabase, infraAvailable } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { getAddress, keccak256, parseAbiItem, toHex, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { PAYMENTS_SCHEMA, type LiveChainSettings } from "../src";
import type { CheckoutForPayment } from "../src/domain/requirements";
import type { LiveChain } from "../src/domain/settlement/live-evm";
import type { PaymentsDb } from "../src/store/payments-store";
import { startFulfillmentRig, type FulfillmentRig } from "./support/fulfillment-rig";
import { openCrashRig, signedLivePayment, type devchainUsdc } from "./support/devchain-payments";
import { openSagaProcess, runSagaProcess, type SagaProcessConfig } from "./support/saga-process";

/**
 * Paid only on delivery survives a kill -9 (ADR 9, issues 12 and 43): a
 * payments process sells a relay checkout and SIGKILLs itself at each step
 * of the fused step: claimed (the origin not called yet), the origin
 * answered (recorded by fulfillment only), and the delivery recorded on the
 * payment (nothing broadcast). Fulfillment (a real gRPC service on
 * PostgreSQL) and the seller's origin (a real HTTP server) run on. The
 * buyer's request died with the process, so nothing may be settled behind
 * it: after the restart's recovery (once that request could no longer be
 * answered) the claim is released with nothing moved, whatever the origin
 * answered; the buyer presenting the same payment again gets a fresh
 * delivery, settled exactly once (one AuthorizationUsed, one receipt, one
 * event), and the origin was called once per claim.
 */
const SEEDS = Number(process.env.C402_RELAY_CRASH_SEEDS ?? 2);
// Other suites sign with demo accounts 0 and 3–10; this one is ours.
const FACILITATOR_INDEX = 11;
const SUBJECT_SECRET = "relay-crash-subject";
const AUTHORIZATION_USED = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");
const FAILPOINTS: FailpointName[] = ["after-claim", ...DELIVERY_FAILPOINTS];

const kafkaBrokers = infraAvailable("kafka");
const describeOnInfra = kafkaBrokers ? describeWith("postgres") : describe.skip;

describeOnInfra("paid only on delivery: kill -9 around the origin call (PostgreSQL, Kafka, devchain, fulfillment, a real origin)", () => {
  let rig: Awaited<ReturnType<typeof openCrashRig>>;
  let devchain: RunningDevchain;
  let postgres: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let payments: PaymentsDb;
  let chain: LiveChainSettings;
  let live: LiveChain;
  let usdc: ReturnType<typeof devchainUsdc>;
  let origin: FakeOrigin;
  let fulfillment: FulfillmentRig;
  let fulfillmentAddress: string;

  beforeAll(async () => {
    rig = await openCrashRig(FACILITATOR_INDEX);
    ({ devchain, postgres, database, chain, live, usdc } = rig);
    payments = database.db;
    origin = await startFakeOrigin();
    fulfillment = await startFulfillmentRig(postgres.url, kafkaBrokers!, "relay-crash-fulfillment");
    fulfillmentAddress = fulfillment.address;
  }, 120_000);

  afterAll(async () => {
    await fulfillment?.close();
    await origin?.close();
    await rig?.close();
  });

  const config = (): SagaProcessConfig => ({
    databaseUrl: postgres.url,
    schema: PAYMENTS_SCHEMA,
    kafkaBrokers: kafkaBrokers!.split(","),
    chain,
    subjectSecret: SUBJECT_SECRET,
    outboxLeaseSeconds: 1,
    fulfillmentAddress,
    settleTimeoutMs: 5_000,
  });
  /** The buyer's request waits 15 s: the origin gets 15 - 5 (settlement wait) - 3 - 5 = 2 s, and the claim is released 3 s after it. */
  const ANSWER_WITHIN_MS = 15_000;

  async function scenario(failpoint: FailpointName, seed: number) {
    const draw = (label: string): Hex => keccak256(toHex(`relay-crash/${failpoint}/${seed}/${label}`));
    const buyer = privateKeyToAccount(draw("buyer"));
    const path = `/echo`;
    const checkout: CheckoutForPayment = {
      id: `chk_relaycrash_${failpoint.replace(/-/g, "")}_${seed}`,
      accountId: "acct_relay_crash",
      title: `Relay crash ${failpoint} #${seed}`,
      priceAtomic: 10_000n + (BigInt(draw("price")) % 1_000_000n),
      payTo: privateKeyToAccount(draw("seller")).address,
      armed: true,
      reusable: true,
      status: "open",
      relay: { url: `${origin.url}${path}?run=${failpoint}-${seed}`, method: "GET", oneOffCredential: false, testDeliveryDailyCap: 25 },
    };
    const minted = breakdown(checkout.priceAtomic).total + 1_000n;
    await usdc.mint(buyer.address, minted);
    const { payload, requirement } = await signedLivePayment(live, checkout, buyer, { overrides: { nonce: draw("nonce") } });
    const originCalls = () => origin.calls.filter((c) => c.query.run === `${failpoint}-${seed}`).length;
    return { checkout, buyer, minted, payload, requirement, originCalls };
  }

  const authorizationUsed = (authorizer: Hex, nonce: Hex) =>
    usdc.client.getLogs({ address: devchain.usdc, event: AUTHORIZATION_USED, args: { authorizer, nonce }, fromBlock: 0n });

  describe.each(FAILPOINTS)("killed %s", (failpoint) => {
    it.each(Array.from({ length: SEEDS }, (_, i) => i + 1))(
      "seed %i: nothing is settled behind the buyer's back; the payment presented again is delivered and charged exactly once",
      async (seed) => {
        const s = await scenario(failpoint, seed);
        const a = s.payload.payload.authorization;
        const rowsOf = () =>
          payments.selectFrom("payments").selectAll().where("payer", "=", getAddress(a.from)).where("nonce", "=", a.nonce.toLowerCase()).execute();

        const payment = { checkout: { ...s.checkout, priceAtomic: s.checkout.priceAtomic.toString() }, payload: s.payload, requirement: s.requirement };
        const crashed = await runSagaProcess({ ...config(), mode: "pay", payment, answerWithinMs: ANSWER_WITHIN_MS }, { failpoint });
        expect(crashed).toMatchObject({ signal: "SIGKILL", stderr: expect.stringContaining(`failpoint ${failpoint}: SIGKILL`) });
        expect(s.originCalls()).toBe(failpoint === "after-claim" ? 0 : 1);

        const restarted = openSagaProcess(config());
        try {
          await restarted.recover();
        } finally {
          await restarted.close();
        }

        // Whatever the origin answered, nothing moved and nothing is recorded as sold: the buyer never heard the answer.
        expect(await rowsOf()).toEqual([]);
        expect(await authorizationUsed(s.buyer.address, a.nonce as Hex)).toEqual([]);
        expect(await usdc.balance(s.buyer.address)).toBe(s.minted);
        const callsBefore = failpoint === "after-claim" ? 0 : 1;
        expect(s.originCalls()).toBe(callsBefore);

        // The buyer presents the payment again (a fresh process): a fresh claim, delivered and settled now, once.
        const again = openSagaProcess(config());
        try {
          const outcome = await again.saga.submit(s.checkout, s.payload, s.requirement);
          expect(outcome).toMatchObject({ kind: "settled", redelivered: false, delivery: { outcome: "delivered", status: 200 } });
          const body = JSON.parse((outcome as { delivery: { body: Buffer } }).delivery.body.toString("utf8")) as { query: Record<string, string> };
          expect(body.query).toEqual({ run: `${failpoint}-${seed}` });
          await again.publishOutbox();
        } finally {
          await again.close();
        }
        expect(s.originCalls()).toBe(callsBefore + 1);
        const used = await authorizationUsed(s.buyer.address, a.nonce as Hex);
        const rows = await rowsOf();
        expect(rows).toHaveLength(1);
        const row = rows[0]!;
        expect(row).toMatchObject({ status: "settled", fulfillment: "relay", delivery_outcome: "delivered", delivery_status: 200 });
        expect(used.map((l) => l.transactionHash)).toEqual([row.tx_hash]);
        expect(await usdc.balance(s.buyer.address)).toBe(s.minted - row.total);
        expect(await usdc.balance(row.pay_to)).toBe(row.provider_amount);
        const events = await database.db.selectFrom("outbox").select(["event_id", "published_at"]).where("key", "=", row.id).execute();
        expect(events).toHaveLength(1);
        expect(events[0]!.published_at).not.toBeNull();
      },
      120_000,
    );
  });
});
