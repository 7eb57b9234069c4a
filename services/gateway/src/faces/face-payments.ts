import { toBinary } from "@bufbuild/protobuf";
import { catalogV1, fulfillmentV1, PAID_REQUEST_TIMEOUT_MS, paymentsV1, settleResponseFromMessage } from "@c402/contracts";
import { RevisionCache } from "@c402/revision-cache";
import { PROBLEM_CONTENT_TYPE, ProblemError } from "@c402/problems";
import { isId } from "@c402/ids";
import { answered } from "@c402/rpc";
import { encodeHeader, HEADERS } from "@c402/x402";
import type { GatewayDeps } from "../http/deps";
import { faceUrl } from "../views/checkouts";
import { packagePurchaseFields } from "../views/packages";
import { goodsView, heldView, paidView, pendingPaymentView, relayFulfillmentView, relayPaidView, reportHelp } from "../views/payments";
import { declarationOf } from "../views/content";
import { refusalAnswer } from "./answers";
import { ArticlePasses } from "./article-passes";
import { ArticleRehearsals, isRehearsalFace } from "./article-rehearsals";
import { FACE_PROTO, type Face } from "./face";
import { goodsOf, type UnpaidAnswers } from "./unpaid";
import { purchaseScheduleView } from "../views/schedules";

/** The checkouts a gateway keeps for their goods (ADR 14): the ones selling now are few; one past the budget is handed back whole each time. */
const KEPT_CHECKOUTS = { maxEntries: 1_000, maxWeight: 16 * 1024 * 1024, maxAgeMs: 60_000 };

/** A payment presented to a face, as the buyer sent it. */
export interface FacePayment {
  checkoutId: string;
  face: Face;
  /** The PAYMENT-SIGNATURE (or X-PAYMENT) header's value. */
  header: string;
  /** Sent as X-PAYMENT, the v1 header: the answer carries X-PAYMENT-RESPONSE too. */
  legacy: boolean;
  handoff?: string;
  /** The buyer's call parameters (relay and mcp checkouts). */
  params: Record<string, string>;
  /** A series' held periods' payments (POST …/pay `schedule`), encoded as payment headers; empty otherwise. */
  held?: readonly string[];
}

/** What a face answers a payment: status, headers and JSON body (a refusal is a problem document). */
export interface FacePaymentAnswer {
  status: number;
  headers: [string, string][];
  /** A JSON value, or (a refusal) the problem document's text. */
  body: unknown;
  contentType?: string;
  /** The test deliveries left, for X-RateLimit-* (relay and mcp rehearsals). */
  rateLimit?: { limit: number; remaining: number; resetSeconds: number };
}

/**
 * A paid request to a face (GET /c/{id} with a payment, its /test twin, the
 * POST twins, and the MCP tool pay_test_checkout): what payments makes of the
 * payment, as the face answers it. 200 with the goods and the receipt, 202
 * pending, or a 402 refusal with fresh requirements.
 */
export class FacePayments {
  private readonly passes: ArticlePasses;
  private readonly rehearsals: ArticleRehearsals;
  /** The checkouts sold here, by revision (ADR 14): for their goods and terms only, never their status. */
  private readonly checkouts = new RevisionCache<catalogV1.Checkout>({
    ...KEPT_CHECKOUTS,
    weigh: (c) => toBinary(catalogV1.CheckoutSchema, c).byteLength,
  });

  constructor(
    private readonly deps: Pick<GatewayDeps, "clients" | "settings">,
    private readonly unpaid: UnpaidAnswers,
  ) {
    this.passes = new ArticlePasses(deps.clients);
    this.rehearsals = new ArticleRehearsals(deps.clients);
  }

