import type {
  BalanceReader,
  BudgetRefusal,
  KeyVault,
  PayingWallet,
  PreviousSpend,
  SpendBudget,
  SpendReservation,
  WalletEvents,
} from "../../../src/domain/ports";

/**
 * In-memory stand-ins for the wallet book's ports, faithful to what ports.ts
 * documents (the PostgreSQL ones are the other engineer's). Every call is
 * appended to one shared journal so a test can assert the order of steps
 * (reserve before the key is opened, release after a refusal...).
 */
export type Journal = string[];

type SpendState = "reserved" | "confirmed" | "released" | "unknown";

export interface Spend {
  spendId: string;
  amount: bigint;
  state: SpendState;
  url: string;
  network: string;
  payTo: string;
  transaction?: string;
  receiptUrl?: string;
  reason?: string;
  at: Date;
}

/** The account's limits (atomic units). */
export interface Limits {
  perPayment: bigint;
  perDay: bigint;
}

/** The budget: ceiling = min(max, per-payment, what is left of the day counting confirmed and not-released spends). */
export class InMemoryBudget implements SpendBudget {
  readonly spends = new Map<string, Spend>();
  private readonly byKey = new Map<string, string>();
  private seq = 0;

  constructor(
    private readonly journal: Journal,
    public limits: Limits,
  ) {}

  /** What counts against the day: every spend not released. */
  spentToday(): bigint {
    let sum = 0n;
    for (const s of this.spends.values()) if (s.state !== "released") sum += s.amount;
    return sum;
  }

  async reserve(
    _wallet: PayingWallet,
    r: { amount: bigint; maxAtomic?: bigint; url: string; network: string; payTo: string; actor: string; idempotencyKey?: string },
  ): Promise<SpendReservation> {
    this.journal.push(`reserve ${r.amount}`);
    const earlier = r.idempotencyKey ? this.byKey.get(r.idempotencyKey) : undefined;
    if (earlier) {
      const first = this.spends.get(earlier) as Spend;
      return { reserved: { spendId: first.spendId, amount: first.amount }, previous: this.previousOf(first) };
    }
    const leftToday = this.limits.perDay - this.spentToday();
    const ceilings: [BudgetRefusal, bigint][] = [
      ["over_per_payment_limit", this.limits.perPayment],
      ["over_daily_limit", leftToday < 0n ? 0n : leftToday],
    ];
    if (r.maxAtomic !== undefined) ceilings.unshift(["over_max_usd", r.maxAtomic]);
    const [reason, ceiling] = ceilings.reduce((a, b) => (b[1] < a[1] ? b : a));
    if (r.amount > ceiling) return { refused: reason, ceiling };
    const spendId = `spd_${++this.seq}`;
    this.spends.set(spendId, { spendId, amount: r.amount, state: "reserved", url: r.url, network: r.network, payTo: r.payTo, at: new Date() });
    if (r.idempotencyKey) this.byKey.set(r.idempotencyKey, spendId);
    return { reserved: { spendId, amount: r.amount } };
  }

  async confirm(spendId: string, outcome: { transaction: string; receiptUrl?: string }): Promise<void> {
    this.journal.push(`confirm ${spendId}`);
    Object.assign(this.must(spendId, "reserved"), { state: "confirmed", ...outcome });
  }

  async release(spendId: string, reason: string): Promise<void> {
    this.journal.push(`release ${spendId} ${reason}`);
    Object.assign(this.must(spendId, "reserved"), { state: "released", reason });
  }

  async leaveReserved(spendId: string, reason: string): Promise<void> {
    this.journal.push(`leaveReserved ${spendId} ${reason}`);
    Object.assign(this.must(spendId, "reserved"), { state: "unknown", reason });
  }

  /** A spend can change state only once, from reserved. */
  private must(spendId: string, state: SpendState): Spend {
    const s = this.spends.get(spendId);
    if (!s || s.state !== state) throw new Error(`spend ${spendId} is not ${state}`);
    return s;
  }

  private previousOf(s: Spend): PreviousSpend {
    return {
      status: s.state,
      network: s.network,
      payTo: s.payTo,
      url: s.url,
      ...(s.transaction ? { transaction: s.transaction } : {}),
      ...(s.receiptUrl ? { receiptUrl: s.receiptUrl } : {}),
      reservedAt: s.at,
    };
  }
}

/** Keys by wallet id, opened only inside `use` (the buffer is a copy, wiped after, as the real vault does). */
export class InMemoryVault implements KeyVault {
  private readonly keys = new Map<string, Uint8Array>();
  opened = 0;

  constructor(private readonly journal: Journal) {}

  put(walletId: string, key: Uint8Array): void {
    this.keys.set(walletId, Uint8Array.from(key));
  }

  async withKey<T>(wallet: PayingWallet, use: (secretKey: Uint8Array) => Promise<T>): Promise<T> {
    this.journal.push("withKey");
    this.opened++;
    const stored = this.keys.get(wallet.id);
    if (!stored) throw new Error(`no key for ${wallet.id}`);
    const key = Uint8Array.from(stored);
    try {
      return await use(key);
    } finally {
      key.fill(0);
    }
  }
}

/** A BalanceReader over a function (the tests read the real chain through it). */
export function balances(journal: Journal, read: (wallet: PayingWallet) => Promise<bigint>): BalanceReader {
  return {
    usdcOf: async (wallet) => {
      journal.push("usdcOf");
      return read(wallet);
    },
  };
}

export interface RefusedEvent {
  walletId: string;
  actor: string;
  reason: string;
  url?: string;
  amount?: bigint;
}

export class RecordingEvents implements WalletEvents {
  readonly refusals: RefusedEvent[] = [];

  constructor(private readonly journal: Journal) {}

  async refused(wallet: PayingWallet, e: { actor: string; reason: string; url?: string; amount?: bigint }): Promise<void> {
    this.journal.push(`refused ${e.reason}`);
    this.refusals.push({ walletId: wallet.id, ...e });
  }
}
