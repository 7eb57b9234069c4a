import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DatabaseBus, KafkaBus, outboxRow, type Bus, type Subscription } from "@c402/bus";
import { EVENT_TYPES, escrowEventsV1, TOPICS } from "@c402/contracts";
import { EmbeddedPostgres, migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { describeWith, eventually, freshPostgresDatabase, infraAvailable } from "@c402/testkit";
import { randomNonce } from "@c402/x402";
import type { Kysely } from "kysely";
import { paymentsMigrations } from "../src";
import { subscribeEscrowOutcomes } from "../src/events/escrow-outcomes";
import { newPaymentRow } from "../src/domain/payment-row";
import { priceOf, type CheckoutForPayment } from "../src/domain/requirements";
import { paymentsStore as store, type PaymentRow, type PaymentsDb } from "../src/store/payments-store";

const SELLER = "0x2222222222222222222222222222222222222222";
const PAYER = "0x7777777777777777777777777777777777777777";
const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

/** An escrow sale's payment as the deposit left it: held. */
async function heldPayment(db: PaymentsDb): Promise<PaymentRow> {
  const checkout: CheckoutForPayment = {
    id: newId("escrowCheckout"),
    accountId: "acct_seller",
    title: "Vintage lamp",
    priceAtomic: 10_000_000n,
    payTo: SELLER,
    armed: true,
    reusable: false,
    status: "open",
    escrow: { preset: "standard", settleSeconds: 604_800, holdSeconds: 1_209_600, backstopSeconds: 2_592_000, arbiterEvm: PAYER },
  };
  const row = newPaymentRow({
    checkout,
    presented: {
      key: { test_mode: false, network: "eip155:8453", asset: USDC, payer: PAYER, nonce: randomNonce() },
      authorization: {},
      validBefore: null,
      payTo: SELLER,
      platformFeeTo: null,
      amounts: priceOf(checkout),
    },
    subjectSecret: "test-secret",
    now: new Date(),
    handoffId: null,
    saga: { status: "held", test_mode: false, tx_hash: null, settled_at: null, split_address: null, single_shot: true },
  });
  expect(await store.insertIfNew(db, row)).toBe(true);
  return row;
}

/** The escrow service's event about one payment's escrow, as its outbox relays it (the envelope's bytes). */
function escrowEvent(type: "held" | "released" | "refunded", row: PaymentRow, txHash: string): { key: string; value: Uint8Array } {
  const escrow = create(escrowEventsV1.EscrowSnapshotSchema, {
    paymentId: row.id,
    checkoutId: row.checkout_id,
    accountId: row.account_id,
    state: type,
    network: row.network,
    depositedAt: timestampFromDate(new Date()),
  });
  const [eventType, payload] =
    type === "released"
      ? [
          EVENT_TYPES.escrowReleased,
          toBinary(escrowEventsV1.EscrowReleasedSchema, create(escrowEventsV1.EscrowReleasedSchema, { escrow, txHash, by: "settle_window" })),
        ]
      : type === "refunded"
        ? [
            EVENT_TYPES.escrowRefunded,
            toBinary(escrowEventsV1.EscrowRefundedSchema, create(escrowEventsV1.EscrowRefundedSchema, { escrow, txHash, by: "backstop" })),
          ]
        : [EVENT_TYPES.escrowHeld, toBinary(escrowEventsV1.EscrowHeldSchema, create(escrowEventsV1.EscrowHeldSchema, { escrow, txHash }))];
  const out = outboxRow({ topic: TOPICS.escrowEvents, type: eventType, accountId: row.account_id, testMode: false, aggregateId: row.id, payload });
  return { key: out.key, value: new Uint8Array(out.payload) };
}

/**
 * Payments consuming the escrow's close (ADR 19), on both stacks: a release
 * settles the held payment and writes payment.settled once (so checkout.paid
 * fires once, at release), a refund marks it refunded, escrow.held changes
 * nothing, and a redelivered event (the bus delivers at least once) moves nothing again.
 */
function outcomesContract(open: () => Promise<{ payments: ServiceDatabase; bus: Bus; close(): Promise<void> }>) {
  let ctx: Awaited<ReturnType<typeof open>>;
  let subscription: Subscription | undefined;
  beforeAll(async () => {
    ctx = await open();
  });
  afterAll(async () => {
    await subscription?.stop();
    await ctx.close();
  });

  it("settles a released payment once, refunds a refunded one, and ignores the rest", async () => {
    await migrate(ctx.payments, paymentsMigrations);
    const db = ctx.payments.db as PaymentsDb;
    const [released, refunded, stillHeld] = [await heldPayment(db), await heldPayment(db), await heldPayment(db)];
    await ctx.bus.ensureTopics([TOPICS.escrowEvents]);
    let commits = 0;
    subscription = await subscribeEscrowOutcomes(ctx.bus, db, () => commits++);
    const release = escrowEvent("released", released, `0x${"cd".repeat(32)}`);
    const events = [escrowEvent("held", stillHeld, `0x${"aa".repeat(32)}`), release, escrowEvent("refunded", refunded, `0x${"ef".repeat(32)}`)];
    await ctx.bus.publish(TOPICS.escrowEvents, events);
    // The same events delivered again (a consumer crashed before acknowledging), and a second release of the same escrow.
    await ctx.bus.publish(TOPICS.escrowEvents, [...events, escrowEvent("released", released, `0x${"cd".repeat(32)}`)]);

    const statuses = () => Promise.all([released, refunded, stillHeld].map(async (r) => (await store.findById(db, r.id))?.status));
    expect(await eventually(statuses, (s) => s[0] === "settled" && s[1] === "refunded", 60_000)).toEqual(["settled", "refunded", "held"]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await statuses()).toEqual(["settled", "refunded", "held"]);
    expect(await store.findById(db, released.id)).toMatchObject({ tx_hash: `0x${"cd".repeat(32)}` });
    const outbox = await (db as unknown as Kysely<any>).selectFrom("outbox").select(["key", "topic"]).execute();
    expect(outbox).toEqual([{ key: released.id, topic: TOPICS.paymentSettled }]);
    expect(commits).toBeGreaterThan(0);
  });
}

describe("escrow outcomes consumed by payments, on the embedded stack", () => {
  outcomesContract(async () => {
    const pg = await EmbeddedPostgres.open();
    const bus = await DatabaseBus.open(pg.forSchema("bus"));
    return {
      payments: pg.forSchema("payments"),
      bus,
      async close() {
        await bus.close();
        await pg.close();
      },
    };
  });
});

describeWith("postgres")("escrow outcomes consumed by payments, on PostgreSQL and Kafka", () => {
  const kafka = infraAvailable("kafka");
  (kafka ? describe : describe.skip)("with a real broker", () => {
    outcomesContract(async () => {
      const fresh = await freshPostgresDatabase();
      const payments = openPostgres({ url: fresh.url, schema: "payments" });
      const bus = new KafkaBus({ brokers: (kafka as string).split(","), clientId: "payments-escrow-test", groupPrefix: `test-${randomUUID()}.` });
      return {
        payments,
        bus,
        async close() {
          await bus.close();
          await payments.close();
          await fresh.drop();
        },
      };
    });
  });
});
