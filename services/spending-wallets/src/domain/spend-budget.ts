import { newId } from "@c402/ids";
import { limitsStore, spendStore, walletStore, type SpendingWalletsDb, type SpendRow, type SpendStatus } from "../store/wallet-store";
import type { BudgetRefusal, PayingWallet, SpendBudget, SpendReservation } from "./ports";
import { utcDay } from "./utc-day";
import type { WalletEventLog } from "./wallet-event-log";

/** A spend's outcome cannot change that way (confirmed is final; released is final). */
export class SpendStateError extends Error {}

/**
 * The (account, chain) budget in PostgreSQL. A reservation is one transaction
 * holding the limits row's lock (every reservation of the budget takes it,
 * on any replica), so the check and the insert are never interleaved with
 * another's: together they never exceed the day.
 */
export class PostgresSpendBudget implements SpendBudget {
  constructor(
    private readonly db: SpendingWalletsDb,
    private readonly events: WalletEventLog,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async reserve(wallet: PayingWallet, r: Parameters<SpendBudget["reserve"]>[1]): Promise<SpendReservation> {
    if (r.amount <= 0n) throw new RangeError("a reservation is of a positive amount");
    return this.db.transaction().execute(async (trx) => {
      const now = this.clock();
      const row = await walletStore.lockById(trx, wallet.id);
      if (!row || row.account_id !== wallet.accountId || row.status !== "active") throw new SpendStateError(`wallet ${wallet.id} is not active`);
      if (r.idempotencyKey !== undefined) {
        const first = await spendStore.byIdempotencyKey(trx, wallet.accountId, r.idempotencyKey);
        if (first) return { reserved: { spendId: first.id, amount: first.amount }, previous: previousOf(first) };
      }
      const limits = await limitsStore.lock(trx, wallet.accountId, wallet.chain, now);
      const day = utcDay(now);
      const used = await spendStore.countingOn(trx, wallet.accountId, wallet.chain, day);
      const perPayment = limits.per_payment;
      const leftToday = limits.per_day - used;
      const ceiling = minOf([perPayment, leftToday > 0n ? leftToday : 0n, ...(r.maxAtomic !== undefined ? [r.maxAtomic] : [])]);
      const refusal = refusalOf(r.amount, { maxAtomic: r.maxAtomic, perPayment, leftToday });
      if (refusal) return { refused: refusal, ceiling };
      const spend: SpendRow = {
        id: newId("spend"),
        account_id: wallet.accountId,
        chain: wallet.chain,
        wallet_id: wallet.id,
        amount: r.amount,
        status: "reserved",
        day,
        url: r.url,
        network: r.network,
        pay_to: r.payTo,
        actor: r.actor,
        idempotency_key: r.idempotencyKey ?? null,
        transaction: null,
        receipt_url: null,
        reason: null,
        created_at: now,
        updated_at: now,
      };
      await spendStore.insert(trx, spend);
      return { reserved: { spendId: spend.id, amount: r.amount } };
    });
  }

  /** reserved or unknown → confirmed, with a `spent` event; confirming again with the same transaction is a no-op. */
  async confirm(spendId: string, outcome: { transaction: string; receiptUrl?: string }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const spend = await this.locked(trx, spendId);
      if (spend.status === "confirmed" && spend.transaction === outcome.transaction) return;
      this.guard(spend, "confirmed");
      const now = this.clock();
      await spendStore.settle(trx, spendId, { status: "confirmed", transaction: outcome.transaction, receipt_url: outcome.receiptUrl ?? null }, now);
      await this.events.record(trx, {
        walletId: spend.wallet_id,
        accountId: spend.account_id,
        chain: spend.chain,
        kind: "spent",
        actor: spend.actor,
        url: spend.url,
        amount: spend.amount,
        transaction: outcome.transaction,
        spendId,
        at: now,
      });
    });
  }

  /** reserved or unknown → released: it certainly did not pay, it stops counting. */
  async release(spendId: string, reason: string): Promise<void> {
    await this.transition(spendId, "released", reason);
  }

  /** reserved → unknown: it keeps counting against the day until proved either way. */
  async leaveReserved(spendId: string, reason: string): Promise<void> {
    await this.transition(spendId, "unknown", reason);
  }

  private async transition(spendId: string, to: "released" | "unknown", reason: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const spend = await this.locked(trx, spendId);
      if (spend.status === to) return;
      this.guard(spend, to);
      await spendStore.settle(trx, spendId, { status: to, reason: reason.slice(0, 500) }, this.clock());
    });
  }

  private async locked(trx: SpendingWalletsDb, spendId: string): Promise<SpendRow> {
    const spend = await spendStore.lock(trx, spendId);
    if (!spend) throw new SpendStateError(`no spend ${spendId}`);
    return spend;
  }

  private guard(spend: SpendRow, to: SpendStatus): void {
    if (!ALLOWED[spend.status].includes(to)) throw new SpendStateError(`spend ${spend.id} is ${spend.status}: it cannot become ${to}`);
  }
}

const ALLOWED: Record<SpendStatus, readonly SpendStatus[]> = {
  reserved: ["confirmed", "released", "unknown"],
  unknown: ["confirmed", "released"],
  confirmed: [],
  released: [],
};

/** The limit the amount breaks, the agent's own max first (it is the tightest it asked for). */
function refusalOf(amount: bigint, c: { maxAtomic: bigint | undefined; perPayment: bigint; leftToday: bigint }): BudgetRefusal | undefined {
  if (c.maxAtomic !== undefined && amount > c.maxAtomic) return "over_max_usd";
  if (amount > c.perPayment) return "over_per_payment_limit";
  if (amount > c.leftToday) return "over_daily_limit";
  return undefined;
}

function minOf(values: bigint[]): bigint {
  return values.reduce((a, b) => (b < a ? b : a));
}

function previousOf(spend: SpendRow) {
  return {
    status: spend.status,
    url: spend.url,
    network: spend.network,
    payTo: spend.pay_to,
    ...(spend.transaction ? { transaction: spend.transaction } : {}),
    ...(spend.receipt_url ? { receiptUrl: spend.receipt_url } : {}),
    ...(spend.reason ? { reason: spend.reason } : {}),
    reservedAt: spend.created_at,
  };
}
