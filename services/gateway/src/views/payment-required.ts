import { paymentsV1, requirementFromMessage, type catalogV1 } from "@c402/contracts";
import { formatUsd } from "@c402/money";
import { toPaymentRequiredV1, type PaymentRequired } from "@c402/x402";
import type { Face, WireVersion } from "../faces/face";
import { faceUrl, faceUrls, offerCardView } from "./checkouts";
import { articleBlock, declarationOf } from "./content";

/**
 * The query parameter a buyer adds to a face URL to get the x402 v1 body the
 * legacy `x402-fetch` 1.2.0 client requires (docs/decisions.md). The
 * PAYMENT-REQUIRED header stays v2, so v2 clients work on either URL.
 */
export const WIRE_VERSION_PARAM = "x402_version";

const REHEARSAL_NOTE = "This face is a rehearsal: payments settle simulated, without real money. Nothing moves on-chain.";

/**
 * The 402 body of a checkout face: the protocol fields (x402 v2, or v1 when
 * asked for; the v2 form is always what the PAYMENT-REQUIRED header carries),
 * then the offer card and the endpoint block.
 */
export function paymentRequiredBody(opts: {
  checkout: catalogV1.Checkout;
  quote: paymentsV1.QuotePaymentResponse;
  face: Face;
  baseUrl: string;
  wireVersion?: WireVersion;
}) {
  const { checkout, quote, face, baseUrl } = opts;
  const urls = faceUrls(baseUrl, checkout.id);
  const resourceUrl = faceUrl(baseUrl, checkout.id, face);
  const simulated = quote.settlement === paymentsV1.SettlementKind.SIMULATED;
  const price = quote.price;
  const content = declarationOf(checkout);
  const required: PaymentRequired = {
    x402Version: 2,
    error: "Payment required",
    resource: { url: resourceUrl, description: checkout.title, mimeType: "application/json" },
    // Each requirement also names the face it pays for (v1 style), so the test face's say /test.
    accepts: quote.accepts.map((a) => ({ ...requirementFromMessage(a), resource: resourceUrl })),
  };
  const endpoint = {
    url: resourceUrl,
    method: "GET",
    pay: {
      headers: ["PAYMENT-SIGNATURE", "X-PAYMENT"],
      legacy_v1_url: `${resourceUrl}?${WIRE_VERSION_PARAM}=1`,
      prepare: `${resourceUrl}/prepare`,
      how: "Sign one of accepts[] (EIP-3009 transferWithAuthorization on EVM networks, a transfer transaction with extra.feePayer as fee payer on Solana, a signed Soroban authorization of one USDC transfer on Stellar), then retry this URL with the base64 payload in PAYMENT-SIGNATURE (or X-PAYMENT).",
    },
    settlement: simulated ? "simulated" : "onchain",
    ...(content ? { article: articleBlock(checkout, content) } : {}),
    ...(checkout.package
      ? {
          package: {
            calls: checkout.package.calls,
            expires_in_days: checkout.package.ttlDays,
            how: "The purchase answers a package_key (shown once) and the first call's answer. Spend the other calls with GET on this URL and Authorization: Bearer <package_key>; GET usage_url with the key shows what is left.",
            usage_url: `${resourceUrl.replace(/\/test$/, "")}/usage`,
          },
        }
      : {}),
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
  const protocol =
    opts.wireVersion === 1
      ? toPaymentRequiredV1({ ...required, accepts: required.accepts.map((a) => ({ ...a, resource: endpoint.pay.legacy_v1_url })) })
      : required;
  return {
    required,
    body: {
      ...protocol,
      offer: {
        title: checkout.title,
        description: checkout.description ?? null,
        price_usd: formatUsd(price?.price ?? 0n),
        fee_usd: formatUsd(price?.feeAmount ?? 0n),
        total_usd: formatUsd(price?.total ?? 0n),
        calls_included: checkout.package?.calls ?? null,
        ...offerCardView(checkout),
      },
      endpoint,
    },
  };
}
