import { createHash } from "node:crypto";
import { invalid, ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { forgetFaces, type FaceQuotes } from "../faces/answers";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../http/pagination";
import { SERIES_FIELDS, type BodyOf } from "../http/request-schemas";
import { validateBody, validateBodyWithholding } from "../http/validate";
import { checkoutSummaryView, checkoutView, goLiveView } from "../views/checkouts";
import { EscrowCreates, escrowWithContentRefused, type EscrowOfCreate } from "./escrow-checkouts";
import { ensurePayoutAccounts, railsTakenAtCreate } from "./payout-accounts";

/**
 * What a seller's credential may do with its checkouts, whatever the door:
 * the REST routes (/v1/checkouts) and the MCP tools run these, so both check
 * the same scope, validate with the same schema and answer the same objects.
 */

type CheckoutCreate = BodyOf<"CheckoutCreate">;

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

/** The body, validated. */
function checkoutBodyOf(raw: unknown): CheckoutCreate {
  const body = validateBody("CheckoutCreate", raw);
  if (body.content !== undefined && body.escrow_offer !== undefined) throw escrowWithContentRefused("escrow_offer", "cannot be combined with content");
  ensureSeriesPair(body);
  return body;
}

/** POST /v1/escrow-checkouts' body, validated: as a checkout create's, plus the escrow create fields. */
function escrowCheckoutBodyOf(raw: unknown): BodyOf<"EscrowCheckoutCreate"> {
  const body = validateBody("EscrowCheckoutCreate", raw);
  if (body.content !== undefined) throw escrowWithContentRefused("content", "cannot be sold through escrow (an article is opened by a pass)");
  ensureSeriesPair(body);
  return body;
}

type SeriesFields = Partial<Record<(typeof SERIES_FIELDS)[number], number>>;

/**
 * Series fields: both or neither (catalog checks the terms and what a series
 * cannot be; with escrow the escrow rule names them: a series is not sold through escrow).
 */
function ensureSeriesPair(body: SeriesFields): void {
  const [interval, periods] = [body.schedule_interval_days, body.schedule_periods];
  if ((interval === undefined) === (periods === undefined)) return;
  throw invalid([
    { field: interval === undefined ? "schedule_interval_days" : "schedule_periods", reason: "is required with the other schedule field (both or neither)" },
  ]);
}

/** The series fields a body sends. */
const seriesFieldsOf = (body: SeriesFields) => SERIES_FIELDS.filter((f) => body[f] !== undefined && body[f] !== null);

/** catalog's CheckoutSchedule from a series' fields; absent for any other checkout. */
function scheduleOf(body: SeriesFields) {
  const [intervalDays, periods] = [body.schedule_interval_days, body.schedule_periods];
  return intervalDays !== undefined && periods !== undefined ? { schedule: { intervalDays, periods } } : {};
}

/** The checkout's own fields of catalog's CreateCheckout, from the body. */
function checkoutFieldsOf(body: Omit<CheckoutCreate, "escrow_offer">) {
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
    ...(body.content !== undefined ? { contentJson: JSON.stringify(body.content) } : {}),
    ...scheduleOf(body),
    offer: offerCardOf(body),
  };
}

/** Fields fixed at create: a PATCH naming one is refused with this reason (not as an unknown field). */
const IMMUTABLE_FIELDS = ["price_usd", "pay_to"] as const;

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
    // Gated content: the article and the whole declaration (catalog refuses them on any other checkout).
    ...(body.payload !== undefined && body.payload !== null ? { payloadJson: JSON.stringify(body.payload) } : {}),
    ...(body.content !== undefined ? { contentJson: JSON.stringify(body.content) } : {}),
  };
}

const OFFER_TEXT = ["freshness", "coverage", "source", "constraints"] as const;
const OFFER_JSON = {
  input_schema: "inputSchemaJson",
  output_schema: "outputSchemaJson",
  example_input: "exampleInputJson",
  example_output: "exampleOutputJson",
} as const;

