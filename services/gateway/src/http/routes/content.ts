import { HEADERS } from "@c402/x402";
import { setPageHeaders } from "../../pages/checkout-pages";
import { Router, type Request, type Response } from "express";
import { ArticleFaces, type ArticleRead } from "../../faces/article-faces";
import type { Face } from "../../faces/face";
import type { FacePayments } from "../../faces/face-payments";
import type { UnpaidAnswers } from "../../faces/unpaid";
import type { ContentOperations } from "../../operations/content";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { DEFAULT_PACKAGE_CALLS_PER_MINUTE } from "../../config";
import { setRateLimitHeaders, spendFrom } from "../rate-limit";
import { allowFraming, type EmbedOrigins } from "../embed-origins";
import { articleIdOf, articleParamsOf, passOf, paymentOf, wantsHtml, wireVersionOf } from "../face-requests";
import { paidByPost, sendPaymentAnswer } from "./faces";

/**
 * Gated content (spec, Gated content). The faces /x/{id} and /x/{id}/test:
 * a valid pass reads the article; a payment buys it (the answer adds the
 * pass); otherwise the 402 (JSON, with endpoint.article) or, for a browser,
 * the wall. Never cacheable. Then the snippet, and the seller's routes:
 * GET /v1/content/{id} and the passes it issues. What each face answers is
 * decided in faces/article-faces.ts; here it becomes a response.
 */
export function contentRoutes(
  deps: GatewayDeps,
  unpaid: UnpaidAnswers,
  payments: FacePayments,
  embedOrigins: EmbedOrigins,
  content: ContentOperations,
): Router {
  const { clients } = deps;
  const router = Router();
  const faces = new ArticleFaces(deps, unpaid, payments, embedOrigins);
  const relayReads = deps.cache.limiter({
    name: "article-pass",
    limit: deps.settings.packageCallsPerMinute ?? DEFAULT_PACKAGE_CALLS_PER_MINUTE,
    windowSeconds: 60,
  });

  const show =
    (face: Face, pages = true) =>
    async (req: Request, res: Response) => {
      const id = articleIdOf(req);
      res.setHeader("Cache-Control", "no-store");
      const payment = paymentOf(req);
      // An inline article's purchase on a rehearsal face is counted against the day's cap there (FacePayments), whichever way it comes.
      if (payment) return sendPaymentAnswer(req, res, payments, { id, face, payment, params: articleParamsOf(req) });
      // A HEAD reads nothing (a limited pass is not spent): it is answered as the unpaid face.
      const pass = req.method === "HEAD" ? undefined : passOf(req);
      const read = pass === undefined ? undefined : await readWith(req, res, id, face, pass);
      if (read && "body" in read) return sendRead(res, read);
      const wall = await faces.wall({ id, face, wireVersion: wireVersionOf(req), page: pages && wantsHtml(req), refused: read, params: articleParamsOf(req) });
      res.setHeader(HEADERS.paymentRequired, wall.header);
      if (read) res.setHeader("X-Service-Grant-Refused", read.reason);
      if (wall.headers) setPageHeaders(res, wall.headers);
      else allowFraming(res, wall.frameAncestors);
      res.status(402).type(wall.contentType).send(wall.body);
    };

  const readWith = (req: Request, res: Response, id: string, face: Face, pass: string) =>
    faces.read({ id, face, pass, params: articleParamsOf(req), spendRelayRead: (digest) => spendFrom(relayReads, res, digest) });

  const payByPost = (face: Face) => paidByPost(show(face, false), false);

  router.get("/x/:id", show("live"));
  router.get("/x/:id/test", show("test"));
  router.post("/x/:id/pay", payByPost("live"));
  router.post("/x/:id/test/pay", payByPost("test"));
  router.get("/x/:id/snippet", async (req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.json(await content.snippet(String(req.params.id)));
  });

  router.get("/v1/content/:id", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await content.get(credentialOf(req), String(req.params.id)));
  });
  router.post("/v1/content/:id/grants", requireScope(clients, "payments"), async (req, res) => {
    res.status(201).json(await content.grantForContent(credentialOf(req), String(req.params.id), req.body));
  });
  router.post("/v1/grants", requireScope(clients, "payments"), async (req, res) => {
    res.status(201).json(await content.grantForSeller(credentialOf(req), req.body));
  });
  return router;
}

/** The article read with a pass, as the response: a framing allowance replaces X-Frame-Options only where the policy names origins. */
function sendRead(res: Response, read: ArticleRead): void {
  for (const [name, value] of read.headers) res.setHeader(name, value);
  if (!read.headers.some(([name, value]) => name === "Content-Security-Policy" && value.includes("frame-ancestors 'none'")))
    res.removeHeader("X-Frame-Options");
  // A relay article's read already names its tighter budget (reads a minute per pass); the day's cap then speaks by its 429.
  if (read.rehearsalBudget && res.getHeader("X-RateLimit-Limit") === undefined) setRateLimitHeaders(res, read.rehearsalBudget);
  res.status(read.status).type(read.contentType).send(read.body);
}
