import { timestampDate } from "@bufbuild/protobuf/wkt";
import { fulfillmentV1 } from "@c402/contracts";
import { answered } from "@c402/rpc";
import { faceUrls } from "./checkouts";
import { buyerErrorHelp, relayFulfillmentView } from "./payments";
import { receiptUrl } from "./receipts";
import { isoOrNull } from "./values";

/** The answers about packages of calls: the purchase's key, a spent call, and the usage record. */

const usageUrl = (baseUrl: string, checkoutId: string) => `${faceUrls(baseUrl, checkoutId).url}/usage`;

function statusOf(p: fulfillmentV1.PackageState, now: Date): "live" | "exhausted" | "expired" {
  if (p.expiresAt && timestampDate(p.expiresAt).getTime() <= now.getTime()) return "expired";
  return p.callsRemaining === 0 ? "exhausted" : "live";
}

/** A package as the buyer sees it (never its key). */
export function packageView(p: fulfillmentV1.PackageState, baseUrl: string, now = new Date()) {
  return {
    status: statusOf(p, now),
    calls_included: p.callsIncluded,
    calls_used: p.callsUsed,
    calls_remaining: p.callsRemaining,
    expires_at: isoOrNull(p.expiresAt),
    usage_url: usageUrl(baseUrl, p.checkoutId),
    how: "Spend a call: GET the checkout's URL with Authorization: Bearer <package_key> and the call's parameters.",
  };
}

/**
 * What a package purchase adds to the relay answer: the key, on the one
 * answer that created the package (null on a redelivery: it is never shown
 * again), and the calls left after the purchase's own.
 */
export function packagePurchaseFields(p: fulfillmentV1.PackageState, key: string | undefined, baseUrl: string) {
  return {
    package_key: key ?? null,
    deliveries_remaining: p.callsRemaining,
    package: {
      ...packageView(p, baseUrl),
      ...(key === undefined ? { note: "The package key was shown once, in the answer that created the package; it cannot be shown again." } : {}),
    },
  };
}

/** A spent call (charged): the origin's answer with its status (a buyer's request error keeps the origin's), and what is left. */
export function packageCallView(r: fulfillmentV1.SpendPackageCallResponse, baseUrl: string) {
  const delivery = answered(r.delivery, "delivery");
  const p = answered(r.package, "package");
  const mode = p.mcp ? "mcp" : "relay";
  const buyerError = delivery.outcome === fulfillmentV1.DeliveryOutcome.BUYER_ERROR;
  return {
    status: buyerError ? delivery.status : 200,
    body: {
      fulfillment: relayFulfillmentView(mode, delivery),
      calls_remaining: p.callsRemaining,
      call: { seq: r.seq, counted: true },
      package: packageView(p, baseUrl),
      receipt_url: receiptUrl(baseUrl, p.paymentId),
      test_mode: p.testMode,
      ...(buyerError ? buyerErrorHelp(baseUrl, p.checkoutId, p.paymentId) : {}),
    },
  };
}

/** GET /c/{id}/usage: the spec's usage record, its calls newest first, one page at a time. */
export function packageUsageView(r: fulfillmentV1.PackageUsageResponse, baseUrl: string, pageSize: number) {
  const p = answered(r.package, "package");
  const burn = r.burn;
  const last = r.calls.at(-1);
  return {
    object: "package_usage",
    checkout_id: p.checkoutId,
    test_mode: p.testMode,
    status: statusOf(p, new Date()),
    calls_included: p.callsIncluded,
    calls_used: p.callsUsed,
    calls_remaining: p.callsRemaining,
    expires_at: isoOrNull(p.expiresAt),
    receipt: { id: p.paymentId, url: receiptUrl(baseUrl, p.paymentId) },
    calls: r.calls.map((c) => ({
      seq: c.seq,
      at: isoOrNull(c.at),
      status: c.pending || c.status === 0 ? null : c.status,
      pending: c.pending,
      counted: c.counted,
      fault: c.fault ?? null,
      latency_ms: c.latencyMs,
      bytes: c.bytes,
    })),
    has_more: r.hasMore,
    next: r.hasMore && last ? `${usageUrl(baseUrl, p.checkoutId)}?limit=${pageSize}&before=${last.seq}` : null,
    burn: {
      calls_per_day: burn?.callsPerDay ?? null,
      projected_days_remaining: burn?.projectedDaysRemaining ?? null,
      runs_out_first: burn?.runsOutFirst ?? null,
      basis: burn?.basis ?? "insufficient_usage",
    },
  };
}
