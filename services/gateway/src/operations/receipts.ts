import { formatUsd } from "@c402/money";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { paymentsV1 } from "@c402/contracts";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { pageOf, pageRequestOf, type PageAfter } from "../http/pagination";
import { pendingReceiptView, receiptView } from "../views/receipts";

/**
 * The seller's receipts ledger (docs/decisions.md "Receipts ledger"), for
 * GET /v1/receipts, GET /v1/receipts/{id} and the export, and the MCP tools
 * list_receipts and get_receipt. Both lists take the same filters:
 * `test_mode` (true: the rehearsal ledger; default real payments only),
 * `sold_by`, and `from`/`to` (ISO 8601; settled at or after `from`, before `to`).
 */

type LedgerFilter = Pick<paymentsV1.ListReceiptsRequest, "testMode" | "soldBy" | "settledFrom" | "settledTo">;

export function ledgerFilterOf(query: Record<string, unknown>): LedgerFilter {
  const errors: FieldError[] = [];
  const text = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined) return undefined;
    if (typeof v !== "string") errors.push({ field: name, reason: "must be given once" });
    return typeof v === "string" ? v : undefined;
  };
  const mode = text("test_mode");
  if (mode !== undefined && mode !== "true" && mode !== "false") errors.push({ field: "test_mode", reason: "must be true or false" });
  const soldBy = text("sold_by");
  if (soldBy !== undefined && (soldBy.length < 1 || soldBy.length > 200)) errors.push({ field: "sold_by", reason: "must be 1 to 200 characters" });
  const time = (name: string): Date | undefined => {
    const v = text(name);
    if (v === undefined) return undefined;
    const at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(v) ? new Date(v) : new Date(NaN);
    if (Number.isNaN(at.getTime())) errors.push({ field: name, reason: "must be an ISO 8601 date or date-time" });
    return Number.isNaN(at.getTime()) ? undefined : at;
  };
  const from = time("from");
  const to = time("to");
  if (from && to && from.getTime() >= to.getTime()) errors.push({ field: "to", reason: "must be after from" });
  if (errors.length) throw invalid(errors);
  return {
    testMode: mode === "true",
    ...(soldBy !== undefined ? { soldBy } : {}),
    ...(from ? { settledFrom: timestampFromDate(from) } : {}),
    ...(to ? { settledTo: timestampFromDate(to) } : {}),
  };
}

export const afterOf = (after: PageAfter | undefined) => (after ? { afterSettledAt: timestampFromDate(after.createdAt), afterId: after.id } : {});
export const keyOf = (r: paymentsV1.Receipt): PageAfter => ({ createdAt: timestampDate(answered(r.settledAt, "settled_at")), id: r.id });

export class ReceiptOperations {
  constructor(private readonly deps: Pick<GatewayDeps, "clients" | "settings">) {}

  /** GET /v1/receipts, list_receipts: a page of the ledger, newest first. */
  async list(cred: Credential, query: Record<string, unknown>) {
    ensureScope(cred, "read_only");
    const page = pageRequestOf(query);
    const filter = ledgerFilterOf(query);
    const r = await this.deps.clients.payments.listReceipts({ accountId: cred.accountId, pageSize: page.limit + 1, ...filter, ...afterOf(page.after) });
    const { items, ...more } = pageOf(r.receipts, page.limit, keyOf);
    return { receipts: items.map((receipt) => receiptView(receipt, this.deps.settings.baseUrl)), ...more };
  }

  /**
   * get_payout_history (an MCP tool without a REST twin; docs/decisions.md): what
   * reached the seller's payout wallets, newest first. Settlement is
   * non-custodial, so every real sale is a payout of its own: the seller's share
   * paid to `pay_to` in the sale's transaction. Rehearsals move no money and
   * are never payouts.
   */
  async payoutHistory(cred: Credential, query: Record<string, unknown>) {
    const { receipts, ...more } = await this.list(cred, { ...query, test_mode: "false" });
    return {
      payouts: receipts.map((r) => ({
        receipt_id: r.id,
        checkout_id: r.checkout_id,
        title: r.title,
        network: r.network,
        asset: r.asset,
        pay_to: r.pay_to,
        amount: r.provider_amount,
        amount_usd: formatUsd(BigInt(r.provider_amount)),
        tx_hash: r.tx_hash,
        settled_at: r.settled_at,
        sold_by: r.sold_by,
      })),
      ...more,
    };
  }

  /** GET /v1/receipts/{id}, get_receipt: one of the account's receipts, or a pending payment's hash (202 over REST). */
  async get(cred: Credential, paymentId: string) {
    ensureScope(cred, "read_only");
    const r = await this.deps.clients.payments.getReceipt({ paymentId });
    // Another account's receipt is answered as no receipt at all.
    if (r.receipt && r.receipt.accountId !== cred.accountId) throw new ProblemError("not-found", "No such receipt.");
    if (!r.receipt) return { pending: true, receipt: pendingReceiptView(paymentId, r.txHash) };
    return { pending: false, receipt: receiptView(r.receipt, this.deps.settings.baseUrl) };
  }

  /** GET /v1/receipts/awaiting-fulfilment, list_awaiting_fulfilment: webhook sales not marked fulfilled, newest first. */
  async awaitingFulfilment(cred: Credential, query: Record<string, unknown>) {
    ensureScope(cred, "read_only");
    const page = pageRequestOf(query);
    const r = await this.deps.clients.payments.listAwaitingFulfilment({ accountId: cred.accountId, pageSize: page.limit + 1, ...afterOf(page.after) });
    const { items, ...more } = pageOf(r.receipts, page.limit, keyOf);
    return { receipts: items.map((receipt) => receiptView(receipt, this.deps.settings.baseUrl)), ...more };
  }

  /** POST /v1/receipts/{id}/fulfilled, mark_fulfilled: closes a webhook sale out (again: already_fulfilled). */
  async markFulfilled(cred: Credential, paymentId: string) {
    ensureScope(cred, "payments");
    const r = await this.deps.clients.payments.markFulfilled({ accountId: cred.accountId, paymentId, actor: cred.actor });
    return { ...receiptView(answered(r.receipt, "receipt"), this.deps.settings.baseUrl), already_fulfilled: r.alreadyFulfilled };
  }
}
