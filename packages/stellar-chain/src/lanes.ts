import type { Keypair } from "@stellar/stellar-sdk";

/**
 * One source account settlements are sent from, one at a time: Stellar takes
 * one pending transaction per source account, and a transaction's sequence
 * number must be the account's next. `sequence` is the account's current
 * sequence number as last known in this process; undefined until read from
 * the chain, and again after anything that leaves it in doubt.
 */
export interface Lane {
  readonly keypair: Keypair;
  sequence: bigint | undefined;
}

/**
 * Serialized submission per source account: each lane (the service's
 * account, or each channel account) carries one settlement at a time, from
 * building to a final status; settlements beyond the free lanes wait their
 * turn in arrival order. In-process only: two processes must not share a
 * lane's account (give each its own channel accounts).
 */
export class Lanes {
  private readonly free: Lane[];
  private readonly waiting: ((lane: Lane) => void)[] = [];

  constructor(keypairs: readonly Keypair[]) {
    if (keypairs.length === 0) throw new Error("at least one source account is needed");
    this.free = keypairs.map((keypair) => ({ keypair, sequence: undefined }));
  }

  /** Runs `work` on the first free lane, waiting for one when all are taken. */
  async run<T>(work: (lane: Lane) => Promise<T>): Promise<T> {
    const lane = this.free.shift() ?? (await new Promise<Lane>((resolve) => this.waiting.push(resolve)));
    try {
      return await work(lane);
    } finally {
      const next = this.waiting.shift();
      if (next) next(lane);
      else this.free.push(lane);
    }
  }
}
