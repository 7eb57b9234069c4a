import { actorOfRequest } from "@c402/account-events";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogV1, checkoutStatusToProto } from "@c402/contracts";
import { invalid } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import type { Catalog } from "../domain/catalog";
import { effectiveStatus, OFFER_JSON_FIELDS, OFFER_TEXT_FIELDS } from "../domain/checkout-rules";
import type { EscrowTerms, EscrowTermsInput } from "../domain/escrow-rules";
import { platformFeeRailsOf, railsOf } from "../domain/payout-rails";
import type { CheckoutPage, CheckoutRow, CheckoutSummaryRow } from "../store/catalog-store";
import type { ReportMethod } from "./report-rpc";

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
    fulfillment: FULFILLMENTS[c.fulfillment] ?? catalogV1.Fulfillment.INLINE,
    reusable: c.reusable,
    armed: c.armed,
    status: checkoutStatusToProto(effectiveStatus(c, now)),
    createdAt: timestampFromDate(c.created_at),
    ...(c.expires_at ? { expiresAt: timestampFromDate(c.expires_at) } : {}),
    ...(c.armed_at ? { armedAt: timestampFromDate(c.armed_at) } : {}),
    payoutRails: railsOf(c).map((r) => ({ $typeName: "catalog.v1.PayoutRail" as const, ...r })),
    ...(c.max_deliveries !== null
      ? { package: { $typeName: "catalog.v1.PackageTerms", calls: c.max_deliveries, ttlDays: c.package_ttl_days ?? 30 } as const }
      : {}),
    ...(c.escrow !== null ? { escrow: escrowMessage(c.escrow) } : {}),
    ...(c.escrow_twin_id !== null ? { escrowTwinId: c.escrow_twin_id } : {}),
    ...(c.schedule !== null
      ? { schedule: { $typeName: "catalog.v1.CheckoutSchedule", intervalDays: c.schedule.interval_days, periods: c.schedule.periods } as const }
      : {}),
  };
}

function escrowMessage(t: EscrowTerms): catalogV1.CheckoutEscrow {
  return {
    $typeName: "catalog.v1.CheckoutEscrow",
    preset: t.preset,
    settleSeconds: t.settle_seconds,
    holdSeconds: t.hold_seconds,
    backstopSeconds: t.backstop_seconds,
    arbiterEvm: t.arbiter_evm,
    ...(t.arbiter_svm !== null ? { arbiterSvm: t.arbiter_svm } : {}),
  };
}

/** The escrow terms a create request sends (catalog.v1.CheckoutEscrow), as the domain takes them. */
function escrowInputOf(m: catalogV1.CheckoutEscrow): EscrowTermsInput {
  return {
    preset: m.preset,
    settleSeconds: m.settleSeconds,
    holdSeconds: m.holdSeconds,
    backstopSeconds: m.backstopSeconds,
    ...(m.arbiterEvm !== undefined ? { arbiterEvm: m.arbiterEvm } : {}),
    ...(m.arbiterSvm !== undefined ? { arbiterSvm: m.arbiterSvm } : {}),
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
    ...(c.content_json !== null ? { contentJson: c.content_json } : {}),
    offer,
    ...(c.origin_url !== null ? { origin: originMessage(c, c.origin_url) } : {}),
    settings: {
      $typeName: "catalog.v1.CheckoutSettings",
      ...(c.parties !== null ? { partiesJson: JSON.stringify(c.parties) } : {}),
      platformFeeBps: c.platform_fee_bps,
      ...(c.platform_fee_to !== null ? { platformFeeTo: c.platform_fee_to } : {}),
      platformFeeRails: platformFeeRailsOf(c).map((r) => ({ $typeName: "catalog.v1.PayoutRail" as const, ...r })),
      ...(c.sold_by !== null ? { soldBy: c.sold_by } : {}),
      inheritAccountPayouts: c.inherit_account_payouts,
      walletButton: c.wallet_button,
      testDeliveryDailyCap: c.test_delivery_daily_cap,
    },
  };
}

