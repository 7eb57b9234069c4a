import { timestampDate } from "@bufbuild/protobuf/wkt";
import { spendingWalletsV1 } from "@c402/contracts";
import { isoOrNull } from "./values";

/**
 * The public JSON shapes of spending wallets (spec, Resources: Spending
 * wallet). The secret (phrase and private key) has one view, secretView, used
 * only by the two answers that show it (create and reveal), both no-store.
 */

export const SPENDING_CHAINS = ["base", "solana"] as const;
export type SpendingChainName = (typeof SPENDING_CHAINS)[number];

const CHAIN_NAMES: Record<spendingWalletsV1.Chain, SpendingChainName | "unknown"> = {
  [spendingWalletsV1.Chain.UNSPECIFIED]: "unknown",
  [spendingWalletsV1.Chain.BASE]: "base",
  [spendingWalletsV1.Chain.SOLANA]: "solana",
};

export const chainName = (chain: spendingWalletsV1.Chain): SpendingChainName | "unknown" => CHAIN_NAMES[chain] ?? "unknown";

export function walletView(w: spendingWalletsV1.Wallet) {
  return {
    id: w.id,
    object: "spending_wallet",
    chain: chainName(w.chain),
    network: w.network,
    address: w.address,
    status: w.status,
    created_at: isoOrNull(w.createdAt),
    revealed_at: isoOrNull(w.revealedAt),
    archived_at: isoOrNull(w.archivedAt),
  };
}

export function secretView(s: spendingWalletsV1.WalletSecret) {
  return { phrase: s.phrase, private_key: s.privateKey, derivation_path: s.derivationPath };
}

export function limitsView(l: spendingWalletsV1.Limits | undefined) {
  return {
    per_payment_usd: l?.perPaymentUsd ?? null,
    per_day_usd: l?.perDayUsd ?? null,
    spent_today_usd: l?.spentTodayUsd ?? null,
    left_today_usd: l?.leftTodayUsd ?? null,
    day_resets_at: isoOrNull(l?.dayResetsAt),
  };
}

export function balanceView(b: spendingWalletsV1.GetBalanceResponse) {
  return {
    chain: b.wallet ? chainName(b.wallet.chain) : "unknown",
    network: b.wallet?.network ?? null,
    address: b.wallet?.address ?? null,
    usdc: b.usdc,
    usd: b.usd,
    native: b.native,
    native_symbol: b.nativeSymbol,
    asset: b.asset,
    nagging: b.nagging,
    warning: b.warning ?? null,
  };
}

export function fundingView(f: spendingWalletsV1.GetFundingResponse) {
  return {
    token: f.token,
    asset: f.asset,
    chain: chainName(f.chain),
    network: f.network,
    address: f.address,
    amount_usd: f.amountUsd ?? null,
    amount: f.amount ?? null,
    uri: f.uri,
    links: f.links.map((l) => ({ app: l.app, url: l.url })),
  };
}

export function walletEventView(e: spendingWalletsV1.WalletEvent) {
  return {
    id: e.id,
    wallet_id: e.walletId,
    kind: e.kind,
    actor: e.actor,
    reason: e.reason ?? null,
    url: e.url ?? null,
    amount_usd: e.amountUsd ?? null,
    transaction: e.transaction ?? null,
    spend_id: e.spendId ?? null,
    at: isoOrNull(e.at),
  };
}

export function receiptView(r: spendingWalletsV1.SpendReceipt) {
  return {
    spend_id: r.spendId,
    network: r.network,
    transaction: r.transaction,
    payer: r.payer,
    pay_to: r.payTo,
    amount: r.amount,
    amount_usd: r.amountUsd,
    receipt_url: r.receiptUrl ?? null,
    paid_at: isoOrNull(r.paidAt),
  };
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;
const TEXT_TYPE = /^text\//i;

/**
 * The seller's answer as an agent reads it: the parsed value when it says it
 * is JSON (and parses), the text for text/*, otherwise the bytes in base64
 * with their content type. A JSON answer that does not parse is shown as text.
 */
export function goodsView(g: spendingWalletsV1.Goods | undefined): unknown {
  if (!g) return null;
  const text = () => Buffer.from(g.body).toString("utf8");
  if (JSON_TYPE.test(g.contentType)) {
    try {
      return g.body.length === 0 ? null : (JSON.parse(text()) as unknown);
    } catch {
      return text();
    }
  }
  if (TEXT_TYPE.test(g.contentType)) return text();
  return { content_type: g.contentType, base64: Buffer.from(g.body).toString("base64") };
}

export function paidView(r: spendingWalletsV1.PayResponse) {
  return {
    paid: r.paid,
    url: r.url,
    status: r.goods?.status ?? null,
    content_type: r.goods?.contentType ?? null,
    receipt: r.receipt ? receiptView(r.receipt) : null,
    goods: goodsView(r.goods),
    limits: limitsView(r.limits),
  };
}

/** Whether an event's `at` is set: the keyset cursor of the events list needs it. */
export function eventAt(e: spendingWalletsV1.WalletEvent): Date {
  if (!e.at) throw new Error(`wallet event ${e.id} has no at`);
  return timestampDate(e.at);
}
