import { escapeHtml } from "./html";
import type { ReceiptView } from "./receipts";

const usdc = (atomic: number | null) => (atomic === null ? "—" : `${(atomic / 1e6).toFixed(6)} USDC`);

/** The parties the checkout declared, one row per field, as declared (escaped when rendered). */
function partyRows(parties: unknown): [string, string][] {
  if (!parties || typeof parties !== "object") return [];
  const rows: [string, string][] = [];
  for (const [role, party] of Object.entries(parties as Record<string, unknown>)) {
    if (!party || typeof party !== "object") continue;
    for (const [field, value] of Object.entries(party as Record<string, unknown>)) {
      if (typeof value === "string") rows.push([`${role === "buyer" ? "Buyer" : "Seller"} ${field}`, value]);
    }
  }
  return rows;
}

/**
 * The receipt as a self-contained HTML document (no scripts, no external
 * resources): the page at /r/{id} for browsers and the file /r/{id}/download.
 */
export function receiptHtml(r: ReceiptView): string {
  const rows: [string, string][] = [
    ["Receipt", r.id],
    ["Product", r.title],
    ["Price", `${r.amount_usd} USD`],
    ["Seller receives", usdc(r.split.seller)],
    ["Platform cut", usdc(r.split.platform)],
    ...(r.platform_fee_to !== null ? ([["Platform cut paid to", r.platform_fee_to]] as [string, string][]) : []),
    ...(r.sold_by !== null ? ([["Sold by", r.sold_by]] as [string, string][]) : []),
    ["Protocol fee", usdc(r.split.protocol_fee)],
    ["Total paid", usdc(r.split.total)],
    ["Network", r.network],
    ["Token", `${r.asset} (${r.asset_address})`],
    ["Payer", r.payer],
    ["Buyer pseudonym", r.subject],
    ["Paid to", r.pay_to],
    ["Transaction", r.tx_hash],
    ["Settled at", r.settled_at ?? "—"],
    [
      "Delivery",
      "status" in r.delivery
        ? `${r.delivery.outcome} (origin HTTP ${r.delivery.status}, ${r.delivery.latency_ms} ms, ${r.delivery.bytes} bytes)`
        : r.delivery.outcome,
    ],
    ["Checkout", r.checkout_id],
    ...partyRows(r.parties),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Receipt ${escapeHtml(r.id)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;width:100%}td{padding:.35rem .5rem;border-bottom:1px solid #ddd;vertical-align:top;word-break:break-all}td:first-child{color:#555;white-space:nowrap;word-break:normal}.test{background:#fff3cd;padding:.5rem 1rem;border-radius:.4rem}</style>
</head><body><main>
<h1>Receipt</h1>
${r.test_mode ? '<p class="test">Rehearsal: this payment was settled simulated, without real money.</p>' : ""}
<table>${rows.map(([k, v]) => `<tr><td>${escapeHtml(k)}</td><td>${escapeHtml(v)}</td></tr>`).join("")}</table>
<p>Permanent address: <a href="${escapeHtml(r.receipt_url)}">${escapeHtml(r.receipt_url)}</a></p>
</main></body></html>
`;
}