/** A relay checkout's origin: how it is called, never the credential. */
function originMessage(c: CheckoutRow, url: string): catalogV1.Origin {
  return {
    $typeName: "catalog.v1.Origin",
    url,
    method: c.origin_method ?? "GET",
    ...(c.origin_auth_type !== null ? { authType: c.origin_auth_type } : {}),
    ...(c.origin_auth_header !== null ? { authHeader: c.origin_auth_header } : {}),
    ...(c.origin_key_id !== null ? { originKeyId: c.origin_key_id } : {}),
    oneOffCredential: c.origin_one_off,
    mcp: c.fulfillment === "mcp",
    ...(c.mcp_tool !== null ? { mcpTool: c.mcp_tool } : {}),
  };
}

const FULFILLMENTS: Record<string, catalogV1.Fulfillment> = {
  inline: catalogV1.Fulfillment.INLINE,
  relay: catalogV1.Fulfillment.RELAY,
  mcp: catalogV1.Fulfillment.MCP,
  webhook: catalogV1.Fulfillment.WEBHOOK,
};

/** The offer card's text claims only (a public catalogue carries no schemas or examples). */
function offerClaimsOf(offer: Record<string, string | null>): catalogV1.OfferCard {
  const card: catalogV1.OfferCard = { $typeName: "catalog.v1.OfferCard" };
  for (const f of OFFER_TEXT_FIELDS) {
    const v = offer[f];
    if (typeof v === "string") card[f] = v;
  }
  return card;
}

/** The offer-card values a request sets, by column (`freshness`, `input_schema_json`). */
function offerInputOf(card: catalogV1.OfferCard | undefined): Record<string, string> {
  const offer: Record<string, string> = {};
  for (const f of OFFER_TEXT_FIELDS) if (card?.[f] !== undefined) offer[f] = card[f] as string;
  for (const f of OFFER_JSON_FIELDS) {
    const v = card?.[OFFER_KEYS[`${f}_json`] as keyof catalogV1.OfferCard];
    if (typeof v === "string") offer[`${f}_json`] = v;
  }
  return offer;
}

function pageOf(req: catalogV1.ListCheckoutsRequest | catalogV1.ListSellingOffersRequest): CheckoutPage {
  if (!req.after) return { size: req.pageSize };
  if (!req.after.createdAt || !req.after.id) throw invalid([{ field: "after", reason: "needs created_at and id" }]);
  return { size: req.pageSize, after: { createdAt: timestampDate(req.after.createdAt), id: req.after.id } };
}

