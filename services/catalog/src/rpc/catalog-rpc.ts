import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogV1, checkoutStatusToProto } from "@c402/contracts";
import { invalid } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import type { Catalog } from "../domain/catalog";
import { effectiveStatus, OFFER_JSON_FIELDS, OFFER_TEXT_FIELDS } from "../domain/checkout-rules";
import type { CheckoutPage, CheckoutRow, CheckoutSummaryRow } from "../store/catalog-store";

type OfferKey = "freshness" | "coverage" | "source" | "constraints" | "inputSchemaJson" | "outputSchemaJson" | "exampleInputJson" | "exampleOutputJson";

const OFFER_KEYS: Record<string, OfferKey> = {
  freshness: "freshness",
  coverage: "coverage",
  source: "source",
  constraints: "constraints",
  input_schema_json: "inputSchemaJson",
  output_schema_json: "outputSchemaJson",
  example_input_json: "exampleInputJson",
  example_output_json: "exampleOutputJson",
};

/** The fields a checkout and its summary share. */
function summaryFields(c: CheckoutSummaryRow, now: Date): Omit<catalogV1.CheckoutSummary, "$typeName"> {
  return {
    id: c.id,
    accountId: c.account_id,
    title: c.title,
    ...(c.description !== null ? { description: c.description } : {}),
    priceAtomic: c.price_atomic,
    payTo: c.pay_to,
    fulfillment: catalogV1.Fulfillment.INLINE,
    reusable: c.reusable,
    armed: c.armed,
    status: checkoutStatusToProto(effectiveStatus(c.status, c.expires_at, now)),
    createdAt: timestampFromDate(c.created_at),
    ...(c.expires_at ? { expiresAt: timestampFromDate(c.expires_at) } : {}),
    ...(c.armed_at ? { armedAt: timestampFromDate(c.armed_at) } : {}),
  };
}

function checkoutMessage(c: CheckoutRow, now: Date): catalogV1.Checkout {
  const offer: catalogV1.OfferCard = { $typeName: "catalog.v1.OfferCard" };
  for (const [column, key] of Object.entries(OFFER_KEYS)) {
    const v = c.offer[column];
    if (v !== null && v !== undefined) offer[key] = v;
  }
  return {
    $typeName: "catalog.v1.Checkout",
    ...summaryFields(c, now),
    ...(c.payload_json !== null ? { payloadJson: c.payload_json } : {}),
    offer,
  };
}

function pageOf(req: catalogV1.ListCheckoutsRequest): CheckoutPage {
  if (!req.after) return { size: req.pageSize };
  if (!req.after.createdAt || !req.after.id) throw invalid([{ field: "after", reason: "needs created_at and id" }]);
  return { size: req.pageSize, after: { createdAt: timestampDate(req.after.createdAt), id: req.after.id } };
}

export function catalogRpc(catalog: Catalog, now: () => Date = () => new Date()): ServiceImplementation<typeof catalogV1.CatalogService> {
  return {
    async createCheckout(req) {
      const offer: Record<string, string> = {};
      for (const f of OFFER_TEXT_FIELDS) if (req.offer?.[f] !== undefined) offer[f] = req.offer[f] as string;
      for (const f of OFFER_JSON_FIELDS) {
        const v = req.offer?.[OFFER_KEYS[`${f}_json`] as keyof catalogV1.OfferCard];
        if (typeof v === "string") offer[`${f}_json`] = v;
      }
      const { checkout, replayed } = await catalog.create({
        accountId: req.accountId,
        fingerprint: req.requestFingerprint,
        ...(req.idempotencyKey !== undefined ? { idempotencyKey: req.idempotencyKey } : {}),
        title: req.title,
        priceUsd: req.priceUsd,
        ...(req.payTo !== undefined ? { payTo: req.payTo } : {}),
        ...(req.description !== undefined ? { description: req.description } : {}),
        ...(req.fulfillment !== undefined ? { fulfillment: req.fulfillment } : {}),
        ...(req.payloadJson !== undefined ? { payloadJson: req.payloadJson } : {}),
        ...(req.reusable !== undefined ? { reusable: req.reusable } : {}),
        ...(req.testMode !== undefined ? { testMode: req.testMode } : {}),
        ...(req.expiresInMinutes !== undefined ? { expiresInMinutes: req.expiresInMinutes } : {}),
        offer,
        createdWithLiveKey: req.createdWithLiveKey,
      });
      return { checkout: checkoutMessage(checkout, now()), replayed };
    },
    async getCheckout(req) {
      return { checkout: checkoutMessage(await catalog.get(req.checkoutId, req.accountId), now()) };
    },
    async listCheckouts(req) {
      const n = now();
      const rows = await catalog.list(req.accountId, req.includeVoided, pageOf(req));
      return { checkouts: rows.map((c) => ({ $typeName: "catalog.v1.CheckoutSummary" as const, ...summaryFields(c, n) })) };
    },
    async goLive(req) {
      const { checkout, alreadyLive } = await catalog.goLive(req.accountId, req.checkoutId);
      return { checkout: checkoutMessage(checkout, now()), alreadyLive };
    },
  };
}