  async pay(payment: FacePayment): Promise<FacePaymentAnswer> {
    const { clients, settings } = this.deps;
    const { checkoutId: id, face } = payment;
    let r: paymentsV1.SubmitPaymentResponse;
    const held = this.checkouts.held(id);
    const articleBudget = isId("contentCheckout", id) ? await this.countArticleRehearsal(id, face) : undefined;
    try {
      r = await clients.payments.submitPayment(
        {
          checkoutId: id,
          face: FACE_PROTO[face],
          paymentHeader: payment.header,
          ...(payment.handoff !== undefined ? { handoffId: payment.handoff } : {}),
          params: payment.params,
          ...(held ? { knownCheckoutRevision: held.revision } : {}),
          ...(payment.held?.length ? { heldPaymentHeaders: [...payment.held] } : {}),
        },
        // Payments fits a relay origin's call and the settlement inside it, so their outcome is what the buyer hears (ADR 9).
        { timeoutMs: PAID_REQUEST_TIMEOUT_MS },
      );
    } catch (err) {
      if (err instanceof ProblemError) this.withBuyerHints(err, id);
      if (!(err instanceof ProblemError) || err.slug !== "payment-required") throw err;
      // A refused payment: the problem document, plus fresh requirements naming the reason.
      const refusal = refusalAnswer({ current: await this.unpaid.current(id, face), checkoutId: id, face, legacy: payment.legacy, err, urls: settings });
      return { status: 402, headers: [...refusal.headers], body: refusal.json, contentType: PROBLEM_CONTENT_TYPE };
    }
    const settle = encodeHeader(settleResponseFromMessage(r.settleResponse));
    const headers: [string, string][] = [
      [HEADERS.paymentResponse, settle],
      ...(payment.legacy ? [[HEADERS.legacyPaymentResponse, settle] as [string, string]] : []),
    ];
    // Payments read the checkout for this sale and hands it back with the receipt (or tells which kept one it is): the goods, without asking catalog.
    // Everything the answer needs is checked before it is built, so a settled payment is never answered half.
    const checkout =
      r.status === paymentsV1.PaymentStatus.PENDING ? undefined : this.checkouts.take(id, held, { revision: r.checkoutRevision, value: r.checkout });
    if (checkout && r.status === paymentsV1.PaymentStatus.HELD) return this.heldAnswer(r, checkout, face, headers);
    const settled = checkout && { checkout, goods: goodsOf(checkout), receipt: answered(r.receipt, "receipt") };
    if (!settled) return { status: 202, headers, body: pendingPaymentView(r, settings.baseUrl, id) };
    if (!r.redelivered) this.unpaid.sold(id, settled.goods);
    const content = declarationOf(settled.checkout);
    // A gated article's purchase also answers its pass (spec: pay adds grant, grant_scope, grant_expires_in).
    const pass = content ? await this.passes.ofPurchase(settled.checkout, content, settled.receipt) : {};
    // A purchase that started a series answers it (its period 0 settled): the buyer's view is its url.
    const series = r.schedule ? { schedule: purchaseScheduleView(r.schedule, settings.baseUrl) } : {};
    if (r.delivery) {
      const { testDeliveriesLeft, testDeliveriesResetSeconds } = r.delivery;
      const rateLimit =
        testDeliveriesLeft !== undefined && testDeliveriesResetSeconds !== undefined
          ? { limit: settled.checkout.settings?.testDeliveryDailyCap ?? 0, remaining: testDeliveriesLeft, resetSeconds: testDeliveriesResetSeconds }
          : undefined;
      const relayed = relayPaidView(settled.goods.mode === "mcp" ? "mcp" : "relay", r.delivery, settled.receipt, r.redelivered, settings.baseUrl);
      const bought = r.package ? packagePurchaseFields(r.package, r.packageKey, settings.baseUrl) : {};
      return { status: relayed.status, headers, body: { ...relayed.body, ...bought, ...pass, ...series }, ...(rateLimit ? { rateLimit } : {}) };
    }
    return {
      status: 200,
      headers,
      body: { ...paidView(settled.goods, settled.receipt, r.redelivered, settings.baseUrl), ...pass, ...series },
      ...(articleBudget ? { rateLimit: articleBudget } : {}),
    };
  }

  /**
   * An escrow sale whose deposit is held (ADR 19): the goods as any sale's,
   * and instead of a receipt the escrow's payment id and status URL. A relay
   * origin's own request error answers with its status, as a settled one does.
   */
  private heldAnswer(r: paymentsV1.SubmitPaymentResponse, checkout: catalogV1.Checkout, face: Face, headers: [string, string][]): FacePaymentAnswer {
    const goods = goodsOf(checkout);
    if (!r.redelivered) this.unpaid.sold(checkout.id, goods);
    const relayed = r.delivery && relayFulfillmentView(goods.mode === "mcp" ? "mcp" : "relay", r.delivery);
    const status = r.delivery?.outcome === fulfillmentV1.DeliveryOutcome.BUYER_ERROR ? r.delivery.status : 200;
    const body = heldView(relayed ?? goodsView(goods), r, checkout.id, isRehearsalFace(checkout, face), this.deps.settings.baseUrl);
    return { status, headers, body };
  }

  /**
   * An inline article's purchase on a rehearsal face answers the article: a
   * rehearsal delivery, counted before the payment is looked at (429 past the
   * day's cap, nothing recorded). A relay article's purchase is counted by
   * its delivery, as every relay rehearsal is.
   */
  private async countArticleRehearsal(id: string, face: Face): Promise<FacePaymentAnswer["rateLimit"]> {
    const checkout = answered((await this.deps.clients.catalog.getCheckout({ checkoutId: id })).checkout, "checkout");
    if (checkout.origin || !isRehearsalFace(checkout, face)) return undefined;
    try {
      return await this.rehearsals.count(checkout);
    } catch (err) {
      if (err instanceof ProblemError) this.withBuyerHints(err, id);
      throw err;
    }
  }

  /** The hints a buyer's failure answer carries: where to report a delivery that failed, and the live face past the rehearsal cap. */
  withBuyerHints(err: ProblemError, id: string): void {
    const { baseUrl } = this.deps.settings;
    if (err.slug === "upstream-failed") err.help.report = reportHelp(baseUrl, id);
    if (err.slug === "rate-limited" && err.extensions.reason === "test_delivery_daily_cap") err.extensions.live_url = faceUrl(baseUrl, id, "live");
  }
}
