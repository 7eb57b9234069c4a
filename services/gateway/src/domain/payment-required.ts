import type { catalogV1, paymentsV1 } from "@c402/contracts";
import { formatUsd } from "@c402/money";
import type { PaymentRequired, PaymentRequirements } from "@c402/x402";
import { faceUrls, offerCardView } from "./views";

export type Face = "live" | "test";

export function requirementOf(m: paymentsV1.PaymentRequirement): PaymentRequirements {
  return {
    scheme: m.scheme,
    network: m.network,
    asset: m.asset,
    amount: m.amount,
    payTo: m.payTo,
    maxTimeoutSeconds: m.maxTimeoutSeconds,
    extra: JSON.parse(m.extraJson) as Record<string, unknown>,
  };
}

const REHEARSAL_NOTE = "This face is a rehearsal: payments settle simulated, without real money. Nothing moves on-chain.";

/**
 * The x402 v2 402 body of a checkout face: the protocol fields (also sent in
 * the PAYMENT-REQUIRED header), then the offer card and the endpoint block.
 */
export function paymentRequiredBody(opts: {
  checkout: catalogV1.Checkout;
  quote: paymentsV1.QuotePaymentResponse;
  face: Face;
  baseUrl: string;
  error?: string;
}) {
  const { checkout, quote, face, baseUrl } = opts;
  const urls = faceUrls(baseUrl, checkout.id);
  const resourceUrl = face === "test" ? urls.test_url : urls.url;
  const simulated = quote.settlement === 1; // SETTLEMENT_KIND_SIMULATED
  const price = quote.price;
  const required: PaymentRequired = {
    x402Version: 2,
    error: opts.error ?? "Payment required",
    resource: { url: resourceUrl, description: checkout.title, mimeType: "application/json" },
    // Each requirement also names the face it pays for (v1 style), so the test face's say /test.
    accepts: quote.accepts.map((a) => ({ ...requirementOf(a), resource: resourceUrl })),
  };
  const endpoint = {
    url: resourceUrl,
    method: "GET",
    pay: {
      headers: ["PAYMENT-SIGNATURE", "X-PAYMENT"],
      prepare: `${resourceUrl}/prepare`,
      how: "Sign one of accepts[] (EIP-3009 transferWithAuthorization), then retry this URL with the base64 payload in PAYMENT-SIGNATURE (or X-PAYMENT).",
    },
    settlement: simulated ? "simulated" : "onchain",
    ...(face === "test"
      ? {
          rehearsal: {
            test_mode: true,
            note: REHEARSAL_NOTE,
            live_url: checkout.armed ? urls.url : null,
            live_status: checkout.armed ? "The seller has gone live; the live face settles real payments." : "The seller has not gone live yet.",
          },
        }
      : {
          rehearsal: { test_url: urls.test_url, note: "Rehearse this purchase free at test_url." },
          ...(simulated ? { note: `The seller has not gone live yet. ${REHEARSAL_NOTE}` } : {}),
        }),
  };
  return {
    required,
    body: {
      ...required,
      offer: {
        title: checkout.title,
        description: checkout.description ?? null,
        price_usd: formatUsd(price?.price ?? 0n),
        fee_usd: formatUsd(price?.feeAmount ?? 0n),
        total_usd: formatUsd(price?.total ?? 0n),
        ...offerCardView(checkout),
      },
      endpoint,
    },
  };
}
