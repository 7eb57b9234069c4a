import type { analyticsView } from "../../views/analytics";
import type { receiptView } from "../../views/receipts";
import { html } from "./template";

/** The overview: the last 30 days' live sales, what is still owed to package holders, and the latest receipts. */
export function overviewBody(analytics: ReturnType<typeof analyticsView>, receipts: readonly ReturnType<typeof receiptView>[]) {
  const { earnings, liabilities } = analytics;
  return html`<h1>Overview</h1>
    <section aria-labelledby="sales-heading">
      <h2 id="sales-heading">Sales, last ${analytics.days} days</h2>
      <dl class="dash-figures">
        <div>
          <dt>Payments</dt>
          <dd>${earnings.payments}</dd>
        </div>
        <div>
          <dt>Gross</dt>
          <dd>${earnings.gross_usd} USD</dd>
        </div>
        <div>
          <dt>Buyers</dt>
          <dd>${analytics.buyers.distinct}</dd>
        </div>
      </dl>
    </section>
    <section aria-labelledby="liabilities-heading">
      <h2 id="liabilities-heading">Owed to package holders</h2>
      <dl class="dash-figures">
        <div>
          <dt>Live package keys</dt>
          <dd>${liabilities.live_keys}</dd>
        </div>
        <div>
          <dt>Calls not yet spent</dt>
          <dd>${liabilities.calls_unspent}</dd>
        </div>
        <div>
          <dt>Unearned</dt>
          <dd>${liabilities.unearned.amount} USD</dd>
        </div>
      </dl>
    </section>
    <section aria-labelledby="receipts-heading">
      <h2 id="receipts-heading">Latest receipts</h2>
      ${
        receipts.length === 0
          ? html`<p>No sales yet.</p>`
          : html`<table class="dash-table">
              <thead>
                <tr>
                  <th scope="col">Receipt</th>
                  <th scope="col">Product</th>
                  <th scope="col">Price</th>
                  <th scope="col">Network</th>
                  <th scope="col">Settled</th>
                </tr>
              </thead>
              <tbody>
                ${receipts.map(
                  (r) =>
                    html`<tr>
                      <td><a href="${r.receipt_url}">${r.id}</a>${r.test_mode ? html` <span class="dash-tag">rehearsal</span>` : ""}</td>
                      <td>${r.title}</td>
                      <td>${r.amount_usd} USD</td>
                      <td>${r.network}</td>
                      <td>${r.settled_at ?? "pending"}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
    </section>`;
}
