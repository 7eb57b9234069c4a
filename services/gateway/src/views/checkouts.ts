import { catalogV1, checkoutStatusName } from "@c402/contracts";
import { formatUsd } from "@c402/money";
import type { Face } from "../faces/face";
import { isoOrNull, jsonOrNull } from "./values";

/** The public JSON shapes of checkouts, and the URLs of their faces. */

export function faceUrls(baseUrl: string, checkoutId: string) {
  const url = `${baseUrl}/c/${checkoutId}`;
  return { url, test_url: `${url}/test` };
}

/** The URL of one face of a checkout. */
export function faceUrl(baseUrl: string, checkoutId: string, face: Face): string {
  const urls = faceUrls(baseUrl, checkoutId);
  return face === "test" ? urls.test_url : urls.url;
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
    fulfillment: "inline",
    reusable: c.reusable,
    test_mode: !c.armed,
    created_at: isoOrNull(c.createdAt),
    expires_at: isoOrNull(c.expiresAt),
    armed_at: isoOrNull(c.armedAt),
    test: { id: c.id, url: urls.test_url },
  };
}

export function checkoutView(c: catalogV1.Checkout, baseUrl: string) {
  return { ...checkoutSummaryView(c, baseUrl), payload: jsonOrNull(c.payloadJson), ...offerCardView(c) };
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
