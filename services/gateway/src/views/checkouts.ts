import { catalogV1, checkoutStatusName } from "@c402/contracts";
import { isId } from "@c402/ids";
import { formatUsd } from "@c402/money";
import type { Face } from "../faces/face";
import { windowsView } from "./escrow-settings";
import { payoutRailsView, platformFeeWalletsView } from "./payouts";
import { isoOrNull, jsonOrNull } from "./values";

/** The public JSON shapes of checkouts, and the URLs of their faces. */

/** The faces of a checkout: /c/{id} for an ordinary one, /x/{id} for a gated article, /e/{id} for an escrow one (separate namespaces). */
export function faceUrls(baseUrl: string, checkoutId: string) {
  const url = `${baseUrl}/${faceNamespaceOf(checkoutId)}/${checkoutId}`;
  return { url, test_url: `${url}/test` };
}

function faceNamespaceOf(checkoutId: string): "c" | "x" | "e" {
  if (isId("contentCheckout", checkoutId)) return "x";
  if (isId("escrowCheckout", checkoutId)) return "e";
  return "c";
}

/**
 * An escrow checkout's terms, frozen at create (windows in seconds); null for
 * any other checkout. Escrow is Base only here: arbiter_svm is kept as
 * resolved, but no Solana escrow rail is offered.
 */
export function escrowTermsView(c: catalogV1.CheckoutSummary | catalogV1.Checkout) {
  const e = c.escrow;
  return e ? { preset: e.preset, ...windowsView(e), arbiter_evm: e.arbiterEvm ?? null, arbiter_svm: e.arbiterSvm ?? null } : null;
}

/** The checkout's escrow twin (escrow_offer optional): on the plain checkout its esc_ twin, on the twin the plain checkout; null when none. */
export function escrowTwinView(c: catalogV1.CheckoutSummary | catalogV1.Checkout, baseUrl: string) {
  return c.escrowTwinId ? { id: c.escrowTwinId, url: faceUrls(baseUrl, c.escrowTwinId).url } : null;
}

/** The URL of one face of a checkout. */
export function faceUrl(baseUrl: string, checkoutId: string, face: Face): string {
  const urls = faceUrls(baseUrl, checkoutId);
  return face === "test" ? urls.test_url : urls.url;
}

const FULFILLMENT_NAMES: Partial<Record<catalogV1.Fulfillment, string>> = {
  [catalogV1.Fulfillment.INLINE]: "inline",
  [catalogV1.Fulfillment.RELAY]: "relay",
  [catalogV1.Fulfillment.MCP]: "mcp",
  [catalogV1.Fulfillment.WEBHOOK]: "webhook",
};
export const fulfillmentName = (f: catalogV1.Fulfillment): string => FULFILLMENT_NAMES[f] ?? "inline";

/**
 * A relay or mcp checkout's origin fields as the create named them; the one-off
 * credential never comes back (origin_auth_value is always null: sealed,
 * write-only), origin_auth_stored says one is kept.
 */
export function originView(c: catalogV1.Checkout) {
  const o = c.origin;
  return {
    origin_url: o?.url ?? null,
    origin_method: o ? o.method : null,
    origin_auth_type: o?.authType ?? null,
    origin_auth_header: o?.authHeader ?? null,
    origin_auth_secret_id: o?.originKeyId ?? null,
    origin_auth_value: null,
    origin_auth_stored: o?.oneOffCredential ?? false,
    mcp_tool: o?.mcpTool ?? null,
  };
}

/** A recurring series' terms, frozen at create; null for any other checkout. */
export function scheduleTermsView(c: catalogV1.CheckoutSummary | catalogV1.Checkout) {
  const s = c.schedule;
  return s ? { interval_days: s.intervalDays, periods: s.periods } : null;
}

/** A package checkout's terms (both null when one payment buys one call). */
export function packageTermsView(c: catalogV1.CheckoutSummary | catalogV1.Checkout) {
  const p = c.package;
  return { max_deliveries: p?.calls ?? null, package_ttl_days: p?.ttlDays ?? null };
}

