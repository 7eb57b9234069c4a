import { migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { devchainSettlement, startDevchain, type RunningDevchain } from "@c402/devchain";
import { breakdown } from "@c402/money";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createLiveChain, paymentsMigrations } from "../src";
import type { LiveChain } from "../src/domain/settlement/live-evm";
import type { PaymentsDb } from "../src/store/payments-store";
import { devchainUsdc, liveCheckout, signedLivePayment } from "./support/devchain-payments";
import { liveSaga } from "./support/live-saga";

/**
 * G8 on real PostgreSQL (many connections, true parallelism): duplicates of
 * one payment presented at once on a single-shot checkout. Each insert races
 * the others on two unique indexes (the authorization, and "one sale per
 * single-shot checkout"); a duplicate must always get the one settlement,
 * never "already paid".
 */
describeWith("postgres")("concurrent duplicates of one live payment (PostgreSQL, devchain)", () => {
  let devchain: RunningDevchain;
  let postgres: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let db: PaymentsDb;
  let live: LiveChain;
  let usdc: ReturnType<typeof devchainUsdc>;

  beforeAll(async () => {
    devchain = await startDevchain({ port: 0 });
    postgres = await freshPostgresDatabase();
    const opened = openPostgres({ url: postgres.url, schema: "payments", maxConnections: 20 });
    database = opened;
    await migrate(opened, paymentsMigrations);
    db = opened.db as PaymentsDb;
    live = createLiveChain(devchainSettlement(devchain));
    usdc = devchainUsdc(devchain);
  }, 90_000);

  afterAll(async () => {
    await database?.close();
    await postgres?.drop();
    await devchain?.stop();
  });

  it("20 at once, 20 rounds: every duplicate gets the same settled payment; one row, one charge", async () => {
    const saga = liveSaga(db, live, { settleTimeoutMs: 10_000 });
    for (let round = 0; round < 20; round++) {
      const checkout = liveCheckout({ reusable: false });
      const buyer = privateKeyToAccount(generatePrivateKey());
      await usdc.mint(buyer.address, 1_000_000n);
      const { payload, requirement } = await signedLivePayment(live, checkout, buyer);
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () =>
          saga.submit(checkout, payload, requirement).then(
            (o) => ({ kind: o.kind, id: o.row.id }),
            (e: unknown) => ({ kind: "refused", id: String(e) }),
          ),
        ),
      );
      const rows = await db.selectFrom("payments").select(["id", "status"]).where("checkout_id", "=", checkout.id).execute();
      expect(rows).toEqual([{ id: expect.any(String), status: "settled" }]);
      expect(outcomes).toEqual(Array(20).fill({ kind: "settled", id: rows[0]!.id }));
      expect(await usdc.balance(buyer.address)).toBe(1_000_000n - breakdown(100_000n).total);
    }
  }, 120_000);

  it("a duplicate whose simulation sees the first one's transaction waiting in the node's pool gets that settlement, never a refusal", async () => {
    // Two replicas: B looked for a record before A claimed the payment, and simulates only once A's
    // transaction waits in the pool. The node runs the simulation against its pending block, where
    // the authorization is already used, while its logs do not show the settlement yet.
    const checkout = liveCheckout({ reusable: true });
    const buyer = privateKeyToAccount(generatePrivateKey());
    await usdc.mint(buyer.address, 1_000_000n);
    const { payload, requirement } = await signedLivePayment(live, checkout, buyer);
    let inPool!: () => void;
    const aWaitsInPool = new Promise<void>((resolve) => (inPool = resolve));
    const slowChain = Object.create(live.chain) as LiveChain["chain"];
    slowChain.simulateSettle = async (...args) => {
      await aWaitsInPool;
      return live.chain.simulateSettle(...args);
    };
    const replicaA = liveSaga(db, live, { settleTimeoutMs: 10_000 });
    const replicaB = liveSaga(db, { ...live, chain: slowChain }, { settleTimeoutMs: 10_000 });
    await devchainRpc(devchain, "evm_setAutomine", [false]);
    try {
      const second = replicaB.submit(checkout, payload, requirement);
      const first = replicaA.submit(checkout, payload, requirement);
      const txHash = await until(async () => {
        const row = await db.selectFrom("payments").select("tx_hash").where("checkout_id", "=", checkout.id).executeTakeFirst();
        if (!row?.tx_hash) return undefined;
        return (await devchainRpc(devchain, "eth_getTransactionByHash", [row.tx_hash])) ? row.tx_hash : undefined;
      });
      inPool();
      // B has simulated against the pending block before anything is mined.
      await new Promise((r) => setTimeout(r, 500));
      await devchainRpc(devchain, "evm_mine", []);
      const outcomes = await Promise.allSettled([first, second]);
      expect(outcomes.map((o) => (o.status === "fulfilled" ? { kind: o.value.kind, tx: o.value.row.tx_hash } : String(o.reason)))).toEqual([
        { kind: "settled", tx: txHash },
        { kind: "settled", tx: txHash },
      ]);
    } finally {
      await devchainRpc(devchain, "evm_setAutomine", [true]);
    }
    expect(await db.selectFrom("payments").select("status").where("checkout_id", "=", checkout.id).execute()).toEqual([{ status: "settled" }]);
    expect(await usdc.balance(buyer.address)).toBe(1_000_000n - breakdown(100_000n).total);
  }, 60_000);

  it("a different payment for a single-shot checkout sold meanwhile is refused as already paid, and charges nothing", async () => {
    const saga = liveSaga(db, live, { settleTimeoutMs: 10_000 });
    const checkout = liveCheckout({ reusable: false });
    const [first, second] = [privateKeyToAccount(generatePrivateKey()), privateKeyToAccount(generatePrivateKey())];
    await usdc.mint(first.address, 1_000_000n);
    await usdc.mint(second.address, 1_000_000n);
    const a = await signedLivePayment(live, checkout, first);
    const b = await signedLivePayment(live, checkout, second);
    const outcomes = await Promise.allSettled([saga.submit(checkout, a.payload, a.requirement), saga.submit(checkout, b.payload, b.requirement)]);
    const settled = outcomes.filter((o) => o.status === "fulfilled");
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(settled).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.reason).toMatchObject({ slug: "gone" });
    expect(await db.selectFrom("payments").select("status").where("checkout_id", "=", checkout.id).execute()).toEqual([{ status: "settled" }]);
    const balances = new Set([await usdc.balance(first.address), await usdc.balance(second.address)]);
    expect(balances).toEqual(new Set([1_000_000n - breakdown(100_000n).total, 1_000_000n]));
  }, 60_000);
});

/** A raw JSON-RPC call to the devchain (its test-only methods, such as pausing automine). */
async function devchainRpc(chain: RunningDevchain, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(chain.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Polls `probe` until it answers something (10 s at most). */
async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}
