import { answered } from "@c402/rpc";
import { escapeHtml } from "../../domain/html";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { paymentsV1 } from "@c402/contracts";
import { HANDOFF_NONCE, isId } from "@c402/ids";
import { invalid, ProblemError, toProblemDocument, PROBLEM_CONTENT_TYPE } from "@c402/problems";
import { encodeHeader, HEADERS, type PaymentRequired } from "@c402/x402";
import { Router, type NextFunction, type Request, type Response } from "express";
import { paymentRequiredBody, WIRE_VERSION_PARAM, type Face } from "../../domain/payment-required";
import { receiptHtml } from "../../domain/receipt-page";
import { faceUrls, receiptView } from "../../domain/views";
import type { GatewayDeps } from "../deps";
import { bigintAsString } from "../json";
import type { QuoteCache } from "../quote-cache";
import { validateBody } from "../validate";

const FACE = { live: paymentsV1.Face.LIVE, test: paymentsV1.Face.TEST } as const;

/**
 * Headers of every face and receipt answer. CORS for browser buyers: the x402
 * headers must cross, both ways. Nothing may frame a face or a receipt (no
 * embed origins are allowlisted yet).
 */
export const FACE_HEADERS: readonly (readonly [string, string])[] = [
  ["X-Frame-Options", "DENY"],
  ["Content-Security-Policy", "frame-ancestors 'none'"],
  ["Access-Control-Allow-Origin", "*"],
  ["Access-Control-Expose-Headers", "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Request-Id"],
];

export function faceCors(req: Request, res: Response, next: NextFunction): void {
  for (const [name, value] of FACE_HEADERS) res.setHeader(name, value);
  if (req.method === "OPTIONS") {
    res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.setHeader("Access-Control-Allow-Headers", "PAYMENT-SIGNATURE, X-PAYMENT, Access-Control-Expose-Headers, Content-Type, Accept");
    res.setHeader("Access-Control-Max-Age", "600");
    res.status(204).end();
    return;
  }
  next();
}

/** A browser asking for a page (JSON wins whenever the client names it). */
function wantsHtml(req: Request): boolean {
  return req.accepts(["application/json", "text/html"]) === "text/html" && !req.get("accept")?.includes("application/json");
}

function checkoutId(req: Request): string {
  const id = String(req.params.id);
  // Faces are separate namespaces: only a chk_ id lives under /c/.
  if (!isId("checkout", id)) throw new ProblemError("not-found", "No such checkout.");
  return id;
}

/** Which x402 body the buyer asked for: v2 unless the URL says `x402_version=1`. */
function wireVersionOf(req: Request): 1 | 2 {
  const asked = req.query[WIRE_VERSION_PARAM];
  if (asked === undefined || asked === "2") return 2;
  if (asked === "1") return 1;
  throw invalid([{ field: WIRE_VERSION_PARAM, reason: "must be 1 or 2" }]);
}

interface Goods {
  payloadJson: string | undefined;
  reusable: boolean;
}

/** The cached unpaid answer of one face in one wire version. */
export interface UnpaidAnswer {
  title: string;
  /** The goods and whether the checkout keeps selling after a sale, as of the quote. */
  goods: Goods;
  required: PaymentRequired;
  header: string;
  body: ReturnType<typeof paymentRequiredBody>["body"];
  json: string;
}

export type FaceQuotes = QuoteCache<UnpaidAnswer>;

/** Every cached variant of a checkout's faces (face × wire version). */
export const FACE_QUOTE_VARIANTS = ["live:1", "live:2", "test:1", "test:2"] as const;

/**
 * The 402 answer to a refused payment: the problem document with the face's
 * current requirements (`accepts`), the PAYMENT-REQUIRED header naming the
 * reason and, when a settlement was attempted and failed, the failure
 * SettleResponse in PAYMENT-RESPONSE (as the official server sends it). The
 * express route and the gateway's edge build it here, so both answer alike.
 */
export function refusalAnswer(r: {
  current: UnpaidAnswer | undefined;
  checkoutId: string;
  face: Face;
  legacy: boolean;
  err: ProblemError;
  urls: { baseUrl: string; siteUrl: string };
}): { headers: [string, string][]; json: string } {
  const { err } = r;
  const headers: [string, string][] = [];
  const reason = typeof err.extensions.reason === "string" ? err.extensions.reason : err.message;
  const settlement = err.extensions.settlement;
  if (typeof settlement === "object" && settlement !== null) {
    const failure = encodeHeader({ success: false, errorReason: reason, errorMessage: err.message, ...settlement });
    headers.push([HEADERS.paymentResponse, failure]);
    if (r.legacy) headers.push([HEADERS.legacyPaymentResponse, failure]);
  }
  const fresh = r.current ? { ...r.current.required, error: reason } : undefined;
  if (fresh) headers.push([HEADERS.paymentRequired, encodeHeader(fresh)]);
  const urls = faceUrls(r.urls.baseUrl, r.checkoutId);
  const prepare = `${r.face === "test" ? urls.test_url : urls.url}/prepare`;
  const problem = new ProblemError("payment-required", {
    message: err.message,
    help: { ...err.help, prepare: `POST ${prepare} with {"payer": "<address>"} returns the typed data to sign.` },
    extensions: err.extensions,
  });
  return { headers, json: JSON.stringify({ ...toProblemDocument(problem, r.urls.siteUrl), accepts: fresh?.accepts ?? [] }) };
}