export function checkoutStatus(c: { status: catalogV1.CheckoutStatus }): string {
  return checkoutStatusName(c.status) ?? "unknown";
}

export function offerCardView(c: catalogV1.Checkout) {
  const o = c.offer;
  return {
    input_schema: jsonOrNull(o?.inputSchemaJson),
    output_schema: jsonOrNull(o?.outputSchemaJson),
    example_input: jsonOrNull(o?.exampleInputJson),
    example_output: jsonOrNull(o?.exampleOutputJson),
    freshness: o?.freshness ?? null,
    coverage: o?.coverage ?? null,
    source: o?.source ?? null,
    constraints: o?.constraints ?? null,
  };
}

/** A checkout as lists show it: everything but the goods and the offer card (GET by id has those). */
export function checkoutSummaryView(c: catalogV1.CheckoutSummary | catalogV1.Checkout, baseUrl: string) {
  const urls = faceUrls(baseUrl, c.id);
  return {
    id: c.id,
    object: "checkout",
    ...urls,
    status: checkoutStatus(c),
    title: c.title,
    description: c.description ?? null,
    price_usd: formatUsd(c.priceAtomic),
    pay_to: c.payTo,
    payouts: payoutRailsView(c),
    fulfillment: fulfillmentName(c.fulfillment),
    ...packageTermsView(c),
    escrow: escrowTermsView(c),
    escrow_twin: escrowTwinView(c, baseUrl),
    schedule: scheduleTermsView(c),
    reusable: c.reusable,
    test_mode: !c.armed,
    created_at: isoOrNull(c.createdAt),
    expires_at: isoOrNull(c.expiresAt),
    armed_at: isoOrNull(c.armedAt),
    test: { id: c.id, url: urls.test_url },
  };
}

/** The create fields a checkout keeps as sent (catalog's CheckoutSettings), with their defaults. */
export function checkoutSettingsView(c: catalogV1.Checkout) {
  const s = c.settings;
  return {
    parties: jsonOrNull(s?.partiesJson),
    platform_fee_bps: s?.platformFeeBps ?? 0,
    platform_fee_to: s?.platformFeeTo ?? null,
    platform_fee_wallets: platformFeeWalletsView(s),
    sold_by: s?.soldBy ?? null,
    inherit_account_payouts: s?.inheritAccountPayouts ?? true,
    wallet_button: s?.walletButton ?? false,
    test_delivery_daily_cap: s?.testDeliveryDailyCap ?? 25,
  };
}

export function checkoutView(c: catalogV1.Checkout, baseUrl: string) {
  return {
    ...checkoutSummaryView(c, baseUrl),
    payload: jsonOrNull(c.payloadJson),
    content: jsonOrNull(c.contentJson),
    ...originView(c),
    ...offerCardView(c),
    ...checkoutSettingsView(c),
  };
}

/** The answer to a go-live: the armed checkout, and where its rehearsal goes on. */
export function goLiveView(c: catalogV1.Checkout, alreadyLive: boolean, baseUrl: string) {
  const view = checkoutView(c, baseUrl);
  return {
    ...view,
    already_live: alreadyLive,
    rehearsal: { test_url: view.test_url, note: "The rehearsal face keeps settling simulated payments at test_url; it can never be armed." },
  };
}

/**
 * The answer to a DELETE: what was retired, and what buyers still hold
 * against it (voiding never waits for that). The checkout itself stays
 * readable, and its receipts resolve.
 */
export function voidView(r: catalogV1.VoidCheckoutResponse, baseUrl: string) {
  const l = r.liabilities;
  return {
    voided: r.voided,
    already_void: r.alreadyVoid,
    liabilities: {
      live_keys: l?.liveKeys ?? 0,
      calls_unspent: Number(l?.callsUnspent ?? 0n),
      unearned: { amount: formatUsd(l?.unearnedAtomic ?? 0n), currency: "USD" },
    },
    checkout: r.checkout ? checkoutView(r.checkout, baseUrl) : null,
    note: "Its faces now answer 410; receipts still resolve. POST /v1/checkouts/{id}/restore undoes this.",
  };
}
