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

interface Waiter {
  /** Only this account's lane will do (a stored transaction followed on the lane it was built on). */
  account?: string;
  take: (lane: Lane) => void;
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
  private readonly accounts: ReadonlySet<string>;
  private readonly waiting: Waiter[] = [];

  constructor(keypairs: readonly Keypair[]) {
    if (keypairs.length === 0) throw new Error("at least one source account is needed");
    this.free = keypairs.map((keypair) => ({ keypair, sequence: undefined }));
    this.accounts = new Set(keypairs.map((k) => k.publicKey()));
  }

  /** Whether `account` is one of the lanes'. */
  has(account: string): boolean {
    return this.accounts.has(account);
  }

  /**
   * Runs `work` on the first free lane (or on `account`'s lane only), waiting
   * for one when they are taken.
   */
  async run<T>(work: (lane: Lane) => Promise<T>, account?: string): Promise<T> {
    if (account !== undefined && !this.has(account)) throw new Error(`${account} is not one of the source accounts`);
    const at = this.free.findIndex((lane) => account === undefined || lane.keypair.publicKey() === account);
    const lane = at >= 0 ? this.free.splice(at, 1)[0]! : await new Promise<Lane>((take) => this.waiting.push({ ...(account ? { account } : {}), take }));
    try {
      return await work(lane);
    } finally {
      this.release(lane);
    }
  }

  private release(lane: Lane): void {
    const at = this.waiting.findIndex((w) => w.account === undefined || w.account === lane.keypair.publicKey());
    if (at < 0) {
      this.free.push(lane);
      return;
    }
    this.waiting.splice(at, 1)[0]!.take(lane);
  }
}
