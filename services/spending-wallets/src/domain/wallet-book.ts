import { accountActivityRow, actorOfRequest, type AccountAction } from "@c402/account-events";
import { enqueueOutboxRow } from "@c402/bus";
import { newId } from "@c402/ids";
import { formatUsd } from "@c402/money";
import { invalid, ProblemError } from "@c402/problems";
import type { SecretSealer } from "@c402/sealed-secrets";
import type { ChainReader } from "../chain/chain-readers";
import { limitsStore, spendStore, walletStore, DEFAULT_LIMITS, type SpendingWalletsDb, type WalletRow } from "../store/wallet-store";
import { forbiddenProblem, managementRefusal, payRefusal, revealRefusal, type WalletCaller } from "./caller-rules";
import { fundingRequest, type FundingRequest } from "./funding";
import { limitsView, parseLimits, usdAmountProblem, type LimitsView } from "./limits";
import type { PayingWallet, WalletChain } from "./ports";
import { utcDay } from "./utc-day";
import type { WalletEventLog } from "./wallet-event-log";
import { generateWallet, type WalletSecret } from "./wallet-keys";
import { openWalletSecret, sealWalletSecret } from "./wallet-vault";

/** Above this a balance nags (the spec's Limits: a warning above $999). */
export const NAGGING_ABOVE_ATOMIC = 999_000_000n;
export const NAGGING_WARNING =
  "This wallet holds more than $999. It is a custodial hot wallet for agents' small payments: keep only what they spend soon, and reveal the key to move the rest out.";
/** The largest max_usd or funding amount taken (far above any daily limit, so it never binds by itself). */
const MAX_AMOUNT_ATOMIC = 1_000_000_000_000n;

export interface WalletBookOptions {
  db: SpendingWalletsDb;
  sealer: SecretSealer;
  events: WalletEventLog;
  /** The chains this deployment offers, with their readers. */
  chains: ReadonlyMap<WalletChain, ChainReader>;
  clock?: () => Date;
  /** An account event was written to the outbox (the relay publishes it now). */
  onOutbox?: () => void;
}

export interface BalanceView {
  wallet: WalletRow;
  usdc: bigint;
  native: bigint;
  nativeSymbol: string;
  asset: string;
  nagging: boolean;
}

export interface FundingView extends FundingRequest {
  wallet: WalletRow;
  chain: ChainReader;
  amount?: bigint;
}

/**
 * The wallet book: the management of an account's wallets (create, reveal,
 * archive, limits, funding, balance) with the spec's caller rules, each change
 * with its wallet event and account event in one transaction.
 */
export class WalletBook {
  private readonly db: SpendingWalletsDb;
  private readonly clock: () => Date;

  constructor(private readonly o: WalletBookOptions) {
    this.db = o.db;
    this.clock = o.clock ?? (() => new Date());
  }

  get offeredChains(): WalletChain[] {
    return [...this.o.chains.keys()];
  }

  /** The chain's reader; unavailable (503) when this deployment does not offer the chain. */
  offered(chain: WalletChain): ChainReader {
    const reader = this.o.chains.get(chain);
    if (!reader)
      throw new ProblemError("unavailable", {
        message: `Spending wallets on ${chain} are not offered by this deployment.`,
        extensions: { reason: "chain_not_offered" },
      });
    return reader;
  }

  listWallets(accountId: string, includeArchived: boolean): Promise<WalletRow[]> {
    return walletStore.list(this.db, accountId, includeArchived);
  }

  /** The account's active wallet on the chain; 404 when there is none. */
  async activeWallet(accountId: string, chain: WalletChain): Promise<WalletRow> {
    const wallet = await walletStore.active(this.db, accountId, chain);
    if (!wallet) throw noWallet(chain);
    return wallet;
  }

