import { newId } from "@c402/ids";
import { eventStore, type SpendingWalletsDb, type WalletEventKind, type WalletEventRow } from "../store/wallet-store";
import type { PayingWallet, WalletChain, WalletEvents } from "./ports";

export interface WalletEventInput {
  walletId: string;
  accountId: string;
  chain: WalletChain;
  kind: WalletEventKind;
  actor: string;
  reason?: string;
  url?: string;
  amount?: bigint;
  transaction?: string;
  spendId?: string;
  at: Date;
}

/** Longest URL or reason an event keeps (a URL is the agent's; it is bounded by the contract, a reason by us). */
const MAX_TEXT = 2048;

/** The wallets' event log: every change and every refusal, with its actor. */
export class WalletEventLog implements WalletEvents {
  constructor(
    private readonly db: SpendingWalletsDb,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Records one event in the caller's transaction (the change and its event commit together). */
  async record(trx: SpendingWalletsDb, e: WalletEventInput): Promise<WalletEventRow> {
    const row: WalletEventRow = {
      id: newId("event"),
      wallet_id: e.walletId,
      account_id: e.accountId,
      chain: e.chain,
      kind: e.kind,
      actor: e.actor,
      reason: e.reason?.slice(0, MAX_TEXT) ?? null,
      url: e.url?.slice(0, MAX_TEXT) ?? null,
      amount: e.amount ?? null,
      transaction: e.transaction ?? null,
      spend_id: e.spendId ?? null,
      at: e.at,
    };
    await eventStore.insert(trx, row);
    return row;
  }

  /** A refused pay or reveal, recorded before the refusal is answered. */
  async refused(wallet: PayingWallet, e: { actor: string; reason: string; url?: string; amount?: bigint }): Promise<void> {
    await this.record(this.db, {
      walletId: wallet.id,
      accountId: wallet.accountId,
      chain: wallet.chain,
      kind: "refused",
      actor: e.actor,
      reason: e.reason,
      ...(e.url !== undefined ? { url: e.url } : {}),
      ...(e.amount !== undefined ? { amount: e.amount } : {}),
      at: this.clock(),
    });
  }

  list(f: { accountId: string; chain: WalletChain; after?: { at: Date; id: string }; limit: number }): Promise<WalletEventRow[]> {
    return eventStore.list(this.db, f);
  }
}
