import type { Logger } from "@c402/logging";
import { cursorStore, transactionsStore, type EscrowDb } from "../store/escrow-store";
import type { EscrowBook } from "./escrow-book";

/** How far back the reader reads in one request (nodes cap eth_getLogs ranges). */
const MAX_LOG_RANGE = 2_000n;

export interface EscrowSweeperOptions {
  /** Between rounds (default 2 s). */
  intervalMs?: number;
  /** A transaction untouched this long is resumed (default 10 s: its request is still waiting on it before that). */
  resumeAfterMs?: number;
  /** The block the reader starts from when it has no cursor yet (default: the chain's head at first start). */
  startBlock?: bigint;
  logger?: Logger;
}

/**
 * The escrow service's background work, on every replica (each step is safe to run concurrently):
 * the contract-event reader (the chain's logs from a stored cursor, applied by the book, so any
 * wallet's transaction moves the state), the resumption of transactions a crash or a timeout left
 * unfinished, and the timed exits that are due (claimed FOR UPDATE SKIP LOCKED: acted on once).
 */
export class EscrowSweeper {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private readonly cursorName: string;

  constructor(
    private readonly db: EscrowDb,
    private readonly book: EscrowBook,
    private readonly opts: EscrowSweeperOptions = {},
  ) {
    this.cursorName = book.chain ? `escrow:${book.chain.network}:${book.chain.contract.toLowerCase()}` : "escrow:none";
  }

  start(): void {
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.round()
        .catch((err) => this.opts.logger?.warn({ err }, "escrow sweep round failed"))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.opts.intervalMs ?? 2_000);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One round: read the chain, resume, take due exits (test escrows first: they need no chain). */
  async round(): Promise<void> {
    await this.book.sweepTimedExits(true);
    if (!this.book.chain) return;
    await this.follow();
    await this.resumeUnfinished();
    await this.book.sweepTimedExits(false);
  }

  /** Applies the contract's logs from the cursor to the head; the cursor moves in the same commit as what its logs changed. */
  async follow(): Promise<number> {
    const chain = this.book.chain;
    if (!chain) return 0;
    const head = (await chain.head()).number;
    const stored = await cursorStore.get(this.db, this.cursorName);
    let cursor: bigint = stored ?? (this.opts.startBlock !== undefined ? this.opts.startBlock - 1n : head);
    if (stored === undefined) await cursorStore.set(this.db, this.cursorName, cursor);
    let moved = 0;
    while (cursor < head) {
      const from: bigint = cursor + 1n;
      const to: bigint = head - from >= MAX_LOG_RANGE ? from + MAX_LOG_RANGE - 1n : head;
      const logs = await chain.logs(from, to);
      moved += await this.book.applyLogs(logs, undefined, (trx) => cursorStore.set(trx, this.cursorName, to).then(() => undefined));
      cursor = to;
    }
    return moved;
  }

  async resumeUnfinished(): Promise<void> {
    const before = new Date(Date.now() - (this.opts.resumeAfterMs ?? 10_000));
    for (const tx of await transactionsStore.unfinished(this.db, before, 50)) {
      await this.book.resume(tx).catch((err) => this.opts.logger?.warn({ err, tx: tx.id }, "escrow transaction not resumed yet"));
    }
  }
}
