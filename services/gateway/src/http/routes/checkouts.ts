import { createHash } from "node:crypto";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router, type Request } from "express";
import { forgetFaces, type FaceQuotes } from "../../faces/answers";
import { checkoutSummaryView, checkoutView, goLiveView, voidView } from "../../views/checkouts";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { invalid } from "@c402/problems";
import { CHECKOUT_VALIDATED_NOT_YET_FIELDS, type BodyOf } from "../request-schemas";
import { NOT_AVAILABLE_YET, validateBody, validateBodyWithholding } from "../validate";

/** /v1/checkouts: a seller creates, lists, reads, arms, changes, voids, restores and extends checkouts. */

type CheckoutCreate = BodyOf<"CheckoutCreate">;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON text of a goods value, or undefined for absent/null. */
const jsonOf = (v: unknown) => (v === undefined || v === null ? undefined : JSON.stringify(v));

/** Key-sorted JSON text; its recursion is bounded because every body's depth is (json-bounds). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The body, validated; a field the spec names but this deployment does not offer yet is refused by name. */
function checkoutBodyOf(raw: unknown): CheckoutCreate {
  const body = validateBody("CheckoutCreate", raw);
  // Valid as the spec says, but their feature is not built yet: refused by name.
  const errors = CHECKOUT_VALIDATED_NOT_YET_FIELDS.filter((f) => body[f] !== undefined && body[f] !== null).map((field) => ({
    field,
    reason: NOT_AVAILABLE_YET,
  }));
  const [interval, periods] = [body.schedule_interval_days, body.schedule_periods];
  if ((interval === undefined) !== (periods === undefined)) {
    errors.unshift({
      field: interval === undefined ? "schedule_interval_days" : "schedule_periods",
      reason: "is required with the other schedule field (both or neither)",
    });
  }
  if (errors.length) throw invalid(errors);
  return body;
}

function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get("idempotency-key");
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new ProblemError("invalid-request", {
      message: "Invalid Idempotency-Key.",
      errors: [{ field: "Idempotency-Key", reason: "must be 1 to 255 visible ASCII characters" }],
    });
  }
  return key;
}

/** The checkout's own fields of catalog's CreateCheckout, from the body. */
function checkoutFieldsOf(body: CheckoutCreate) {
  return {
    title: body.title,
    priceUsd: body.price_usd,
    ...(body.pay_to !== undefined ? { payTo: body.pay_to } : {}),
    ...(typeof body.description === "string" ? { description: body.description } : {}),
    ...(body.fulfillment !== undefined ? { fulfillment: body.fulfillment } : {}),
    ...(jsonOf(body.payload) !== undefined ? { payloadJson: jsonOf(body.payload) } : {}),
    ...(body.reusable !== undefined ? { reusable: body.reusable } : {}),
    ...(typeof body.test_mode === "boolean" ? { testMode: body.test_mode } : {}),
    ...(typeof body.expires_in_minutes === "number" ? { expiresInMinutes: BigInt(body.expires_in_minutes) } : {}),
    ...(body.parties !== undefined && body.parties !== null ? { partiesJson: JSON.stringify(body.parties) } : {}),
    ...(body.platform_fee_bps !== undefined ? { platformFeeBps: body.platform_fee_bps } : {}),
    ...(body.inherit_account_payouts !== undefined ? { inheritAccountPayouts: body.inherit_account_payouts } : {}),
    ...(body.wallet_button !== undefined ? { walletButton: body.wallet_button } : {}),
    ...(body.test_delivery_daily_cap !== undefined ? { testDeliveryDailyCap: body.test_delivery_daily_cap } : {}),
    ...(typeof body.origin_url === "string" ? { originUrl: body.origin_url } : {}),
    ...(body.origin_method !== undefined ? { originMethod: body.origin_method } : {}),
    ...(typeof body.origin_auth_type === "string" ? { originAuthType: body.origin_auth_type } : {}),
    ...(typeof body.origin_auth_value === "string" ? { originAuthValue: body.origin_auth_value } : {}),
    ...(typeof body.origin_auth_header === "string" ? { originAuthHeader: body.origin_auth_header } : {}),
    ...(typeof body.origin_auth_secret_id === "string" ? { originAuthSecretId: body.origin_auth_secret_id } : {}),
    ...(body.mcp_tool !== undefined ? { mcpTool: body.mcp_tool } : {}),
    ...(typeof body.max_deliveries === "number" ? { maxDeliveries: body.max_deliveries } : {}),
    ...(body.package_ttl_days !== undefined ? { packageTtlDays: body.package_ttl_days } : {}),
    offer: offerCardOf(body),
  };
}

/** Fields fixed at create: a PATCH naming one is refused with this reason (not as an unknown field). */
const IMMUTABLE_FIELDS = ["price_usd", "pay_to"] as const;

const OFFER_TEXT = ["freshness", "coverage", "source", "constraints"] as const;
const OFFER_JSON = {
  input_schema: "inputSchemaJson",
  output_schema: "outputSchemaJson",
  example_input: "exampleInputJson",
  example_output: "exampleOutputJson",
} as const;

