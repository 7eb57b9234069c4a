import type { ServiceDatabase } from "@c402/db";
import { describeWith } from "@c402/testkit";
import fc from "fast-check";
import { PostgresSpendBudget, SpendStateError } from "../src/domain/spend-budget";
import { WalletEventLog } from "../src/domain/wallet-event-log";
import { limitsStore, type SpendingWalletsDb } from "../src/store/wallet-store";
import { seedWallet } from "./support/seed-wallet";
import { walletDatabase } from "./support/wallet-db";

const USD = 1_000_000n;
const payment = (amount: bigint, extra: { maxAtomic?: bigint; idempotencyKey?: string } = {}) => ({
  amount,
  url: "https://seller.example/article",
  network: "eip155:84532",
  payTo: "0x000000000000000000000000000000000000dEaD",
  actor: "key:sk_live_abcd",
  ...extra,
});

describeWith("postgres")("the spend budget", () => {
  let env: Awaited<ReturnType<typeof walletDatabase>>;
  let db: SpendingWalletsDb;
  let now = new Date("2030-03-01T12:00:00Z");
  let budget: PostgresSpendBudget;

  beforeAll(async () => {
    env = await walletDatabase();
    db = env.db;
    budget = new PostgresSpendBudget(db, new WalletEventLog(db), () => now);
  });
  afterAll(() => env.close());

  const spendsOf = (accountId: string) => db.selectFrom("spends").selectAll().where("account_id", "=", accountId).orderBy("created_at").execute();

  it("reserves under the default limits and refuses naming the binding limit, with the ceiling", async () => {
    const { wallet } = await seedWallet(db);
    expect(await budget.reserve(wallet, payment(2n * USD))).toEqual({ refused: "over_per_payment_limit", ceiling: USD });
    expect(await budget.reserve(wallet, payment(USD / 2n, { maxAtomic: USD / 4n }))).toEqual({ refused: "over_max_usd", ceiling: USD / 4n });
    for (let i = 0; i < 10; i++) expect(await budget.reserve(wallet, payment(USD))).toMatchObject({ reserved: { amount: USD } });
    expect(await budget.reserve(wallet, payment(1n))).toEqual({ refused: "over_daily_limit", ceiling: 0n });
    expect((await spendsOf(wallet.accountId)).every((s) => s.status === "reserved")).toBe(true);
  });

  it("counts confirmed, reserved and unknown spends against the UTC day, not released ones, and a new UTC day starts afresh", async () => {
    const { wallet } = await seedWallet(db);
    await limitsStore.set(db, wallet.accountId, "base", 3n * USD, 3n * USD, now);
    const r = [];
    for (let i = 0; i < 3; i++) {
      const answer = await budget.reserve(wallet, payment(USD));
      if (!("reserved" in answer)) throw new Error("expected a reservation");
      r.push(answer.reserved.spendId);
    }
    await budget.confirm(r[0] as string, { transaction: "0xaa" });
    await budget.leaveReserved(r[1] as string, "no answer from the seller");
    await budget.release(r[2] as string, "the seller refused the payment");
    expect(await budget.reserve(wallet, payment(2n * USD))).toEqual({ refused: "over_daily_limit", ceiling: USD });
    expect(await budget.reserve(wallet, payment(USD))).toMatchObject({ reserved: { amount: USD } });
    const before = now;
    now = new Date("2030-03-02T00:00:00.000Z");
    try {
      expect(await budget.reserve(wallet, payment(3n * USD))).toMatchObject({ reserved: { amount: 3n * USD } });
    } finally {
      now = before;
    }
  });

  it("answers the first reservation again for the same idempotency key, with its outcome, never a second one", async () => {
    const { wallet } = await seedWallet(db);
    const first = await budget.reserve(wallet, payment(USD / 2n, { idempotencyKey: "order-1" }));
    if (!("reserved" in first)) throw new Error("expected a reservation");
    expect(first.previous).toBeUndefined();
    await budget.confirm(first.reserved.spendId, { transaction: "0xbeef", receiptUrl: "https://pay.example/r/1" });
    const again = await budget.reserve(wallet, payment(USD / 2n, { idempotencyKey: "order-1" }));
    expect(again).toMatchObject({
      reserved: { spendId: first.reserved.spendId },
      previous: { status: "confirmed", transaction: "0xbeef", receiptUrl: "https://pay.example/r/1" },
    });
    const concurrent = await Promise.all([1, 2, 3].map(() => budget.reserve(wallet, payment(USD / 4n, { idempotencyKey: "order-2" }))));
    const ids = new Set(concurrent.map((a) => ("reserved" in a ? a.reserved.spendId : "refused")));
    expect(ids.size).toBe(1);
    expect(await spendsOf(wallet.accountId)).toHaveLength(2);
  });

  it("guards the transitions: confirmed and released are final; unknown may still be confirmed or released", async () => {
    const { wallet } = await seedWallet(db);
    const reserve = async () => {
      const a = await budget.reserve(wallet, payment(1n));
      if (!("reserved" in a)) throw new Error("expected a reservation");
      return a.reserved.spendId;
    };
    const confirmed = await reserve();
    await budget.confirm(confirmed, { transaction: "0x01" });
    await budget.confirm(confirmed, { transaction: "0x01" }); // the same answer again is a no-op
    await expect(budget.confirm(confirmed, { transaction: "0x02" })).rejects.toBeInstanceOf(SpendStateError);
    await expect(budget.release(confirmed, "late")).rejects.toBeInstanceOf(SpendStateError);
    await expect(budget.leaveReserved(confirmed, "late")).rejects.toBeInstanceOf(SpendStateError);
    const released = await reserve();
    await budget.release(released, "refused by the seller");
    await expect(budget.confirm(released, { transaction: "0x03" })).rejects.toBeInstanceOf(SpendStateError);
    const unknown = await reserve();
    await budget.leaveReserved(unknown, "timeout");
    await budget.confirm(unknown, { transaction: "0x04" });
    const unknownThenReleased = await reserve();
    await budget.leaveReserved(unknownThenReleased, "timeout");
    await budget.release(unknownThenReleased, "proved unpaid");
    const rows = await spendsOf(wallet.accountId);
    expect(rows.map((s) => s.status)).toEqual(["confirmed", "released", "confirmed", "released"]);
    // A confirmation is a `spent` event with its transaction.
    const spent = await db.selectFrom("wallet_events").selectAll().where("wallet_id", "=", wallet.id).where("kind", "=", "spent").execute();
    expect(spent.map((e) => e.transaction).sort()).toEqual(["0x01", "0x04"]);
  });

  /**
   * G26: two replicas (two SpendBudget instances over two pools of the same
   * database) run concurrent reserve → confirm | release | unknown | crash
   * sequences, randomly delayed; a monitor samples the day's total throughout.
   */
  describe("G26: limits hold under races and crashes", () => {
    let replicaB: ServiceDatabase;
    beforeAll(() => {
      replicaB = env.open();
    });

    const RUNS = Number(process.env.SPEND_BUDGET_RUNS ?? 50);
    const op = fc.record({
      replica: fc.integer({ min: 0, max: 1 }),
      amount: fc.bigInt({ min: 1n, max: 3n * USD }),
      maxAtomic: fc.option(fc.bigInt({ min: 1n, max: 3n * USD }), { nil: undefined }),
      end: fc.constantFrom("confirm", "release", "unknown", "crash"),
      delayMs: fc.integer({ min: 0, max: 8 }),
    });

    it(`never lets confirmed + reserved + unknown exceed the day, nor a spend its limits (${RUNS} runs)`, async () => {
      const budgets = [
        new PostgresSpendBudget(db, new WalletEventLog(db)),
        new PostgresSpendBudget(replicaB.db as SpendingWalletsDb, new WalletEventLog(replicaB.db as SpendingWalletsDb)),
      ];
      await fc.assert(
        fc.asyncProperty(
          fc.bigInt({ min: 1n, max: 2n * USD }),
          fc.bigInt({ min: 1n, max: 6n * USD }),
          fc.array(op, { minLength: 1, maxLength: 14 }),
          async (perPaymentRaw, perDay, ops) => {
            const perPayment = perPaymentRaw > perDay ? perDay : perPaymentRaw;
            const { wallet } = await seedWallet(db);
            await limitsStore.set(db, wallet.accountId, "base", perPayment, perDay, new Date());
            const counting = async () => {
              const rows = await db.selectFrom("spends").select(["amount", "status"]).where("account_id", "=", wallet.accountId).execute();
              return rows.filter((r) => r.status !== "released").reduce((sum, r) => sum + BigInt(r.amount), 0n);
            };
            let running = true;
            let peak = 0n;
            const monitor = (async () => {
              while (running) {
                const total = await counting();
                if (total > peak) peak = total;
              }
            })();
            const crashed: string[] = [];
            await Promise.all(
              ops.map(async (o) => {
                const b = budgets[o.replica] as PostgresSpendBudget;
                const answer = await b.reserve(wallet, payment(o.amount, o.maxAtomic !== undefined ? { maxAtomic: o.maxAtomic } : {}));
                if (!("reserved" in answer)) return;
                await new Promise((r) => setTimeout(r, o.delayMs));
                const other = budgets[1 - o.replica] as PostgresSpendBudget; // the outcome may be recorded by either replica
                if (o.end === "confirm") await other.confirm(answer.reserved.spendId, { transaction: `0x${answer.reserved.spendId}` });
                else if (o.end === "release") await other.release(answer.reserved.spendId, "refused");
                else if (o.end === "unknown") await b.leaveReserved(answer.reserved.spendId, "no answer");
                else crashed.push(answer.reserved.spendId); // a killed process: the reservation stays as it was
              }),
            );
            running = false;
            await monitor;
            const rows = await db.selectFrom("spends").selectAll().where("account_id", "=", wallet.accountId).execute();
            const total = await counting();
            expect(total).toBeLessThanOrEqual(perDay);
            expect(peak).toBeLessThanOrEqual(perDay);
            for (const row of rows) expect(BigInt(row.amount)).toBeLessThanOrEqual(perPayment);
            for (const id of crashed) expect(rows.find((r) => r.id === id)?.status).toBe("reserved");
          },
        ),
        { numRuns: RUNS },
      );
    }, 300_000);
  });
});