/** The offer-card values a create or PATCH body sets (null and absent set nothing), as catalog's OfferCard. */
export function offerCardOf(body: Partial<Record<(typeof OFFER_TEXT)[number], string | null> & Record<keyof typeof OFFER_JSON, unknown>>) {
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

export class CheckoutOperations {
  private readonly escrow: EscrowCreates;

  constructor(
    private readonly deps: Pick<GatewayDeps, "clients" | "settings">,
    private readonly quotes: FaceQuotes,
  ) {
    this.escrow = new EscrowCreates(deps.clients);
  }

  /**
   * POST /v1/checkouts, create_checkout: the created checkout (or the one an
   * Idempotency-Key already made). escrow_offer and the account's escrow
   * policy may make it an escrow one, or mint its escrow twin.
   */
  async create(cred: Credential, raw: unknown, opts: { idempotencyKey?: string } = {}) {
    ensureScope(cred, "payments");
    const body = checkoutBodyOf(raw);
    const escrow = await this.escrow.plainCreate(cred.accountId, body.escrow_offer, { ...this.shapeOf(body), content: body.content !== undefined });
    return this.createWith(cred, canonical(raw), body, escrow, opts);
  }

  /** POST /v1/escrow-checkouts: an escrow checkout (esc_, face /e/{id}) under the terms the escrow service resolves. */
  async createEscrow(cred: Credential, raw: unknown, opts: { idempotencyKey?: string } = {}) {
    ensureScope(cred, "payments");
    const body = escrowCheckoutBodyOf(raw);
    const escrow = await this.escrow.escrowCreate(cred.accountId, body, this.shapeOf(body));
    // One Idempotency-Key scope for both routes: the route is part of what a repeat must match.
    return this.createWith(cred, `escrow-checkouts:${canonical(raw)}`, body, escrow, opts);
  }

  private shapeOf(body: Omit<CheckoutCreate, "escrow_offer">) {
    return { inheritAccountPayouts: body.inherit_account_payouts, seriesFields: seriesFieldsOf(body) };
  }

  private async createWith(
    cred: Credential,
    fingerprinted: string,
    body: Omit<CheckoutCreate, "escrow_offer">,
    escrow: EscrowOfCreate,
    opts: { idempotencyKey?: string },
  ) {
    const { identity, payments } = this.deps.clients;
    // Before anything is written: a rail no buyer could pay is refused, and an unanswered check creates nothing.
    const taken = await railsTakenAtCreate(identity, cred.accountId, { payTo: body.pay_to, platformFeeBps: body.platform_fee_bps });
    await ensurePayoutAccounts(payments, taken);
    const r = await this.deps.clients.catalog.createCheckout({
      accountId: cred.accountId,
      actor: cred.actor,
      createdWithLiveKey: cred.mode === "live",
      ...(opts.idempotencyKey !== undefined ? { idempotencyKey: opts.idempotencyKey } : {}),
      requestFingerprint: createHash("sha256").update(fingerprinted).digest("hex"),
      ...checkoutFieldsOf(body),
      ...escrow,
    });
    return { checkout: checkoutView(answered(r.checkout, "checkout"), this.deps.settings.baseUrl), replayed: r.replayed };
  }

  /** GET /v1/checkouts, list_checkouts: a page of summaries, newest first. */
  async list(cred: Credential, query: { include_voided?: unknown; limit?: unknown; cursor?: unknown }) {
    ensureScope(cred, "read_only");
    if (query.include_voided !== undefined && !["true", "false"].includes(String(query.include_voided))) {
      throw new ProblemError("invalid-request", { message: "Invalid query.", errors: [{ field: "include_voided", reason: "must be true or false" }] });
    }
    const page = pageRequestOf(query);
    const r = await this.deps.clients.catalog.listCheckouts({
      accountId: cred.accountId,
      includeVoided: String(query.include_voided) === "true",
      ...servicePage(page),
    });
    const { items, ...more } = pageOf(r.checkouts, page.limit, createdAtKey);
    return { checkouts: items.map((c) => checkoutSummaryView(c, this.deps.settings.baseUrl)), ...more };
  }

  /** GET /v1/checkouts/{id}, get_checkout. */
  async get(cred: Credential, checkoutId: string) {
    ensureScope(cred, "read_only");
    const r = await this.deps.clients.catalog.getCheckout({ checkoutId, accountId: cred.accountId });
    return checkoutView(answered(r.checkout, "checkout"), this.deps.settings.baseUrl);
  }

  /** PATCH /v1/checkouts/{id}: the offer card (and a gated article's body and declaration); its faces' cached 402s are dropped at once. */
  async update(cred: Credential, checkoutId: string, raw: unknown) {
    ensureScope(cred, "payments");
    const patch = offerPatchOf(raw);
    const r = await this.deps.clients.catalog.updateCheckout({ accountId: cred.accountId, actor: cred.actor, checkoutId, patch });
    forgetFaces(this.quotes, checkoutId);
    return answered(r.checkout, "checkout");
  }

  /** POST /v1/checkouts/{id}/go-live, go_live: arms the live face (its cached 402s are dropped at once). */
  async goLive(cred: Credential, checkoutId: string) {
    ensureScope(cred, "payments");
    const r = await this.deps.clients.catalog.goLive({ accountId: cred.accountId, actor: cred.actor, checkoutId });
    forgetFaces(this.quotes, checkoutId);
    return goLiveView(answered(r.checkout, "checkout"), r.alreadyLive, this.deps.settings.baseUrl);
  }
}