export function faceRoutes({ clients, settings }: GatewayDeps, quotes: FaceQuotes): Router {
  const router = Router();

  async function quoteBody(id: string, face: Face, wireVersion: 1 | 2) {
    const [{ checkout }, quote] = await Promise.all([
      clients.catalog.getCheckout({ checkoutId: id }),
      clients.payments.quotePayment({ checkoutId: id, face: FACE[face] }),
    ]);
    return {
      checkout: answered(checkout, "checkout"),
      ...paymentRequiredBody({ checkout: answered(checkout, "checkout"), quote, face, baseUrl: settings.baseUrl, wireVersion }),
    };
  }

  async function goodsFromCatalog(id: string): Promise<Goods> {
    const checkout = answered((await clients.catalog.getCheckout({ checkoutId: id })).checkout, "checkout");
    return { payloadJson: checkout.payloadJson, reusable: checkout.reusable };
  }

  /** The unpaid 402 of a face, from the quote cache or asked for (and then kept). */
  async function unpaidAnswer(id: string, face: Face, wireVersion: 1 | 2): Promise<UnpaidAnswer> {
    const variant = `${face}:${wireVersion}`;
    const cached = quotes.get(id, variant);
    if (cached) return cached;
    const { checkout, required, body } = await quoteBody(id, face, wireVersion);
    const answer = {
      title: checkout.title,
      goods: { payloadJson: checkout.payloadJson, reusable: checkout.reusable },
      required,
      header: encodeHeader(required),
      body,
      json: JSON.stringify(body, bigintAsString),
    };
    quotes.set(id, variant, answer, checkout.expiresAt ? timestampMs(checkout.expiresAt) : undefined);
    return answer;
  }

  const show = (face: Face) => async (req: Request, res: Response) => {
    const id = checkoutId(req);
    res.setHeader("Cache-Control", "no-store");
    const signature = req.get(HEADERS.paymentSignature);
    const legacy = req.get(HEADERS.legacyPayment);
    const header = signature ?? legacy;
    if (header !== undefined) return pay(req, res, id, face, header, signature === undefined);

    const answer = await unpaidAnswer(id, face, wireVersionOf(req));
    res.setHeader(HEADERS.paymentRequired, answer.header);
    if (wantsHtml(req)) {
      res
        .status(402)
        .type("html")
        .send(payPage(answer.title, answer.body, face));
      return;
    }
    res.status(402).type("json").send(answer.json);
  };

  async function pay(req: Request, res: Response, id: string, face: Face, header: string, legacy: boolean) {
    // A header that is not a payment at all was refused at the edge (faceFastPath) when this face's
    // requirements were at hand; here, payments judges it. The goods come with the face's answer
    // (at most a second old) or, when it cannot be had (a sold-out single-shot being redelivered),
    // from catalog.
    const goods = (quotes.get(id, `${face}:2`) ?? (await unpaidAnswer(id, face, 2).catch(() => undefined)))?.goods ?? (await goodsFromCatalog(id));
    try {
      const handoff = typeof req.query.h === "string" ? req.query.h : undefined;
      const r = await clients.payments.submitPayment({
        checkoutId: id,
        face: FACE[face],
        paymentHeader: header,
        ...(handoff !== undefined ? { handoffId: handoff } : {}),
      });
      const settle = encodeHeader(JSON.parse(r.settleResponseJson));
      res.setHeader(HEADERS.paymentResponse, settle);
      if (legacy) res.setHeader(HEADERS.legacyPaymentResponse, settle);
      if (r.status === paymentsV1.PaymentStatus.PENDING) {
        // Broadcast, not yet confirmed: never a fresh 402 that would invite a second payment.
        const receiptUrl = `${settings.baseUrl}/r/${r.paymentId}`;
        res.status(202).json({
          status: "pending",
          payment_id: r.paymentId,
          tx_hash: r.txHash || null,
          receipt_url: receiptUrl,
          poll: receiptUrl,
          message:
            "The payment was submitted on-chain and is not confirmed yet. Do not pay again: poll receipt_url (or present the same payment again) for the goods and the receipt.",
        });
        return;
      }
      // A sale ends a single-shot checkout's selling: the next unpaid request asks again.
      if (!r.redelivered && !goods.reusable) quotes.invalidate(id, FACE_QUOTE_VARIANTS);
      const receipt = receiptView(answered(r.receipt, "receipt"), settings.baseUrl);
      res.status(200).json({
        fulfillment: { mode: "inline", payload: goods.payloadJson === undefined ? null : JSON.parse(goods.payloadJson) },
        receipt,
        receipt_url: receipt.receipt_url,
        redelivered: r.redelivered,
        test_mode: receipt.test_mode,
      });
    } catch (err) {
      if (!(err instanceof ProblemError) || err.slug !== "payment-required") throw err;
      await refuse(res, id, face, legacy, err);
    }
  }

  /** A refused payment: the problem document, plus fresh requirements naming the reason. */
  async function refuse(res: Response, id: string, face: Face, legacy: boolean, err: ProblemError) {
    const current = await unpaidAnswer(id, face, 2).catch(() => undefined);
    const refusal = refusalAnswer({ current, checkoutId: id, face, legacy, err, urls: settings });
    for (const [name, value] of refusal.headers) res.setHeader(name, value);
    res.status(402).type(PROBLEM_CONTENT_TYPE).send(refusal.json);
  }

  const prepare = (face: Face) => async (req: Request, res: Response) => {
    const id = checkoutId(req);
    const body = validateBody<{ payer: string; network?: string | null }>("PaymentPrepare", req.body);
    const urls = faceUrls(settings.baseUrl, id);
    const r = await clients.payments.preparePayment({
      checkoutId: id,
      face: FACE[face],
      payer: body.payer,
      ...(typeof body.network === "string" ? { network: body.network } : {}),
      resourceUrl: face === "test" ? urls.test_url : urls.url,
    });
    res.json({
      network: r.network,
      typed_data: JSON.parse(r.typedDataJson),
      payload_stub: JSON.parse(r.payloadStubJson),
      how: "Sign typed_data with eth_signTypedData_v4, put the signature in payload_stub.payload.signature, base64 the JSON and send it as PAYMENT-SIGNATURE (or X-PAYMENT) on GET of the face URL.",
    });
  };

  router.get("/c/:id", show("live"));
  router.get("/c/:id/test", show("test"));
  // A page that showed a QR (or handed the purchase to another device) polls here for the payment that carried its nonce.
  router.get("/c/:id/handoff/:nonce", async (req, res) => {
    const id = checkoutId(req);
    const nonce = String(req.params.nonce);
    res.setHeader("Cache-Control", "no-store");
    if (!HANDOFF_NONCE.test(nonce)) throw invalid([{ field: "nonce", reason: `must match ${HANDOFF_NONCE.source}` }]);
    const r = await clients.payments.findHandoff({ checkoutId: id, handoffId: nonce });
    res.json({ payment_id: r.paymentId, receipt_url: `${settings.baseUrl}/r/${r.paymentId}`, escrow_state: null, test_mode: r.testMode });
  });
  router.post("/c/:id/prepare", prepare("live"));
  router.post("/c/:id/test/prepare", prepare("test"));

  // View-only: from a transaction hash to its receipt.
  router.get("/r/by-tx/:txHash", async (req, res) => {
    const r = await clients.payments.findReceiptByTx({ txHash: String(req.params.txHash) });
    res.redirect(303, `${settings.baseUrl}/r/${r.paymentId}`);
  });

  async function receiptOf(req: Request) {
    const id = String(req.params.paymentId);
    if (!isId("payment", id)) throw new ProblemError("not-found", "No such receipt.");
    return { id, ...(await clients.payments.getReceipt({ paymentId: id })) };
  }

  router.get("/r/:paymentId", async (req, res) => {
    const r = await receiptOf(req);
    if (!r.receipt) {
      res.status(202).json({ id: r.id, status: "pending", tx_hash: r.txHash || null, message: "Settlement is not confirmed yet; poll again." });
      return;
    }
    const view = receiptView(r.receipt, settings.baseUrl);
    if (wantsHtml(req)) {
      res.type("html").send(receiptHtml(view));
      return;
    }
    res.json(view);
  });

  router.get("/r/:paymentId/download", async (req, res) => {
    const r = await receiptOf(req);
    if (!r.receipt) throw new ProblemError("not-found", "The receipt exists once the payment settles.");
    res.setHeader("Content-Disposition", `attachment; filename="receipt-${r.id}.html"`);
    res.type("html").send(receiptHtml(receiptView(r.receipt, settings.baseUrl)));
  });

  return router;
}

function payPage(title: string, body: { offer: { total_usd: string; description: string | null }; endpoint: { url: string } }, face: Face): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>
<body><main><h1>${escapeHtml(title)}</h1>${body.offer.description ? `<p>${escapeHtml(body.offer.description)}</p>` : ""}
<p>Price: <strong>${escapeHtml(body.offer.total_usd)} USDC</strong> (fee included)${face === "test" ? " — rehearsal: settles without real money" : ""}.</p>
<p>Pay with an x402 client at <code>${escapeHtml(body.endpoint.url)}</code>; request it with <code>Accept: application/json</code> for the payment requirements.</p></main></body></html>`;
}
