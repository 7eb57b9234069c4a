import type { EmbedOrigins } from "../embed-origins";
import { encodeHeader, HEADERS } from "@c402/x402";
import { Router, type NextFunction, type Request, type Response } from "express";
import { CallUrls, isSlug } from "../../faces/call-urls";
import { isId } from "@c402/ids";
import type { Face } from "../../faces/face";
import { FacePayments } from "../../faces/face-payments";
import type { UnpaidAnswers } from "../../faces/unpaid";
import { checkoutPayPage, setPageHeaders } from "../../pages/checkout-pages";
import type { GatewayDeps } from "../deps";
import { validateBody, validateBodyWithholding } from "../validate";
import { setRateLimitHeaders } from "../rate-limit";
import { callParamsOf, checkoutIdOf, escrowCheckoutIdOf, handoffOf, packageKeyOf, paymentOf, usagePageOf, wantsHtml, wireVersionOf } from "../face-requests";
import { PackageCalls } from "../../faces/package-calls";
import { DEFAULT_PACKAGE_CALLS_PER_MINUTE } from "../../config";
import { spendFrom } from "../rate-limit";
import { createHash } from "node:crypto";

/**
 * GET /c/{id} (the live face) and GET /c/{id}/test (the rehearsal face):
 * without a payment, the 402 with the face's requirements (JSON, or a page
 * for a browser); with one, what payments makes of it: 200 with the goods and
 * the receipt, 202 pending, or a 402 refusal with fresh requirements.
 * POST /c/{id}/pay and /c/{id}/test/pay are the POST twins (the payment in
 * the same header; always JSON; a series' held periods in the body's `schedule`).
 * /e/{id} and its twins are an escrow checkout's faces, answered the same way.
 */
export function faceRoutes(deps: GatewayDeps, unpaid: UnpaidAnswers, payments: FacePayments, embedOrigins: EmbedOrigins): Router {
  const { clients, settings, cache } = deps;
  const router = Router();
  const callUrls = new CallUrls(clients, cache);
  const packageCalls = cache.limiter({ name: "package-key", limit: settings.packageCallsPerMinute ?? DEFAULT_PACKAGE_CALLS_PER_MINUTE, windowSeconds: 60 });
  const usageReads = cache.limiter({ name: "package-usage", limit: settings.packageCallsPerMinute ?? DEFAULT_PACKAGE_CALLS_PER_MINUTE, windowSeconds: 60 });
  /** Budgets are counted under the key's hash: the key itself never reaches the cache. */
  const packages = new PackageCalls(deps, payments, (key) => createHash("sha256").update(key).digest("hex"));

  /** A face's answer; `held` are a series' held periods' payment headers (POST …/pay's `schedule`). */
  const answerFace =
    (face: Face, pages = true, idOf = checkoutIdOf) =>
    async (req: Request, res: Response, held: readonly string[] = []) => {
      const id = idOf(req);
      res.setHeader("Cache-Control", "no-store");
      const payment = paymentOf(req);
      if (payment) return sendPaymentAnswer(req, res, payments, { id, face, payment, held });
      // A HEAD spends nothing: it is answered as the unpaid face.
      const packageKey = req.method === "HEAD" ? undefined : packageKeyOf(req);
      if (packageKey !== undefined) {
        const call = await packages.call({ checkoutId: id, key: packageKey, params: callParamsOf(req), spendBudget: (d) => spendFrom(packageCalls, res, d) });
        return void res.status(call.status).json(call.body);
      }
      const answer = await unpaid.of(id, face, wireVersionOf(req));
      res.setHeader(HEADERS.paymentRequired, answer.header);
      if (pages && wantsHtml(req)) {
        // The page is what a seller's site frames: its allowlisted origins may (spec, Embedding).
        const page = await checkoutPayPage({
          id,
          face,
          answer,
          frameOrigins: await embedOrigins.of(answer.accountId),
          params: callParamsOf(req),
          handoffIn: handoffOf(req),
        });
        setPageHeaders(res, page.headers);
        res.status(402).type("html").send(page.html);
        return;
      }
      res.status(402).type("json").send(answer.json);
    };

  const show = (face: Face, pages = true, idOf = checkoutIdOf) => {
    const answer = answerFace(face, pages, idOf);
    return (req: Request, res: Response) => answer(req, res);
  };
  const payByPost = (face: Face, idOf = checkoutIdOf) => paidByPost(answerFace(face, false, idOf), idOf === checkoutIdOf);

  /** The usage record of a package (free): its key in Authorization, like a call; 401 without one. */
  router.get("/c/:id/usage", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    const spendBudget = (digest: string) => spendFrom(usageReads, res, digest);
    res.json(await packages.usage({ checkoutId: checkoutIdOf(req), key: packageKeyOf(req), page: usagePageOf(req), spendBudget }));
  });

  /** A call URL (/r/<slug>/<checkout_id>): the checkout's face once the slug is its seller's; a payment id there is a receipt's path. */
  const callUrl =
    (face: Face) =>
    async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      // Only a slug and a checkout id make a call URL; anything else (a receipt's /r/<payment_id>/download, /r/by-tx/<hash>) is another route's.
      if (!isSlug(String(req.params.slug)) || !isId("checkout", String(req.params.id))) return next();
      await callUrls.checkoutOf(String(req.params.slug), String(req.params.id));
      return show(face)(req, res);
    };

  router.get("/c/:id", show("live"));
  router.get("/r/:slug/:id", callUrl("live"));
  router.get("/r/:slug/:id/test", callUrl("test"));
  router.get("/c/:id/test", show("test"));
  router.post("/c/:id/pay", payByPost("live"));
  router.post("/c/:id/test/pay", payByPost("test"));
  // An escrow checkout's faces (ADR 19): the same protocol, its requirement an escrow deposit.
  router.get("/e/:id", show("live", true, escrowCheckoutIdOf));
  router.get("/e/:id/test", show("test", true, escrowCheckoutIdOf));
  router.post("/e/:id/pay", payByPost("live", escrowCheckoutIdOf));
  router.post("/e/:id/test/pay", payByPost("test", escrowCheckoutIdOf));
  return router;
}

