import { EmbeddedPostgres, migrate } from "@c402/db";
import { create } from "@bufbuild/protobuf";
import { authorizationFromMessage, paymentsV1, requirementFromMessage } from "@c402/contracts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { paymentsMigrations } from "../src";
import { Facilitator } from "../src/domain/facilitator";
import { Payments } from "../src/domain/payments";
import { PayoutAccounts } from "../src/domain/payout-accounts";
import { paymentsRpc } from "../src/rpc/payments-rpc";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { SeriesCharges } from "../src/domain/series-charges";
import { RehearsalSettlement } from "../src/domain/settlement/rehearsal";
import type { PaymentsDb } from "../src/store/payments-store";
import { preparedSeries, signedCancel, signedHeader } from "./support/series";
import { settledEventOf } from "./support/settled-event";

/** SCHEDULE_REHEARSAL_DAY_SECONDS as this suite sets it: a rehearsed series day lasts 5 seconds. */
const DAY = 5;

/**
 * A test-mode series (ADR 20) end to end on the compressed clock: the /test
 * face quotes and prepares it, the purchase settles period 0 simulated and
 * records the series, each held period settles simulated once its window
 * opens by the wall clock (moved here by skewing the service's clock), and a
 * cancel is checked and sends nothing.
 */
describe("a test-mode series", () => {
  let pg: EmbeddedPostgres;
  let db: PaymentsDb;
  let payments: Payments;
  let series: SeriesCharges;
  let skewMs = 0;
  const buyer = privateKeyToAccount(generatePrivateKey());
  const checkout: CheckoutForPayment = {
    id: "chk_series_test",
    accountId: "acct_s",
    title: "Weekly",
    priceAtomic: 100_000n,
    payTo: "0x2222222222222222222222222222222222222222",
    armed: false,
    reusable: false,
    status: "open",
    schedule: { intervalDays: 1, periods: 3 },
  };

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("payments");
    await migrate(database, paymentsMigrations);
    db = database.db;
    const now = () => new Date(Date.now() + skewMs);
    const rehearsal = new RehearsalSettlement({ db, subjectSecret: "s", onCommitted: () => {}, now, seriesDaySeconds: DAY });
    payments = new Payments({ db, checkouts: async () => checkout, settlements: [rehearsal], now });
    series = new SeriesCharges({ db, settlements: [rehearsal] });
  }, 60_000);
  afterAll(() => pg?.close());

  it("is quoted, prepared, bought, charged period by period on the wall clock and cancelled without sending anything", async () => {
    const quote = await payments.quote(checkout.id, "test");
    expect(quote.accepts).toHaveLength(1);
    expect(quote.accepts[0]!.extra).toMatchObject({ rehearsal: true, schedule: { interval_days: 1, periods: 3 } });
    const { prepared, header, held } = await preparedSeries(payments, checkout.id, "test", buyer);
    const anchor = Number(prepared.schedule![0]!.authorization.validAfter) - DAY;
    expect(Math.abs(anchor - Date.now() / 1000)).toBeLessThan(3);
    expect(prepared.schedule!.map((h) => [Number(h.authorization.validAfter) - anchor, Number(h.authorization.validBefore) - anchor])).toEqual([
      [DAY, 2 * DAY],
      [2 * DAY, 3 * DAY],
    ]);

    const bought = await payments.submit(checkout.id, "test", header, { heldHeaders: held });
    expect(bought.status).toBe("settled");
    const scheduleId = bought.receipt.schedule_id!;
    expect(bought.schedule).toMatchObject({ id: scheduleId, periods: 3, periodsSettled: 1, intervalDays: 1 });
    expect((await settledEventOf(db, bought.receipt.id)).series?.held).toHaveLength(2);

    expect(await series.charge(scheduleId, 1)).toEqual({ outcome: "not_yet", reason: "window_not_open" });
    skewMs = (anchor + DAY + 1) * 1000 - Date.now();
    const charged = await Promise.all(Array.from({ length: 5 }, () => series.charge(scheduleId, 1)));
    expect(charged.every((c) => c.outcome === "settled")).toBe(true);
    expect(new Set(charged.map((c) => c.row!.id)).size).toBe(1);
    const period1 = charged[0]!.row!;
    expect(period1).toMatchObject({ schedule_id: scheduleId, schedule_period: 1, test_mode: true, status: "settled" });
    expect(await settledEventOf(db, period1.id)).toMatchObject({ scheduleId, schedulePeriod: 1, testMode: true });

    // Cancels are checked (the payer's signature under the rehearsal domain), nothing is sent.
    const p2 = prepared.schedule![1]!.authorization.nonce;
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect((await series.cancel(scheduleId, [await signedCancel(stranger, prepared.requirement, buyer.address, p2)]))[0]).toMatchObject({
      status: "refused",
      reason: "invalid_signature",
    });
    const p1 = prepared.schedule![0]!.authorization.nonce;
    expect(await series.cancel(scheduleId, [await signedCancel(buyer, prepared.requirement, buyer.address, p1)])).toEqual([
      { nonce: p1, period: 1, status: "used", txHash: period1.tx_hash },
    ]);
    expect(await series.cancel(scheduleId, [await signedCancel(buyer, prepared.requirement, buyer.address, p2)])).toEqual([
      { nonce: p2, period: 2, status: "cancelled" },
    ]);

    // A cancelled period is never charged; once its window passes it is closed anyway.
    skewMs = (anchor + 2 * DAY + 1) * 1000 - Date.now();
    expect(await series.charge(scheduleId, 2)).toEqual({ outcome: "final", reason: "authorization_used_or_cancelled" });
    skewMs = (anchor + 3 * DAY + 1) * 1000 - Date.now();
    expect(await series.charge(scheduleId, 2)).toEqual({ outcome: "final", reason: "window_closed" });
  });

  it("on the wire: prepare's schedule[], /pay's held_payment_headers and schedule summary, ChargeHeldPeriod's outcome and receipt", async () => {
    const rpc = paymentsRpc(payments, new Facilitator({ checkouts: async () => checkout, settlements: [] }), new PayoutAccounts({}), series);
    const rpcBuyer = privateKeyToAccount(generatePrivateKey());
    const ctx = { requestId: "t" };
    skewMs = 0;
    const prepared = await rpc.preparePayment(
      create(paymentsV1.PreparePaymentRequestSchema, { checkoutId: checkout.id, face: paymentsV1.Face.TEST, payer: rpcBuyer.address }),
      ctx,
    );
    expect(prepared.schedule?.map((h) => h.period)).toEqual([1, 2]);
    const requirement = requirementFromMessage(prepared.requirement as paymentsV1.PaymentRequirement);
    expect(requirement.extra.schedule).toMatchObject({ interval_days: 1, periods: 3 });
    const header = await signedHeader(rpcBuyer, requirement, authorizationFromMessage(prepared.authorization as paymentsV1.Authorization));
    const held = await Promise.all(
      prepared.schedule!.map((h) => signedHeader(rpcBuyer, requirement, authorizationFromMessage(h.authorization as paymentsV1.Authorization))),
    );
    const paid = await rpc.submitPayment(
      create(paymentsV1.SubmitPaymentRequestSchema, { checkoutId: checkout.id, face: paymentsV1.Face.TEST, paymentHeader: header, heldPaymentHeaders: held }),
      ctx,
    );
    expect(paid.status).toBe(paymentsV1.PaymentStatus.SETTLED);
    expect(paid.schedule).toMatchObject({ periods: 3, periodsSettled: 1, intervalDays: 1 });
    const scheduleId = paid.schedule!.id!;
    expect(paid.receipt).toMatchObject({ scheduleId, schedulePeriod: 0 });
    // GetSeriesStart: period 0's payment.settled as the event carries it (what starts the series in the schedules service).
    const start = await rpc.getSeriesStart(create(paymentsV1.GetSeriesStartRequestSchema, { scheduleId }), ctx);
    expect(start.settled).toMatchObject({ scheduleId, schedulePeriod: 0, paymentId: paid.receipt!.id, series: { periods: 3, intervalDays: 1 } });
    expect(start.settled?.series?.held?.map((h) => h.period)).toEqual([1, 2]);
    await expect(rpc.getSeriesStart(create(paymentsV1.GetSeriesStartRequestSchema, { scheduleId: "sch_nope" }), ctx)).rejects.toMatchObject({
      slug: "not-found",
    });
    const notYet = await rpc.chargeHeldPeriod(create(paymentsV1.ChargeHeldPeriodRequestSchema, { scheduleId, period: 1 }), ctx);
    expect(notYet).toMatchObject({ outcome: paymentsV1.ChargeOutcome.NOT_YET, reason: "window_not_open" });
    skewMs = (Number(prepared.schedule![0]!.authorization!.validAfter) + 1) * 1000 - Date.now();
    const charged = await rpc.chargeHeldPeriod(create(paymentsV1.ChargeHeldPeriodRequestSchema, { scheduleId, period: 1 }), ctx);
    expect(charged).toMatchObject({ outcome: paymentsV1.ChargeOutcome.SETTLED, receipt: { scheduleId, schedulePeriod: 1 } });
    expect(charged.paymentId).toBe(charged.receipt?.id);
    await expect(rpc.chargeHeldPeriod(create(paymentsV1.ChargeHeldPeriodRequestSchema, { scheduleId: "sch_nope", period: 1 }), ctx)).rejects.toMatchObject({
      slug: "not-found",
    });
  });
});
