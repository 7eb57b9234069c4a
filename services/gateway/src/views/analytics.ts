import type { fulfillmentV1, paymentsV1 } from "@c402/contracts";
import { formatUsd } from "@c402/money";

/**
 * GET /v1/analytics (docs/decisions.md "Analytics"): a window of whole UTC
 * days ending today, its sales summed exactly in USDC atomic units (per day,
 * every day of the window listed; per checkout, largest first), distinct and
 * returning buyers, deliveries that failed on the seller's side, and what
 * live packages still owe.
 */

const DAY_MS = 86_400_000;

/** The window's first instant: midnight UTC `days - 1` days before today. */
export function windowStart(now: Date, days: number): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - (days - 1) * DAY_MS);
}

function sumsView(s: paymentsV1.SalesSums | undefined) {
  return {
    payments: s?.payments ?? 0,
    gross_usd: formatUsd(s?.priceAmount ?? 0n),
    seller_amount: Number(s?.providerAmount ?? 0n),
    platform_amount: Number(s?.platformAmount ?? 0n),
    fee_amount: Number(s?.feeAmount ?? 0n),
    total: Number(s?.total ?? 0n),
  };
}

const unearnedView = (atomic: bigint) => ({ amount: formatUsd(atomic), currency: "USD" });

export function analyticsView(opts: {
  days: number;
  since: Date;
  now: Date;
  testMode: boolean;
  sales: paymentsV1.SalesAnalyticsResponse;
  fulfillment: fulfillmentV1.AccountFulfillmentResponse;
}) {
  const { sales, fulfillment } = opts;
  const byDay = new Map(sales.days.map((d) => [d.day, d.sums]));
  const perDay = Array.from({ length: opts.days }, (_, i) => {
    const day = new Date(opts.since.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    return { date: day, ...sumsView(byDay.get(day)) };
  });
  const totals = fulfillment.totals;
  return {
    object: "analytics",
    days: opts.days,
    since: opts.since.toISOString(),
    until: opts.now.toISOString(),
    test_mode: opts.testMode,
    currency: "USDC",
    decimals: 6,
    earnings: {
      ...sumsView(sales.totals),
      per_day: perDay,
      per_checkout: sales.checkouts.map((c) => ({ checkout_id: c.checkoutId, title: c.title, ...sumsView(c.sums) })),
    },
    buyers: { distinct: sales.distinctBuyers, returning: sales.returningBuyers },
    failed_deliveries: {
      purchases: fulfillment.failedDeliveries,
      package_calls: fulfillment.failedPackageCalls,
      total: fulfillment.failedDeliveries + fulfillment.failedPackageCalls,
    },
    liabilities: {
      live_keys: totals?.liveKeys ?? 0,
      calls_unspent: Number(totals?.callsUnspent ?? 0n),
      unearned: unearnedView(totals?.unearnedAtomic ?? 0n),
      offers: fulfillment.offers.map((o) => ({
        checkout_id: o.checkoutId,
        live_keys: o.liveKeys,
        calls_unspent: Number(o.callsUnspent),
        unearned: unearnedView(o.unearnedAtomic),
      })),
    },
  };
}