/**
 * Answers a payment presented to a face (/c/ or /x/). A header that is not a
 * payment at all was refused at the edge (faces/fast-path.ts) when the face's
 * requirements were at hand; here, payments judges it.
 */
export async function sendPaymentAnswer(
  req: Request,
  res: Response,
  payments: FacePayments,
  p: { id: string; face: Face; payment: { header: string; legacy: boolean }; params?: Record<string, string>; held?: readonly string[] },
): Promise<void> {
  const handoff = handoffOf(req);
  const params = p.params ?? callParamsOf(req);
  const answer = await payments.pay({
    checkoutId: p.id,
    face: p.face,
    ...p.payment,
    ...(handoff !== undefined ? { handoff } : {}),
    params,
    ...(p.held?.length ? { held: p.held } : {}),
  });
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  if (answer.rateLimit) setRateLimitHeaders(res, answer.rateLimit);
  if (answer.contentType) res.status(answer.status).type(answer.contentType).send(answer.body);
  else res.status(answer.status).json(answer.body);
}

/**
 * POST …/pay: the GET face's answer to the payment in the header (always
 * JSON), once the body is checked. `schedule` (a series' held periods, each a
 * payload object) travels to payments as payment headers are sent (base64 of
 * the JSON); faces that sell no series (/x, /e) refuse it by name.
 */
export function paidByPost(answer: (req: Request, res: Response, held: readonly string[]) => Promise<void>, series: boolean) {
  return async (req: Request, res: Response) => {
    const body = series ? validateBody("FacePay", req.body) : validateBodyWithholding("FacePay", req.body, ["schedule"], NOT_A_SERIES);
    return answer(
      req,
      res,
      (body.schedule ?? []).map((payload) => encodeHeader(payload)),
    );
  };
}

const NOT_A_SERIES = "is a recurring series' held periods, and this face sells no series (a series is sold at /c/{id})";
