import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { catalogV1, checkoutStatusName, identityV1, type paymentsV1 } from "@c402/contracts";
import { formatUsd } from "@c402/money";

/** The public JSON shapes of resources; one function per resource. */

const iso = (t?: Timestamp) => (t ? timestampDate(t).toISOString() : null);
const json = (text?: string) => (text === undefined ? null : (JSON.parse(text) as unknown));

export function faceUrls(baseUrl: string, checkoutId: string) {
  const url = `${baseUrl}/c/${checkoutId}`;
  return { url, test_url: `${url}/test` };
}

export function checkoutStatus(c: { status: catalogV1.CheckoutStatus }): string {
  return checkoutStatusName(c.status) ?? "unknown";
}

export function offerCardView(c: catalogV1.Checkout) {
  const o = c.offer;
  return {
    input_schema: json(o?.inputSchemaJson),
    output_schema: json(o?.outputSchemaJson),
    example_input: json(o?.exampleInputJson),
    example_output: json(o?.exampleOutputJson),
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
    fulfillment: "inline",
    reusable: c.reusable,
    test_mode: !c.armed,
    created_at: iso(c.createdAt),
    expires_at: iso(c.expiresAt),
    armed_at: iso(c.armedAt),
    test: { id: c.id, url: urls.test_url },
  };
}

export function checkoutView(c: catalogV1.Checkout, baseUrl: string) {
  return { ...checkoutSummaryView(c, baseUrl), payload: json(c.payloadJson), ...offerCardView(c) };
}

export function receiptView(r: paymentsV1.Receipt, baseUrl: string) {
  const platform = r.platformAmount === undefined ? null : Number(r.platformAmount);
  return {
    id: r.id,
    object: "receipt",
    checkout_id: r.checkoutId,
    title: r.checkoutTitle,
    network: r.network,
    asset: "USDC",
    asset_address: r.asset,
    amount_usd: r.amountUsd,
    provider_amount: Number(r.providerAmount),
    platform_amount: platform,
    fee_amount: Number(r.feeAmount),
    total: Number(r.total),
    payer: r.payer,
    subject: r.subject,
    pay_to: r.payTo,
    tx_hash: r.txHash,
    test_mode: r.testMode,
    settled_at: iso(r.settledAt),
    sold_by: r.soldBy ?? null,
    parties: null,
    handoff_id: r.handoffId ?? null,
    split: { seller: Number(r.providerAmount), platform: platform, protocol_fee: Number(r.feeAmount), total: Number(r.total), currency: "USDC", decimals: 6 },
    delivery: { outcome: r.deliveryOutcome },
    receipt_url: `${baseUrl}/r/${r.id}`,
  };
}

const SCOPE: Record<number, string> = { [identityV1.Scope.READ_ONLY]: "read_only", [identityV1.Scope.PAYMENTS]: "payments", [identityV1.Scope.FULL]: "full" };
const MODE: Record<number, string> = { [identityV1.KeyMode.TEST]: "test", [identityV1.KeyMode.LIVE]: "live" };

export function apiKeyView(k: identityV1.ApiKey) {
  return {
    id: k.id,
    object: "api_key",
    name: k.name ?? null,
    prefix: k.prefix,
    scope: SCOPE[k.scope] ?? "unknown",
    mode: MODE[k.mode] ?? "unknown",
    created_at: iso(k.createdAt),
    last_used_at: iso(k.lastUsedAt),
    revoked_at: iso(k.revokedAt),
  };
}
