import { recordSigned } from "@c402/sender-nonces";
import { MOST_SETTLEMENT_GAS, type Settlement } from "@c402/evm-chain";
import { failpoint } from "@c402/failpoints";
import type { Hex } from "viem";
import { paymentsStore as store, type PaymentRow, type PaymentStatus, type PaymentsDb } from "../../store/payments-store";
import type { LiveChain } from "./live-evm";

/** The most payments one transaction settles (its gas is bounded apart: MOST_SETTLEMENT_GAS). */
export const MOST_PAYMENTS_PER_TRANSACTION = 32;
/** How long, by default, a transaction about to be signed may wait for payments on their way to it (see `arriving`). */
export const GATHER_MS = 15;

/** A payment's place in a settlement transaction. */
export interface BatchedSettlement {
  /** The payment as recorded `settling`, with the transaction's hash and bytes; undefined when another step moved it on first. */
  settling?: PaymentRow;
  /** Settles once the transaction was sent; rejects when sending failed (then whether it reached the chain is unknown). */
  sent: Promise<void>;
}

interface Waiting {
  row: PaymentRow;
  settlement: Settlement;
  alone: boolean;
  resolve: (batched: BatchedSettlement) => void;
  reject: (err: unknown) => void;
}

/**
 * The settlement transactions of one live chain. The payments that become
 * ready while one transaction is being signed and sent go out together in the
 * next (the split factory's `settleEach`), so under load many payments cost one
 * transaction, one nonce, one broadcast and one receipt. A transaction about
 * to be signed waits, at most `gatherMs`, for the payments already on their way
 * to it (verified, being checked against the chain and recorded); a payment
 * with none behind it goes out at once.
 *
 * Each transaction is recorded before it is sent, as every settlement step is
 * (ADR 8): the payments it settles move to `settling` with its hash and bytes,
 * and its nonce is counted, in one commit. Each payment then settles or fails
 * on its own on the chain, and is concluded from the receipt on its own.
 */
export class SettlementBatches {
  private readonly waiting: Waiting[] = [];
  private running = false;
  /** Payments on their way to `settle` (see `arriving`). */
  private onTheirWay = 0;
  /** Wakes a transaction gathering its payments. */
  private wake?: () => void;

  constructor(
    private readonly db: PaymentsDb,
    private readonly live: LiveChain,
    /** The states a payment may be signed from. */
    private readonly settleable: PaymentStatus[],
    private readonly gatherMs = GATHER_MS,
  ) {}

  /**
   * Puts the payment in the next transaction (`alone`: in one of its own) and
   * answers once that transaction is recorded. Rejects when nothing could be
   * signed or recorded for it (the chain or the database failed).
   */
  settle(row: PaymentRow, settlement: Settlement, alone = false): Promise<BatchedSettlement> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ row, settlement, alone, resolve, reject });
      if (!this.running) void this.run();
      this.wake?.();
    });
  }

  /**
   * Counts a payment on its way to `settle`; the answer, called once it has
   * called `settle` (or given up), stops counting it. Calling it again does
   * nothing.
   */
  arriving(): () => void {
    this.onTheirWay++;
    let counted = true;
    return () => {
      if (!counted) return;
      counted = false;
      this.onTheirWay--;
      this.wake?.();
    };
  }

  /** Waits, at most `gatherMs`, until no payment is on its way or the next transaction is full. */
  private async gather(): Promise<void> {
    if (this.onTheirWay === 0 || this.waiting[0]?.alone) return;
    const until = Date.now() + this.gatherMs;
    while (this.onTheirWay > 0 && this.waiting.length < MOST_PAYMENTS_PER_TRANSACTION && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, until - Date.now());
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) await this.sendNext();
    } catch (err) {
      // Never expected (sendNext answers its failures to its payments); no payment is left waiting on a loop that stopped.
      for (const w of this.waiting.splice(0)) w.reject(err);
    } finally {
      this.running = false;
    }
  }

  /** The next transaction's payments: the first alone, or those waiting together in front, as many as its gas allows. */
  private takeNext(): Waiting[] {
    if (this.waiting[0]?.alone) return this.waiting.splice(0, 1);
    const together = this.waiting.findIndex((w) => w.alone);
    let count = Math.min(together === -1 ? this.waiting.length : together, MOST_PAYMENTS_PER_TRANSACTION);
    // Nearly always within the cap at once; only many splits not yet deployed need fewer payments.
    while (count > 1 && this.live.chain.settlementGas(this.waiting.slice(0, count).map((w) => w.settlement)) > MOST_SETTLEMENT_GAS) count--;
    return this.waiting.splice(0, count);
  }

  private async sendNext(): Promise<void> {
    await this.gather();
    const batch = this.takeNext();
    let movedOn = new Set<string>();
    let recorded: { rows: PaymentRow[]; raw: Hex } | undefined;
    try {
      recorded = await this.live.chain.signSettlementsReserved(
        batch.map((w) => w.settlement),
        (key, sign) =>
          recordSigned(this.db, key, sign, async (trx, signed) => {
            const rows = await store.advanceEach(
              trx,
              batch.map((w) => w.row.id),
              this.settleable,
              { status: "settling", tx_hash: signed.txHash, raw_tx: signed.raw },
            );
            if (rows.length === batch.length) return { rows, raw: signed.raw };
            // Another step moved some on (a sweep, a duplicate): roll back, and sign again without them.
            const advanced = new Set(rows.map((r) => r.id));
            movedOn = new Set(batch.filter((w) => !advanced.has(w.row.id)).map((w) => w.row.id));
            return undefined;
          }),
      );
    } catch (err) {
      // Nothing was signed: each is tried alone, so that only what fails on its own fails.
      if (batch.length > 1) this.waiting.unshift(...batch.map((w) => ({ ...w, alone: true })));
      else batch[0]?.reject(err);
      return;
    }
    if (!recorded) {
      const noTransaction = Promise.resolve();
      for (const w of batch) if (movedOn.has(w.row.id)) w.resolve({ sent: noTransaction });
      this.waiting.unshift(...batch.filter((w) => !movedOn.has(w.row.id)));
      return;
    }
    failpoint("after-sign");
    const sent = this.live.chain.broadcast(recorded.raw);
    const settling = new Map(recorded.rows.map((row) => [row.id, row]));
    for (const w of batch) w.resolve({ settling: settling.get(w.row.id), sent });
    // The next transaction gathers what became ready while this one was sent.
    await sent.then(
      () => failpoint("after-broadcast"),
      () => undefined,
    );
  }
}
