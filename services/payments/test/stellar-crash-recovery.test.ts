import { resolve } from "node:path";
import type { FailpointName } from "@c402/failpoints";
import { payerAuthEntry } from "@c402/stellar-chain";
import { describeWith } from "@c402/testkit";
import { paymentsStore } from "../src/store/payments-store";
import { onePaymentInput, paymentRecords, runOnePayment, sweepUntilConcluded } from "./support/rail-saga";
import { officialStellarPayment, openStellarRig, stellarSale, type StellarRig } from "./support/stellar-saga";

/**
 * G6–G8 and G11 on the Stellar rail, with a real kill -9: each payment is
 * submitted by a payments process of its own (fixtures/stellar-saga-process.ts)
 * on PostgreSQL and the Soroban RPC stand-in, which SIGKILLs itself at one
 * step of the saga; the sweep of a fresh settlement (this process's) then
 * recovers it. The stand-in runs in this process, so its ledger outlives the
 * killed one. After every run the ledger and the database agree: one
 * transfer (the buyer's and the seller's balances moved by the price once),
 * one transaction from the service's account (never a second submission),
 * one settled row, one outbox event, and the payment presented again
 * redelivers the same receipt.
 */
const STELLAR_FAILPOINTS: FailpointName[] = ["after-claim", "after-sign", "after-broadcast", "after-receipt", "after-ledger-commit"];
const DRIVER = resolve(__dirname, "fixtures/stellar-saga-process.ts");
const PRICE = 250_000n;
/** The price in the token's 7 decimals. */
const UNITS = 2_500_000n;
const BUYER_USDC = 10_000_000n;

