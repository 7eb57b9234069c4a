import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { spendingWalletsV1 } from "@c402/contracts";
import { formatUsd } from "@c402/money";
import { invalid, ProblemError } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import type { SecretSealer } from "@c402/sealed-secrets";
import type { ChainReader } from "../chain/chain-readers";
import type { WalletCaller } from "../domain/caller-rules";
import type { KeyRotation } from "../domain/key-rotation";
import type { LimitsView } from "../domain/limits";
import type { PayEngine, PayOutcome, WalletChain } from "../domain/ports";
import { selfCheck } from "../domain/self-check";
import { NAGGING_WARNING, type WalletBook } from "../domain/wallet-book";
import type { WalletEventLog } from "../domain/wallet-event-log";
import type { WalletSecret } from "../domain/wallet-keys";
import type { WalletEventRow, WalletRow } from "../store/wallet-store";

const { Chain, CallerKind } = spendingWalletsV1;

export interface SpendingWalletsRpcDeps {
  book: WalletBook;
  events: WalletEventLog;
  sealer: SecretSealer;
  chains: ReadonlyMap<WalletChain, ChainReader>;
  rotation: KeyRotation;
  /** Absent until the integrator wires X402PayEngine: Pay answers unavailable. */
  payEngine?: PayEngine;
}

/** The gRPC handlers: thin, every rule in domain/. */
export function spendingWalletsRpc(d: SpendingWalletsRpcDeps): ServiceImplementation<typeof spendingWalletsV1.SpendingWalletsService> {
  const { book } = d;
  return {
    async listWallets(req) {
      const wallets = await book.listWallets(req.accountId, req.includeArchived);
      return { wallets: wallets.map(walletMessage) };
    },
    async createWallet(req) {
      const created = await book.createWallet(req.accountId, chainOf(req.chain), callerOf(req.caller));
      return { wallet: walletMessage(created.wallet), secret: secretMessage(created.secret), limits: limitsMessage(created.limits) };
    },
    async getBalance(req) {
      const b = await book.balance(req.accountId, chainOf(req.chain));
      return {
        wallet: walletMessage(b.wallet),
        usdc: b.usdc.toString(),
        usd: formatUsd(b.usdc),
        native: b.native.toString(),
        nativeSymbol: b.nativeSymbol,
        nagging: b.nagging,
        ...(b.nagging ? { warning: NAGGING_WARNING } : {}),
        asset: b.asset,
      };
    },
    async pay(req) {
      const chain = chainOf(req.chain);
      const caller = callerOf(req.caller);
      const { wallet, maxAtomic } = await book.walletToPay(req.accountId, chain, caller, {
        url: req.url,
        ...(req.maxUsd !== undefined ? { maxUsd: req.maxUsd } : {}),
      });
      if (!d.payEngine)
        throw new ProblemError("unavailable", {
          message: "Paying from spending wallets is not available on this deployment yet.",
          extensions: { reason: "pay_not_available" },
        });
      const outcome = await d.payEngine.pay(wallet, {
        url: req.url,
        params: { ...req.params },
        actor: caller.actor,
        ...(maxAtomic !== undefined ? { maxAtomic } : {}),
        ...(req.idempotencyKey !== undefined ? { idempotencyKey: req.idempotencyKey } : {}),
      });
      return { ...payOutcomeMessage(outcome), limits: limitsMessage(await book.limits(req.accountId, chain)) };
    },
    async getLimits(req) {
      return { limits: limitsMessage(await book.limits(req.accountId, chainOf(req.chain))) };
    },
    async setLimits(req) {
      const limits = await book.setLimits(
        req.accountId,
        chainOf(req.chain),
        { perPaymentUsd: req.perPaymentUsd, perDayUsd: req.perDayUsd },
        callerOf(req.caller),
      );
      return { limits: limitsMessage(limits) };
    },
    async getFunding(req) {
      const f = await book.funding(req.accountId, chainOf(req.chain), req.amountUsd, callerOf(req.caller));
      return {
        token: "USDC",
        asset: f.chain.usdc,
        chain: req.chain,
        network: f.wallet.network,
        address: f.wallet.address,
        ...(f.amount !== undefined ? { amountUsd: formatUsd(f.amount), amount: f.amount.toString() } : {}),
        uri: f.uri,
        links: f.links,
      };
    },
    async reveal(req) {
      const revealed = await book.reveal(req.accountId, chainOf(req.chain), callerOf(req.caller));
      return { wallet: walletMessage(revealed.wallet), secret: secretMessage(revealed.secret) };
    },
    async archive(req) {
      return { wallet: walletMessage(await book.archive(req.accountId, chainOf(req.chain), callerOf(req.caller))) };
    },
    async listEvents(req) {
      if ((req.afterAt === undefined) !== (req.afterId === undefined)) throw invalid([{ field: "after", reason: "after_at and after_id go together" }]);
      const rows = await d.events.list({
        accountId: req.accountId,
        chain: chainOf(req.chain),
        limit: req.pageSize,
        ...(req.afterAt && req.afterId ? { after: { at: timestampDate(req.afterAt), id: req.afterId } } : {}),
      });
      return { events: rows.map(eventMessage) };
    },
    async selfCheck() {
      const problems = await selfCheck({ sealer: d.sealer, chains: d.chains, rotation: d.rotation });
      return { ok: problems.length === 0, problems, chains: book.offeredChains };
    },
  };
}

