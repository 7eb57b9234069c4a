import type { RunningDevchain } from "@c402/devchain";
import { describeWith } from "@c402/testkit";
import { recordSigned } from "@c402/sender-nonces";
import { parseTransaction, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createLiveChain } from "../src";
import type { PaymentsDb } from "../src/store/payments-store";
import { liveCheckout, openCrashRig, signedLivePayment, type CrashRig } from "./support/devchain-payments";
import { liveSaga } from "./support/live-saga";

/**
 * Replicas of payments sign with one facilitator key (ADR 11): each has a
 * chain adapter of its own (so a nonce queue of its own), and before the
 * shared count two replicas handed out the same nonce. Here two "replicas"
 * settle distinct payments at once on real PostgreSQL and the devchain.
 */
/** The demo account both replicas sign with (a devchain of this suite's own). */
const FACILITATOR_INDEX = 6;

describeWith("postgres")("replicas sharing the facilitator key (PostgreSQL, devchain)", () => {
  let rig: CrashRig;
  let devchain: RunningDevchain;
  let db: PaymentsDb;

  beforeAll(async () => {
    rig = await openCrashRig(FACILITATOR_INDEX);
    devchain = rig.devchain;
    db = rig.database.db as PaymentsDb;
  }, 90_000);

  afterAll(async () => {
    await rig?.close();
  });

  it("30 payments at once through two replicas: every one settles, in transactions on distinct consecutive nonces", async () => {
    const replicas = [createLiveChain(rig.chain), createLiveChain(rig.chain)];
    const usdc = rig.usdc;
    const facilitator = replicas[0]!.chain.facilitator.address;
    const sagas = replicas.map((live) => liveSaga(db, live, { settleTimeoutMs: 20_000 }));
    const payments = [];
    for (let i = 0; i < 30; i++) {
      const checkout = liveCheckout({ reusable: true });
      const buyer = privateKeyToAccount(generatePrivateKey());
      await usdc.mint(buyer.address, 1_000_000n); // one at a time: the minter has one nonce queue
      payments.push({ checkout, ...(await signedLivePayment(replicas[i % 2]!, checkout, buyer)) });
    }
    const startNonce = await devchainCount(devchain, facilitator);
    const outcomes = await Promise.all(payments.map((p, i) => sagas[i % 2]!.submit(p.checkout, p.payload, p.requirement)));
    expect(outcomes.map((o) => o.kind)).toEqual(Array(30).fill("settled"));
    const rows = await db.selectFrom("payments").select(["status", "raw_tx"]).execute();
    // Payments ready together share a transaction (SettlementBatches): one nonce per transaction.
    const transactions = [...new Set(rows.map((r) => r.raw_tx as Hex))];
    expect(transactions.length).toBeLessThan(30);
    const nonces = transactions.map((raw) => Number(parseTransaction(raw).nonce)).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: transactions.length }, (_, i) => startNonce + i));
    expect(await devchainCount(devchain, facilitator)).toBe(startNonce + transactions.length);
    const counted = await db.selectFrom("sender_nonces").select(["address", "next_nonce"]).execute();
    expect(counted).toEqual([{ address: facilitator.toLowerCase(), next_nonce: BigInt(startNonce + transactions.length) }]);
  }, 120_000);

  it("a payment another step moved on meanwhile counts no nonce: the next signature reuses it", async () => {
    const live = createLiveChain(rig.chain);
    const key = { chainId: live.chain.chainId, address: live.chain.facilitator.address, behind: false, chainCount: async () => 0 };
    const before = await db.selectFrom("sender_nonces").select("next_nonce").executeTakeFirstOrThrow();
    const signedWith: number[] = [];
    const nothing = await recordSigned(
      db,
      key,
      async (nonce) => signedWith.push(nonce),
      async () => undefined,
    );
    expect(nothing).toBeUndefined();
    const recorded = await recordSigned(
      db,
      key,
      async (nonce) => signedWith.push(nonce),
      async () => "recorded",
    );
    expect(recorded).toBe("recorded");
    expect(signedWith).toEqual([Number(before.next_nonce), Number(before.next_nonce)]);
    expect((await db.selectFrom("sender_nonces").select("next_nonce").executeTakeFirstOrThrow()).next_nonce).toBe(before.next_nonce + 1n);
  });

  it("a key the chain has moved past (used elsewhere) starts again from the chain's count, never below what is counted", async () => {
    const live = createLiveChain(rig.chain);
    const counted = (await db.selectFrom("sender_nonces").select("next_nonce").executeTakeFirstOrThrow()).next_nonce;
    const key = (behind: boolean, chain: number) => ({
      chainId: live.chain.chainId,
      address: live.chain.facilitator.address,
      behind,
      chainCount: async () => chain,
    });
    const take = (behind: boolean, chain: number) =>
      recordSigned(
        db,
        key(behind, chain),
        async (nonce) => nonce,
        async (_trx, nonce) => nonce,
      );
    expect(await take(true, Number(counted) + 5)).toBe(Number(counted) + 5);
    expect(await take(true, 0)).toBe(Number(counted) + 6);
    expect(await take(false, 1_000)).toBe(Number(counted) + 7);
  });
});

async function devchainCount(chain: RunningDevchain, address: string): Promise<number> {
  const res = await fetch(chain.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionCount", params: [address, "pending"] }),
  });
  return Number(((await res.json()) as { result: string }).result);
}