/** The offer-card values a create or PATCH body sets (null and absent set nothing), as catalog's OfferCard. */
function offerCardOf(body: Partial<Record<(typeof OFFER_TEXT)[number], string | null> & Record<keyof typeof OFFER_JSON, unknown>>) {
  const offer: Record<string, string> = {};
  for (const f of OFFER_TEXT) {
    const v = body[f];
    if (typeof v === "string") offer[f] = v;
  }
  for (const [field, key] of Object.entries(OFFER_JSON)) {
    const v = body[field as keyof typeof OFFER_JSON];
    if (v !== undefined && v !== null) offer[key] = JSON.stringify(v);
  }
  return offer;
}

/** catalog's OfferPatch from a PATCH body: a value sets the field, null clears it, an absent field stays. */
function offerPatchOf(raw: unknown) {
  const body = validateBodyWithholding("CheckoutOfferPatch", raw, IMMUTABLE_FIELDS, "cannot be changed after create");
  const clear = Object.entries(body)
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  return {
    ...(typeof body.title === "string" ? { title: body.title } : {}),
    ...(typeof body.description === "string" ? { description: body.description } : {}),
    offer: offerCardOf(body),
    clear,
  };
}

export function checkoutRoutes({ clients, settings }: GatewayDeps, quotes: FaceQuotes): Router {
  const router = Router();

  router.post("/v1/checkouts", requireScope(clients, "payments"), async (req, res) => {
    const raw: unknown = req.body ?? {};
    const body = checkoutBodyOf(raw);
    const idempotencyKey = idempotencyKeyOf(req);
    const cred = credentialOf(req);
    const r = await clients.catalog.createCheckout({
      accountId: cred.accountId,
      actor: cred.actor,
      createdWithLiveKey: cred.mode === "live",
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      requestFingerprint: createHash("sha256").update(canonical(raw)).digest("hex"),
      ...checkoutFieldsOf(body),
    });
    if (r.replayed) res.setHeader("Idempotency-Replayed", "true");
    res.status(201).json(checkoutView(answered(r.checkout, "checkout"), settings.baseUrl));
  });

  router.get("/v1/checkouts", requireScope(clients, "read_only"), async (req, res) => {
    const includeVoided = req.query.include_voided === "true";
    if (req.query.include_voided !== undefined && !["true", "false"].includes(String(req.query.include_voided))) {
      throw new ProblemError("invalid-request", { message: "Invalid query.", errors: [{ field: "include_voided", reason: "must be true or false" }] });
    }
    const page = pageRequestOf(req.query);
    const r = await clients.catalog.listCheckouts({ accountId: credentialOf(req).accountId, includeVoided, ...servicePage(page) });
    const { items, ...more } = pageOf(r.checkouts, page.limit, createdAtKey);
    res.json({ checkouts: items.map((c) => checkoutSummaryView(c, settings.baseUrl)), ...more });
  });

  router.get("/v1/checkouts/:id", requireScope(clients, "read_only"), async (req, res) => {
    const r = await clients.catalog.getCheckout({ checkoutId: String(req.params.id), accountId: credentialOf(req).accountId });
    res.json(checkoutView(answered(r.checkout, "checkout"), settings.baseUrl));
  });

  router.post("/v1/checkouts/:id/go-live", requireScope(clients, "payments"), async (req, res) => {
    const cred = credentialOf(req);
    const r = await clients.catalog.goLive({ accountId: cred.accountId, actor: cred.actor, checkoutId: String(req.params.id) });
    forgetFaces(quotes, String(req.params.id));
    res.json(goLiveView(answered(r.checkout, "checkout"), r.alreadyLive, settings.baseUrl));
  });

  // Every change below can change what a face answers: its cached 402s are dropped at once.
  router.patch("/v1/checkouts/:id", requireScope(clients, "payments"), async (req, res) => {
    const patch = offerPatchOf(req.body ?? {});
    const cred = credentialOf(req);
    const r = await clients.catalog.updateCheckout({ accountId: cred.accountId, actor: cred.actor, checkoutId: String(req.params.id), patch });
    forgetFaces(quotes, String(req.params.id));
    res.json(checkoutView(answered(r.checkout, "checkout"), settings.baseUrl));
  });

  router.delete("/v1/checkouts/:id", requireScope(clients, "payments"), async (req, res) => {
    const cred = credentialOf(req);
    const r = await clients.catalog.voidCheckout({ accountId: cred.accountId, actor: cred.actor, checkoutId: String(req.params.id) });
    forgetFaces(quotes, String(req.params.id));
    res.json(voidView(r, settings.baseUrl));
  });

  router.post("/v1/checkouts/:id/restore", requireScope(clients, "payments"), async (req, res) => {
    const cred = credentialOf(req);
    const r = await clients.catalog.restoreCheckout({ accountId: cred.accountId, actor: cred.actor, checkoutId: String(req.params.id) });
    forgetFaces(quotes, String(req.params.id));
    res.json({ ...checkoutView(answered(r.checkout, "checkout"), settings.baseUrl), restored: r.restored });
  });

  router.post("/v1/checkouts/:id/extend", requireScope(clients, "payments"), async (req, res) => {
    const body = validateBody("CheckoutExtend", req.body);
    const cred = credentialOf(req);
    const r = await clients.catalog.extendCheckout({
      accountId: cred.accountId,
      actor: cred.actor,
      checkoutId: String(req.params.id),
      ...(body.expires_in_minutes !== null ? { expiresInMinutes: BigInt(body.expires_in_minutes) } : {}),
    });
    forgetFaces(quotes, String(req.params.id));
    res.json(checkoutView(answered(r.checkout, "checkout"), settings.baseUrl));
  });

  return router;
}