  async createWallet(accountId: string, chain: WalletChain, caller: WalletCaller): Promise<{ wallet: WalletRow; secret: WalletSecret; limits: LimitsView }> {
    refuseUnless(managementRefusal(caller, "Creating a spending wallet"));
    const actor = actorOfRequest(caller.actor);
    const reader = this.offered(chain);
    if (await walletStore.active(this.db, accountId, chain)) throw activeExists(chain);
    const generated = generateWallet(chain);
    const now = this.clock();
    const id = newId("spendingWallet");
    const sealed = sealWalletSecret(this.o.sealer, { id, accountId, chain }, generated.secret);
    const wallet: WalletRow = {
      id,
      account_id: accountId,
      chain,
      network: reader.network,
      address: generated.address,
      sealed_secret: sealed,
      key_id: this.o.sealer.keyIdOf(sealed),
      status: "active",
      created_at: now,
      revealed_at: null,
      revealed_by: null,
      archived_at: null,
      balance_flagged: false,
    };
    try {
      await this.change(async (trx) => {
        await walletStore.insertWallet(trx, wallet);
        await this.o.events.record(trx, { walletId: id, accountId, chain, kind: "created", actor, at: now });
        await this.accountEvent(trx, wallet, "spending_wallet.created", actor, { chain, network: wallet.network, address: wallet.address }, now);
      });
    } catch (err) {
      // Another request created the chain's wallet in between (the partial unique index).
      if (isUniqueViolation(err)) throw activeExists(chain);
      throw err;
    }
    return { wallet, secret: generated.secret, limits: await this.limits(accountId, chain) };
  }

  /** The withdrawal: the secret, to a browser session only; anything else is refused and recorded first. */
  async reveal(accountId: string, chain: WalletChain, caller: WalletCaller): Promise<{ wallet: WalletRow; secret: WalletSecret }> {
    const refusal = revealRefusal(caller);
    if (refusal) {
      const wallet = await walletStore.active(this.db, accountId, chain);
      if (wallet) await this.o.events.refused(payingWallet(wallet), { actor: caller.actor, reason: refusal.reason });
      throw forbiddenProblem(refusal);
    }
    const actor = actorOfRequest(caller.actor);
    const now = this.clock();
    return this.change(async (trx) => {
      const locked = await walletStore.lockActive(trx, accountId, chain);
      if (!locked) throw noWallet(chain);
      const secret = openWalletSecret(this.o.sealer, payingWallet(locked), locked.sealed_secret);
      const wallet = await walletStore.markRevealed(trx, locked.id, now, actor);
      await this.o.events.record(trx, { walletId: wallet.id, accountId, chain, kind: "revealed", actor, at: now });
      await this.accountEvent(trx, wallet, "spending_wallet.revealed", actor, { chain, address: wallet.address }, now);
      return { wallet, secret };
    });
  }

  /** Ends the chain's active wallet (a `revoked` event); its funds and sealed secret stay. */
  async archive(accountId: string, chain: WalletChain, caller: WalletCaller): Promise<WalletRow> {
    refuseUnless(managementRefusal(caller, "Archiving a spending wallet"));
    const actor = actorOfRequest(caller.actor);
    const now = this.clock();
    return this.change(async (trx) => {
      const locked = await walletStore.lockActive(trx, accountId, chain);
      if (!locked) throw noWallet(chain);
      const wallet = await walletStore.archive(trx, locked.id, now);
      await this.o.events.record(trx, { walletId: wallet.id, accountId, chain, kind: "revoked", actor, reason: "archived", at: now });
      await this.accountEvent(trx, wallet, "spending_wallet.archived", actor, { chain, address: wallet.address }, now);
      return wallet;
    });
  }

  /** The (account, chain) limits with what today (the UTC day) counted: defaults until set, wallet or not. */
  async limits(accountId: string, chain: WalletChain): Promise<LimitsView> {
    const now = this.clock();
    const row = await limitsStore.get(this.db, accountId, chain);
    const spent = await spendStore.countingOn(this.db, accountId, chain, utcDay(now));
    return limitsView(row ? row.per_payment : DEFAULT_LIMITS.perPayment, row ? row.per_day : DEFAULT_LIMITS.perDay, spent, now);
  }

  async setLimits(accountId: string, chain: WalletChain, input: { perPaymentUsd: string; perDayUsd: string }, caller: WalletCaller): Promise<LimitsView> {
    refuseUnless(managementRefusal(caller, "Changing spending limits"));
    const actor = actorOfRequest(caller.actor);
    const { perPayment, perDay } = parseLimits(input);
    const now = this.clock();
    await this.change(async (trx) => {
      await limitsStore.set(trx, accountId, chain, perPayment, perDay, now);
      await enqueueOutboxRow(
        trx,
        accountActivityRow({
          accountId,
          action: "spending_wallet.limits_updated",
          objectId: `${accountId}/${chain}`,
          detail: { chain, per_payment_usd: formatUsd(perPayment), per_day_usd: formatUsd(perDay) },
          actor,
          testMode: false,
          at: now,
        }),
      );
    });
    return this.limits(accountId, chain);
  }