describeWith("postgres")(
  "Stellar saga: kill -9 at every step, a landed failure, an expired authorization, a taken sequence number (PostgreSQL, stand-in)",
  () => {
    let rig: StellarRig;

    beforeAll(async () => {
      rig = await openStellarRig("stellar-crash-secret");
    }, 60_000);

    afterAll(async () => {
      await rig?.close();
    });

    const rowsOf = (checkoutId: string) => paymentRecords(rig.database).rowsOf(checkoutId);
    const outboxEventsOf = (paymentId: string) => paymentRecords(rig.database).outboxEventsOf(paymentId);
    const recover = (checkoutId: string) => sweepUntilConcluded(rig.saga, rig.database, checkoutId);

    /** A single-shot sale, the official client's payment for it, and the ledger as it stood before. */
    async function signedSale() {
      const sale = stellarSale(rig, { priceAtomic: PRICE, reusable: false }, BUYER_USDC);
      const payload = await officialStellarPayment(rig, sale.buyer, sale.requirement);
      return {
        ...sale,
        payment: { requirement: sale.requirement, payload },
        transfersBefore: rig.standin.transfers().length,
        sequenceBefore: rig.standin.sequenceNumber(rig.service)!,
      };
    }
    type SignedSale = Awaited<ReturnType<typeof signedSale>>;

    const killedAt = (sale: SignedSale, failpoint: FailpointName) => runOnePayment(DRIVER, onePaymentInput(rig.config, sale.checkout, sale.payment), failpoint);
    const present = (sale: SignedSale) => rig.saga.submit(sale.checkout, sale.payment.payload, sale.requirement);

    /** What the sale left on the ledger: its transfers, the buyer's and seller's USDC, how many transactions the service's account sent. */
    function ledgerOf(sale: SignedSale) {
      return {
        transfers: rig.standin.transfers().slice(sale.transfersBefore),
        buyer: rig.standin.usdcBalance(sale.buyer.publicKey()),
        seller: rig.standin.usdcBalance(sale.seller.publicKey()),
        serviceTransactions: rig.standin.sequenceNumber(rig.service)! - sale.sequenceBefore,
      };
    }

    /** Nothing moved and the one transaction the service sent (if any) is all it sent: a resend would land now. */
    function nothingCharged(sale: SignedSale, serviceTransactions: bigint) {
      rig.standin.closeLedger();
      expect(ledgerOf(sale)).toEqual({ transfers: [], buyer: BUYER_USDC, seller: 0n, serviceTransactions });
    }

    it.each(STELLAR_FAILPOINTS)(
      "killed %s: recovered to one transfer, one settled row, one event; presented again, the same receipt",
      async (failpoint) => {
        const sale = await signedSale();
        const exit = await killedAt(sale, failpoint);
        expect({ signal: exit.signal, reachedFailpoint: exit.reachedFailpoint, outcome: exit.outcome }).toEqual({
          signal: "SIGKILL",
          reachedFailpoint: true,
          outcome: undefined,
        });

        expect((await recover(sale.checkout.id)).status).toBe("settled");
        const rows = await rowsOf(sale.checkout.id);
        expect(rows).toMatchObject([{ status: "settled", tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
        const row = rows[0]!;
        const settled = {
          transfers: [expect.objectContaining({ from: sale.buyer.publicKey(), to: sale.seller.publicKey(), amount: UNITS, hash: row.tx_hash })],
          buyer: BUYER_USDC - UNITS,
          seller: UNITS,
          serviceTransactions: 1n,
        };
        expect(ledgerOf(sale)).toEqual(settled);
        expect(await outboxEventsOf(row.id)).toBe(1);

        const again = await present(sale);
        expect(again).toMatchObject({ kind: "settled", redelivered: true, row: { id: row.id, tx_hash: row.tx_hash, status: "settled" } });
        rig.standin.closeLedger();
        expect(ledgerOf(sale)).toEqual(settled);
        expect(await rowsOf(sale.checkout.id)).toHaveLength(1);
        expect(await outboxEventsOf(row.id)).toBe(1);
      },
      90_000,
    );

    it("lands and fails on the network, killed after-broadcast: the sweep finds the failure (failed, nothing charged, no receipt, no event) and never sends it again", async () => {
      const sale = await signedSale();
      // The settlement's call traps when it applies: the fee is taken, nothing moves, the buyer's authorization stays unused.
      rig.standin.failNextTransaction(rig.service);
      const exit = await killedAt(sale, "after-broadcast");
      expect({ signal: exit.signal, reachedFailpoint: exit.reachedFailpoint }).toEqual({ signal: "SIGKILL", reachedFailpoint: true });

      expect((await recover(sale.checkout.id)).status).toBe("failed");
      const rows = await rowsOf(sale.checkout.id);
      expect(rows).toMatchObject([{ status: "failed", failure_reason: "settlement_failed", tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
      const row = rows[0]!;
      const recorded = await paymentsStore.findById(rig.database.db, row.id);
      expect(await rig.chain.status(recorded!.raw_tx!)).toMatchObject({ state: "failed", error: expect.stringMatching(/txFailed/) });
      expect(await outboxEventsOf(row.id)).toBe(0);
      // The authorization is still good: a resend, or a new transaction carrying it, would move the money now.
      await rig.saga.sweep(0);
      nothingCharged(sale, 1n);

      await expect(present(sale)).rejects.toMatchObject({
        extensions: { reason: "settlement_failed", settlement: { transaction: row.tx_hash, network: rig.standin.network, payer: sale.buyer.publicKey() } },
      });
      await rig.saga.sweep(0);
      nothingCharged(sale, 1n);
      expect(await rowsOf(sale.checkout.id)).toMatchObject([{ status: "failed", tx_hash: row.tx_hash }]);
      expect(await outboxEventsOf(row.id)).toBe(0);
    }, 90_000);

    it("killed after signing, its authorization expired before the restart: failed, nothing charged, never sent", async () => {
      const sale = await signedSale();
      const exit = await killedAt(sale, "after-sign");
      expect({ signal: exit.signal, reachedFailpoint: exit.reachedFailpoint }).toEqual({ signal: "SIGKILL", reachedFailpoint: true });
      // The ledgers close past the authorization's last one (the transaction's own bounds end there too).
      const transaction = (sale.payment.payload.payload as { transaction: string }).transaction;
      const expiration = payerAuthEntry(rig.chain.decode(transaction))!.signatureExpirationLedger!;
      while (rig.standin.latestLedger() <= expiration) rig.standin.closeLedger();

      expect((await recover(sale.checkout.id)).status).toBe("failed");
      expect(await rowsOf(sale.checkout.id)).toMatchObject([{ status: "failed", failure_reason: "settle_exact_stellar_transaction_expired" }]);
      nothingCharged(sale, 0n);
      await expect(present(sale)).rejects.toMatchObject({ extensions: { reason: "settlement_failed" } });
      nothingCharged(sale, 0n);
    }, 90_000);

    it("killed after signing, its sequence number taken by another settlement before the restart: replaced while the authorization holds, one transfer", async () => {
      const sale = await signedSale();
      const exit = await killedAt(sale, "after-sign");
      expect({ signal: exit.signal, reachedFailpoint: exit.reachedFailpoint }).toEqual({ signal: "SIGKILL", reachedFailpoint: true });
      const [killed] = await rowsOf(sale.checkout.id);
      const stored = await paymentsStore.findById(rig.database.db, killed!.id);
      expect(stored).toMatchObject({ status: "settling", tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });

      // Another sale settles from the service's account first: it takes the number the recorded transaction was signed with.
      const other = await signedSale();
      await expect(present(other)).resolves.toMatchObject({ kind: "settled" });
      expect(await rig.chain.status(stored!.raw_tx!)).toMatchObject({ state: "unseen", canStillLand: false });

      expect((await recover(sale.checkout.id)).status).toBe("settled");
      const [row] = await rowsOf(sale.checkout.id);
      expect(row!.tx_hash).not.toBe(stored!.tx_hash);
      rig.standin.closeLedger();
      expect(ledgerOf(sale)).toEqual({
        transfers: [
          expect.objectContaining({ from: other.buyer.publicKey(), to: other.seller.publicKey(), amount: UNITS }),
          expect.objectContaining({ from: sale.buyer.publicKey(), to: sale.seller.publicKey(), amount: UNITS, hash: row!.tx_hash }),
        ],
        buyer: BUYER_USDC - UNITS,
        seller: UNITS,
        // The other sale's and the replacement: the recorded transaction never landed.
        serviceTransactions: 2n,
      });
      expect(await outboxEventsOf(row!.id)).toBe(1);
      await expect(present(sale)).resolves.toMatchObject({ kind: "settled", redelivered: true, row: { id: row!.id, tx_hash: row!.tx_hash } });
    }, 90_000);
  },
);
