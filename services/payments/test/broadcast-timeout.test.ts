import { breakdown } from "@c402/money";
import { ProblemError } from "@c402/problems";
import type { AnswerFault, RpcFaultProxy } from "@c402/testkit";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { LiveChain } from "../src/domain/settlement/live-evm";
import type { SettlementOutcome } from "../src/domain/settlement/settlement";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { liveCheckout, openProxiedSagaFixture, signedLivePayment } from "./support/devchain-payments";
import { liveSaga } from "./support/live-saga";

/**
 * G7: the chain's answers are lost after the settlement was broadcast (a TCP
 * fault proxy between the service and the node drops or withholds them). The
 * buyer is simulated as the target says: it re-signs a fresh payment on any
 * 402. Every run: no 402 while the outcome is unknown, "pending" with the
 * transaction hash instead, and once the network heals the same payment
 * settles, charged exactly once. C402_G7_RUNS sets the runs per fault (500
 * for the nightly form).
 */
const RUNS = Number(process.env.C402_G7_RUNS ?? 10);
const SETTLE_TIMEOUT_MS = 300;

describe("G7: answers lost after broadcast never re-prompt the buyer", () => {
  let fixture: Awaited<ReturnType<typeof openProxiedSagaFixture>>;
  let proxy: RpcFaultProxy;
  let live: LiveChain;

  beforeAll(async () => {
    fixture = await openProxiedSagaFixture(250);
    ({ proxy, live } = fixture);
  }, 120_000);
  afterAll(() => fixture?.close());

  const saga = () => liveSaga(fixture.database.db, live, { settleTimeoutMs: SETTLE_TIMEOUT_MS });

  /** The buyer: presents its payment; on a 402 it signs a fresh one (a second charge, if it ever happened). */
  async function present(
    c: CheckoutForPayment,
    buyer: PrivateKeyAccount,
    state: { payment?: Awaited<ReturnType<typeof signedLivePayment>>; prompts: number },
  ): Promise<SettlementOutcome> {
    for (;;) {
      state.payment ??= await signedLivePayment(live, c, buyer);
      try {
        return await saga().submit(c, state.payment.payload, state.payment.requirement);
      } catch (err) {
        if (!(err instanceof ProblemError) || err.slug !== "payment-required") throw err;
        state.prompts++;
        if (state.prompts > 3) throw err;
        state.payment = undefined;
      }
    }
  }

  it.each<AnswerFault>(["reset", "silence"])(
    `lost answers (%s) after broadcast: pending with the hash, never a 402; settles once when healed (${RUNS} runs)`,
    async (fault) => {
      const price = breakdown(100_000n);
      for (let run = 0; run < RUNS; run++) {
        const c = liveCheckout();
        const buyer = privateKeyToAccount(generatePrivateKey());
        await fixture.usdc.mint(buyer.address, 1_000_000n);
        const state: { payment?: Awaited<ReturnType<typeof signedLivePayment>>; prompts: number } = { prompts: 0 };

        proxy.loseAnswersAfterBroadcast(fault);
        const lostBefore = proxy.counts.lost;
        const first = await present(c, buyer, state);
        expect(proxy.counts.lost).toBeGreaterThan(lostBefore);
        expect(first).toMatchObject({ kind: "pending", row: { tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) } });
        // Asking again while the answers are still lost: the same pending payment, not a prompt to pay.
        const again = await present(c, buyer, state);
        expect(again).toMatchObject({ kind: "pending", row: { id: first.row.id, tx_hash: first.row.tx_hash } });

        proxy.heal();
        const settled = await present(c, buyer, state);
        expect(settled).toMatchObject({ kind: "settled", row: { id: first.row.id, status: "settled" } });
        expect(state.prompts).toBe(0);
        expect(await fixture.usdc.balance(buyer.address)).toBe(1_000_000n - price.total);
        expect(await fixture.usdc.balance(c.payTo)).toBe(price.providerAmount);
        const rows = await fixture.database.db.selectFrom("payments").select("id").where("checkout_id", "=", c.id).execute();
        expect(rows).toHaveLength(1);
      }
    },
    300_000,
  );
});