  async funding(accountId: string, chain: WalletChain, amountUsd: string | undefined, caller: WalletCaller): Promise<FundingView> {
    refuseUnless(managementRefusal(caller, "A funding request"));
    const amount = amountUsd === undefined ? undefined : parseAmount("amount_usd", amountUsd);
    const reader = this.offered(chain);
    const wallet = await this.activeWallet(accountId, chain);
    const request = fundingRequest(reader, wallet.address, amount, "c402 spending wallet");
    return { ...request, wallet, chain: reader, ...(amount !== undefined ? { amount } : {}) };
  }

  /** Reads the chain; the first read above the nagging threshold (since it was last below) records `flagged`. */
  async balance(accountId: string, chain: WalletChain): Promise<BalanceView> {
    const reader = this.offered(chain);
    const wallet = await this.activeWallet(accountId, chain);
    const [usdc, native] = await Promise.all([reader.usdcOf(wallet.address), reader.nativeOf(wallet.address)]).catch(() => {
      throw new ProblemError("unavailable", {
        message: `The ${chain} network did not answer; try again shortly.`,
        help: { retry_is_safe: true },
        extensions: { reason: "chain_unreachable" },
      });
    });
    const nagging = usdc > NAGGING_ABOVE_ATOMIC;
    if (nagging !== wallet.balance_flagged) {
      await this.change(async (trx) => {
        const flipped = await walletStore.setBalanceFlagged(trx, wallet.id, nagging);
        if (flipped && nagging) {
          await this.o.events.record(trx, {
            walletId: wallet.id,
            accountId,
            chain,
            kind: "flagged",
            actor: "system",
            reason: "balance_above_999",
            amount: usdc,
            at: this.clock(),
          });
        }
      });
    }
    return { wallet, usdc, native, nativeSymbol: reader.nativeSymbol, asset: reader.usdc, nagging };
  }

  /**
   * The wallet a pay comes from, the caller's rules checked: a refusal is
   * recorded as a `refused` event before it is answered. 404 without an active wallet.
   */
  async walletToPay(
    accountId: string,
    chain: WalletChain,
    caller: WalletCaller,
    request: { url: string; maxUsd?: string },
  ): Promise<{ wallet: PayingWallet; maxAtomic?: bigint }> {
    this.offered(chain);
    const row = await walletStore.active(this.db, accountId, chain);
    // The caller's rules first: a test key is told it cannot pay (403) whether or not a wallet exists yet.
    const refusal = payRefusal(caller);
    if (refusal) {
      if (row) await this.o.events.refused(payingWallet(row), { actor: caller.actor, reason: refusal.reason, url: request.url });
      throw forbiddenProblem(refusal);
    }
    if (!row) throw noWallet(chain);
    actorOfRequest(caller.actor);
    return { wallet: payingWallet(row), ...(request.maxUsd !== undefined ? { maxAtomic: parseAmount("max_usd", request.maxUsd) } : {}) };
  }

  private async change<T>(fn: (trx: SpendingWalletsDb) => Promise<T>): Promise<T> {
    const result = await this.db.transaction().execute(fn);
    this.o.onOutbox?.();
    return result;
  }

  private accountEvent(
    trx: SpendingWalletsDb,
    wallet: WalletRow,
    action: AccountAction,
    actor: ReturnType<typeof actorOfRequest>,
    detail: Record<string, unknown>,
    at: Date,
  ) {
    return enqueueOutboxRow(trx, accountActivityRow({ accountId: wallet.account_id, action, objectId: wallet.id, detail, actor, testMode: false, at }));
  }
}

export function payingWallet(row: WalletRow): PayingWallet {
  return { id: row.id, accountId: row.account_id, chain: row.chain, network: row.network, address: row.address };
}

function refuseUnless(refusal: ReturnType<typeof managementRefusal>): void {
  if (refusal) throw forbiddenProblem(refusal);
}

function parseAmount(field: string, text: string): bigint {
  const parsed = usdAmountProblem(text, MAX_AMOUNT_ATOMIC);
  if ("reason" in parsed) throw invalid([{ field, reason: parsed.reason }]);
  return parsed.atomic;
}

function noWallet(chain: WalletChain): ProblemError {
  return new ProblemError("not-found", { message: `No spending wallet on ${chain}: create one in the dashboard.`, extensions: { reason: "no_wallet" } });
}

function activeExists(chain: WalletChain): ProblemError {
  return new ProblemError("conflict", {
    message: `The account already has an active spending wallet on ${chain}: archive it first to create another.`,
    extensions: { reason: "wallet_exists" },
  });
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "23505";
}