/** CatalogService's checkout methods; the report methods are report-rpc.ts's. */
export function catalogRpc(catalog: Catalog, now: () => Date = () => new Date()): Omit<ServiceImplementation<typeof catalogV1.CatalogService>, ReportMethod> {
  return {
    async createCheckout(req) {
      const offer = offerInputOf(req.offer);
      const { checkout, replayed } = await catalog.create({
        accountId: req.accountId,
        actor: actorOfRequest(req.actor),
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
        ...(req.partiesJson !== undefined ? { partiesJson: req.partiesJson } : {}),
        ...(req.platformFeeBps !== undefined ? { platformFeeBps: req.platformFeeBps } : {}),
        ...(req.inheritAccountPayouts !== undefined ? { inheritAccountPayouts: req.inheritAccountPayouts } : {}),
        ...(req.walletButton !== undefined ? { walletButton: req.walletButton } : {}),
        ...(req.testDeliveryDailyCap !== undefined ? { testDeliveryDailyCap: req.testDeliveryDailyCap } : {}),
        ...(req.originUrl !== undefined ? { originUrl: req.originUrl } : {}),
        ...(req.originMethod !== undefined ? { originMethod: req.originMethod } : {}),
        ...(req.originAuthType !== undefined ? { originAuthType: req.originAuthType } : {}),
        ...(req.originAuthValue !== undefined ? { originAuthValue: req.originAuthValue } : {}),
        ...(req.originAuthHeader !== undefined ? { originAuthHeader: req.originAuthHeader } : {}),
        ...(req.originAuthSecretId !== undefined ? { originAuthSecretId: req.originAuthSecretId } : {}),
        ...(req.mcpTool !== undefined ? { mcpTool: req.mcpTool } : {}),
        ...(req.maxDeliveries !== undefined ? { maxDeliveries: req.maxDeliveries } : {}),
        ...(req.packageTtlDays !== undefined ? { packageTtlDays: req.packageTtlDays } : {}),
        ...(req.contentJson !== undefined ? { contentJson: req.contentJson } : {}),
        ...(req.escrow ? { escrow: escrowInputOf(req.escrow) } : {}),
        ...(req.escrowTwin ? { escrowTwin: escrowInputOf(req.escrowTwin) } : {}),
        ...(req.schedule ? { schedule: { intervalDays: req.schedule.intervalDays, periods: req.schedule.periods } } : {}),
      });
      return { checkout: checkoutMessage(checkout, now()), replayed };
    },
    async getCheckout(req) {
      const n = now();
      const r = await catalog.getRevised(req.checkoutId, req.knownRevision, req.accountId);
      return {
        ...(r.checkout ? { checkout: checkoutMessage(r.checkout, n) } : {}),
        revision: r.revision,
        status: checkoutStatusToProto(effectiveStatus(r.state, n)),
      };
    },
    async listCheckouts(req) {
      const n = now();
      const rows = await catalog.list(req.accountId, req.includeVoided, pageOf(req));
      return { checkouts: rows.map((c) => ({ $typeName: "catalog.v1.CheckoutSummary" as const, ...summaryFields(c, n) })) };
    },
    async listSellingOffers(req) {
      const n = now();
      const rows = await catalog.listSelling(req.accountId, pageOf(req));
      return {
        offers: rows.map((c) => ({
          $typeName: "catalog.v1.SellingOffer" as const,
          checkout: { $typeName: "catalog.v1.CheckoutSummary" as const, ...summaryFields(c, n) },
          offer: offerClaimsOf(c.offer),
        })),
      };
    },
    async resolveRetiredTwin(req) {
      const liveId = await catalog.liveOfRetiredTwin(req.checkoutId);
      return liveId === undefined ? {} : { liveId };
    },
    async goLive(req) {
      const { checkout, alreadyLive } = await catalog.goLive(req.accountId, req.checkoutId, actorOfRequest(req.actor));
      return { checkout: checkoutMessage(checkout, now()), alreadyLive };
    },
    async updateCheckout(req) {
      const patch = req.patch;
      const { checkout, changed } = await catalog.update(
        req.accountId,
        req.checkoutId,
        {
          ...(patch?.title !== undefined ? { title: patch.title } : {}),
          ...(patch?.description !== undefined ? { description: patch.description } : {}),
          offer: offerInputOf(patch?.offer),
          clear: patch?.clear ?? [],
          ...(patch?.payloadJson !== undefined ? { payloadJson: patch.payloadJson } : {}),
          ...(patch?.contentJson !== undefined ? { contentJson: patch.contentJson } : {}),
        },
        actorOfRequest(req.actor),
      );
      return { checkout: checkoutMessage(checkout, now()), changed };
    },
    async voidCheckout(req) {
      const { checkout, alreadyVoid, liabilities: owed } = await catalog.void(req.accountId, req.checkoutId, actorOfRequest(req.actor));
      const liabilities = { $typeName: "catalog.v1.Liabilities" as const, ...owed };
      return { checkout: checkoutMessage(checkout, now()), voided: [checkout.id], liabilities, alreadyVoid };
    },
    async restoreCheckout(req) {
      const { checkout, restored } = await catalog.restore(req.accountId, req.checkoutId, actorOfRequest(req.actor));
      return { checkout: checkoutMessage(checkout, now()), restored };
    },
    async addPayoutRail(req) {
      const checkout = await catalog.addPayoutRail(req.accountId, req.checkoutId, req.chainFamily, req.address, actorOfRequest(req.actor));
      return { checkout: checkoutMessage(checkout, now()) };
    },
    async extendCheckout(req) {
      const minutes = req.expiresInMinutes === undefined ? null : Number(req.expiresInMinutes);
      return { checkout: checkoutMessage(await catalog.extend(req.accountId, req.checkoutId, minutes, actorOfRequest(req.actor)), now()) };
    },
  };
}
