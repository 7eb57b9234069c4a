import type { paymentsV1 } from "@c402/contracts";
import { isoOrNull } from "./values";

/**
 * The ledger export (GET /v1/receipts/export): CSV per RFC 4180 (CRLF line
 * ends, every field that needs it quoted, quotes doubled), one row per
 * settled receipt, the parties flattened into columns. A text cell that a
 * spreadsheet would read as a formula (=, +, -, @, a tab or a carriage
 * return first) is prefixed with an apostrophe, so opening the file never
 * runs anything a buyer or seller wrote.
 */

export const RECEIPT_CSV_COLUMNS = [
  "id",
  "settled_at",
  "checkout_id",
  "title",
  "network",
  "asset",
  "amount_usd",
  "provider_amount",
  "platform_amount",
  "fee_amount",
  "total",
  "payer",
  "subject",
  "pay_to",
  "tx_hash",
  "test_mode",
  "sold_by",
  "buyer_name",
  "buyer_email",
  "buyer_ref",
  "seller_name",
  "seller_ref",
  "delivery_outcome",
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV field: neutralised if it could start a formula, quoted if it holds a comma, quote or line break. */
export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvLine = (fields: (string | number | boolean | null | undefined)[]): string => `${fields.map(csvField).join(",")}\r\n`;

interface Parties {
  buyer?: { name?: string; email?: string; ref?: string } | null;
  seller?: { name?: string; ref?: string } | null;
}

function partiesOf(json: string | undefined): Parties {
  if (!json) return {};
  try {
    const value = JSON.parse(json) as unknown;
    return value && typeof value === "object" ? (value as Parties) : {};
  } catch {
    return {};
  }
}

export function receiptCsvLine(r: paymentsV1.Receipt): string {
  const p = partiesOf(r.partiesJson);
  return csvLine([
    r.id,
    isoOrNull(r.settledAt),
    r.checkoutId,
    r.checkoutTitle,
    r.network,
    "USDC",
    r.amountUsd,
    String(r.providerAmount),
    r.platformAmount === undefined ? null : String(r.platformAmount),
    String(r.feeAmount),
    String(r.total),
    r.payer,
    r.subject,
    r.payTo,
    r.txHash,
    r.testMode,
    r.soldBy ?? null,
    p.buyer?.name,
    p.buyer?.email,
    p.buyer?.ref,
    p.seller?.name,
    p.seller?.ref,
    r.deliveryOutcome,
  ]);
}