function chainOf(chain: spendingWalletsV1.Chain): WalletChain {
  if (chain === Chain.BASE) return "base";
  if (chain === Chain.SOLANA) return "solana";
  throw invalid([{ field: "chain", reason: "must be base or solana" }]);
}

function chainMessage(chain: WalletChain): spendingWalletsV1.Chain {
  return chain === "base" ? Chain.BASE : Chain.SOLANA;
}

const CALLER_KINDS: Partial<Record<spendingWalletsV1.CallerKind, WalletCaller["kind"]>> = {
  [CallerKind.SESSION]: "session",
  [CallerKind.API_KEY]: "api_key",
  [CallerKind.OAUTH]: "oauth",
};

function callerOf(caller: spendingWalletsV1.Caller | undefined): WalletCaller {
  const kind = caller ? CALLER_KINDS[caller.kind] : undefined;
  if (!caller || !kind) throw invalid([{ field: "caller", reason: "names the credential: session, api_key or oauth" }]);
  return { kind, testMode: caller.testMode, scope: caller.scope, actor: caller.actor };
}

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

function walletMessage(w: WalletRow) {
  return {
    id: w.id,
    chain: chainMessage(w.chain),
    network: w.network,
    address: w.address,
    status: w.status,
    createdAt: timestampFromDate(w.created_at),
    revealedAt: ts(w.revealed_at),
    ...(w.revealed_by !== null ? { revealedBy: w.revealed_by } : {}),
    archivedAt: ts(w.archived_at),
  };
}

function secretMessage(s: WalletSecret) {
  return { phrase: s.phrase, privateKey: s.private_key, derivationPath: s.derivation_path };
}

function limitsMessage(l: LimitsView) {
  return {
    perPaymentUsd: formatUsd(l.perPayment),
    perDayUsd: formatUsd(l.perDay),
    spentTodayUsd: formatUsd(l.spentToday),
    leftTodayUsd: formatUsd(l.leftToday),
    dayResetsAt: timestampFromDate(l.dayResetsAt),
  };
}

function eventMessage(e: WalletEventRow) {
  return {
    id: e.id,
    kind: e.kind,
    actor: e.actor,
    walletId: e.wallet_id,
    ...(e.reason !== null ? { reason: e.reason } : {}),
    ...(e.url !== null ? { url: e.url } : {}),
    ...(e.amount !== null ? { amountUsd: formatUsd(e.amount) } : {}),
    ...(e.transaction !== null ? { transaction: e.transaction } : {}),
    ...(e.spend_id !== null ? { spendId: e.spend_id } : {}),
    at: timestampFromDate(e.at),
  };
}

function payOutcomeMessage(o: PayOutcome) {
  const r = o.receipt;
  return {
    paid: o.paid,
    url: o.url,
    goods: { status: o.goods.status, contentType: o.goods.contentType, body: o.goods.body },
    ...(r
      ? {
          receipt: {
            spendId: r.spendId,
            network: r.network,
            transaction: r.transaction,
            payer: r.payer,
            payTo: r.payTo,
            amount: r.amount.toString(),
            amountUsd: formatUsd(r.amount),
            ...(r.receiptUrl !== undefined ? { receiptUrl: r.receiptUrl } : {}),
            paidAt: timestampFromDate(r.paidAt),
          },
        }
      : {}),
  };
}
