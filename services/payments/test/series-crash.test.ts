import { breakdown } from "@c402/money";
import { SETTLE_FAILPOINTS } from "@c402/failpoints";
import { describeWith } from "@c402/testkit";
import { parseAbiItem, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { PAYMENTS_SCHEMA } from "../src";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { SeriesCharges } from "../src/domain/series-charges";
import { liveCheckout, openCrashRig, type CrashRig } from "./support/devchain-payments";
import { runHeldChargeProcess } from "./support/held-charge-process";
import { liveSaga } from "./support/live-saga";
import { preparedSeries } from "./support/series";

// A key of our own on this suite's devchain (see crash-recovery.test.ts).
const FACILITATOR_INDEX = 12;
const SUBJECT_SECRET = "series-crash";
const SPLIT = breakdown(100_000n, { platformFeeBps: 0, rule: "standard" });
const AUTHORIZATION_USED = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");
// The outbox is not published here: the event is counted in the outbox (the relay's crash points are crash-recovery.test.ts's).
const FAILPOINTS = SETTLE_FAILPOINTS.filter((f) => f !== "after-outbox-publish");

/**
 * A held period's charge killed (SIGKILL) at each step of the live saga, then
 * recovered by a restarted process's sweep: one transfer on chain, one
 * settled payment for the period with its receipt, one payment.settled in
 * the outbox, exact balances, and ChargeHeldPeriod answers SETTLED.
 */
describeWith("postgres")("a held period's charge killed at each step of the saga", () => {
  let rig: CrashRig;
  const checkouts = new Map<string, CheckoutForPayment>();
  const bought = new Map<string, { c: CheckoutForPayment; b: PrivateKeyAccount; scheduleId: string; nonce: string }>();
  let series: SeriesCharges;

  beforeAll(async () => {
    rig = await openCrashRig(FACILITATOR_INDEX);
    const saga = liveSaga(rig.database.db, rig.live, { subjectSecret: SUBJECT_SECRET });
    const payments = new Payments({ db: rig.database.db, checkouts: async (id) => checkouts.get(id) as CheckoutForPayment, settlements: [saga] });
    series = new SeriesCharges({ db: rig.database.db, settlements: [saga] });
    // Every series is bought before the chain's clock moves to period 1's window.
    for (const failpoint of FAILPOINTS) {
      const c = liveCheckout({ schedule: { intervalDays: 1, periods: 2 } });
      checkouts.set(c.id, c);
      const b = privateKeyToAccount(generatePrivateKey());
      await rig.usdc.mint(b.address, 2n * SPLIT.total);
      const s = await preparedSeries(payments, c.id, "live", b);
      const r = await payments.submit(c.id, "live", s.header, { heldHeaders: s.held });
      bought.set(failpoint, { c, b, scheduleId: r.receipt.schedule_id!, nonce: s.prepared.schedule![0]!.authorization.nonce });
    }
    await rig.usdc.client.request({ method: "evm_increaseTime" as never, params: [toHex(86_400 + 10)] as never });
    await rig.usdc.client.request({ method: "evm_mine" as never, params: [] as never });
  }, 180_000);
  afterAll(() => rig?.close());

  const input = () => ({ databaseUrl: rig.postgres.url, schema: PAYMENTS_SCHEMA, chain: rig.chain, subjectSecret: SUBJECT_SECRET });

  it.each(FAILPOINTS)("killed at %s: recovered to one transfer, one receipt, one event", async (failpoint) => {
    const { c, b, scheduleId, nonce } = bought.get(failpoint)!;
    const killed = await runHeldChargeProcess({ ...input(), mode: "charge", scheduleId, period: 1 }, failpoint);
    expect(killed.signal).toBe("SIGKILL");
    // Asked meanwhile: the period is recorded, never charged twice.
    const meanwhile = await series.charge(scheduleId, 1);
    expect(["pending", "settled"]).toContain(meanwhile.outcome);
    const restarted = await runHeldChargeProcess({ ...input(), mode: "recover" });
    expect(restarted).toMatchObject({ code: 0, result: { recovered: true } });

    const rows = await rig.database.db.selectFrom("payments").selectAll().where("checkout_id", "=", c.id).orderBy("schedule_period").execute();
    expect(rows.map((r) => [r.schedule_period, r.status])).toEqual([
      [0, "settled"],
      [1, "settled"],
    ]);
    const period1 = rows[1]!;
    const transfers = await rig.usdc.client.getLogs({
      address: rig.devchain.usdc,
      event: AUTHORIZATION_USED,
      args: { authorizer: b.address, nonce: nonce as `0x${string}` },
      fromBlock: 0n,
    });
    expect(transfers).toHaveLength(1);
    expect(transfers[0]!.transactionHash).toBe(period1.tx_hash);
    expect(await rig.usdc.balance(b.address)).toBe(0n);
    expect(await rig.usdc.balance(c.payTo)).toBe(2n * SPLIT.providerAmount);
    const events = await rig.database.db.selectFrom("outbox").select("key").where("key", "=", period1.id).execute();
    expect(events).toHaveLength(1);
    expect(await series.charge(scheduleId, 1)).toMatchObject({ outcome: "settled", row: { id: period1.id } });
  });
});
