import { createHash } from "node:crypto";
import { catalogV1, framingOrigins, fulfillmentV1, ORIGIN_CALL_TIMEOUT_MS } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { HEADERS } from "@c402/x402";
import { Router, type Request, type Response } from "express";
import { ArticlePasses } from "../../faces/article-passes";
import { ArticleRehearsals, isRehearsalFace } from "../../faces/article-rehearsals";
import type { Face } from "../../faces/face";
import type { FacePayments } from "../../faces/face-payments";
import type { UnpaidAnswers } from "../../faces/unpaid";
import type { ContentOperations } from "../../operations/content";
import { articleDeclarationOf, paidArticle, relayedArticle, paidArticlePolicy, wallPage } from "../../views/content";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { DEFAULT_PACKAGE_CALLS_PER_MINUTE } from "../../config";
import { setRateLimitHeaders, spendFrom } from "../rate-limit";
import { allowFraming, type EmbedOrigins } from "../embed-origins";
import { articleIdOf, articleParamsOf, passOf, paymentOf, wantsHtml, wireVersionOf } from "../face-requests";
import { paidByPost, sendPaymentAnswer } from "./faces";

/** The origin of the article's canonical URL: it may frame the article (spec, content declaration). */
const canonicalOrigin = (canonicalUrl: string | null | undefined): string[] => framingOrigins([canonicalUrl]);

/**
 * Gated content (spec, Gated content). The faces /x/{id} and /x/{id}/test:
 * a valid pass reads the article; a payment buys it (the answer adds the
 * pass); otherwise the 402 (JSON, with endpoint.article) or, for a browser,
 * the wall. Never cacheable. Then the snippet, and the seller's routes:
 * GET /v1/content/{id} and the passes it issues.
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
  const passes = new ArticlePasses(clients);
  const rehearsals = new ArticleRehearsals(clients);
  const relayReads = deps.cache.limiter({
    name: "article-pass",
    limit: deps.settings.packageCallsPerMinute ?? DEFAULT_PACKAGE_CALLS_PER_MINUTE,
    windowSeconds: 60,
  });

  // Only origins the framing rule accepts: an empty list leaves the page unframeable (X-Frame-Options stays).
  const frameAncestors = async (accountId: string, canonicalUrl: string | null | undefined) =>
    framingOrigins([...(await embedOrigins.of(accountId)), ...canonicalOrigin(canonicalUrl)]);

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
      const refused = pass === undefined ? undefined : await read(req, res, { id, face, pass });
      if (refused === "read") return;
      const answer = await unpaid.of(id, face, wireVersionOf(req));
      res.setHeader(HEADERS.paymentRequired, answer.header);
      if (refused) res.setHeader("X-Service-Grant-Refused", refused.reason);
      if (pages && wantsHtml(req)) {
        const checkout = await article(id);
        const d = articleDeclarationOf(checkout);
        allowFraming(res, await frameAncestors(answer.accountId, d.canonical_url));
        res
          .status(402)
          .type("html")
          .send(wallPage(checkout, d, answer.body.offer.total_usd, answer.body.endpoint.url, face === "test" || !checkout.armed));
        return;
      }
      const body = refused ? JSON.stringify({ ...answer.body, grant_refused: refused }) : answer.json;
      res.status(402).type("json").send(body);
    };

  /** One rehearsal delivery of the article counted (429 with the live face's URL past the day's cap). */
  async function countRehearsal(checkout: catalogV1.Checkout) {
    try {
      return await rehearsals.count(checkout);
    } catch (err) {
      if (err instanceof ProblemError) payments.withBuyerHints(err, checkout.id);
      throw err;
    }
  }

  async function article(id: string): Promise<catalogV1.Checkout> {
    return answered((await clients.catalog.getCheckout({ checkoutId: id })).checkout, "checkout");
  }

  /**
   * A read with a pass: the article as it is now (edits are live for the next
   * read), or why the pass does not open it. A withdrawn article is gone for
   * everyone; a sold single-shot or a passed deadline stop new sales only.
   */
  async function read(req: Request, res: Response, p: { id: string; face: Face; pass: string }): Promise<"read" | { reason: string; message: string }> {
    const { id, face, pass } = p;
    const checkout = await article(id);
    if (checkout.status === catalogV1.CheckoutStatus.VOID) throw new ProblemError("gone", "This article was withdrawn by its seller.");
    const origin = checkout.origin;
    // Each read of a relay article is a call to the seller's origin: bounded per pass (before a use is counted), like a package key's calls.
    if (origin) await spendFrom(relayReads, res, createHash("sha256").update(pass).digest("hex"));
    const check = await passes.check(pass, checkout, face);
    if (!check.valid) return { reason: check.reason, message: check.message };
    let rehearsal: Awaited<ReturnType<typeof countRehearsal>> | undefined;
    if (isRehearsalFace(checkout, face)) {
      try {
        rehearsal = await countRehearsal(checkout);
      } catch (err) {
        // Over the day's cap: nothing read, so the read a limited pass counted is given back.
        if (check.usesLeft !== undefined) await passes.giveBack(pass, checkout);
        throw err;
      }
    }
    const d = articleDeclarationOf(checkout);
    let status = 200;
    let paid: { contentType: string; body: string | Buffer };
    if (origin) {
      let r: fulfillmentV1.ReadArticleResponse;
      try {
        r = await clients.fulfillment.readArticle(
          {
            checkoutId: checkout.id,
            accountId: checkout.accountId,
            originUrl: origin.url,
            originMethod: origin.method,
            ...(origin.originKeyId !== undefined ? { originKeyId: origin.originKeyId } : {}),
            oneOffCredential: origin.oneOffCredential,
            params: articleParamsOf(req),
          },
          // Longer than the origin's own deadline: its failure (502, the read given back) is what the reader hears.
          { timeoutMs: ORIGIN_CALL_TIMEOUT_MS },
        );
      } catch (err) {
        if (err instanceof ProblemError) {
          payments.withBuyerHints(err, id);
          // The origin failed: the read a limited pass counted for it is given back.
          if (check.usesLeft !== undefined) await passes.giveBack(pass, checkout);
        }
        throw err;
      }
      const delivery = answered(r.delivery, "delivery");
      // The reader's own request error (400, 404, 422) is the origin's answer, passed on.
      if (delivery.outcome === fulfillmentV1.DeliveryOutcome.BUYER_ERROR) status = delivery.status;
      paid = relayedArticle(checkout, d, delivery);
    } else paid = paidArticle(checkout, d);
    const ancestors = await frameAncestors(checkout.accountId, d.canonical_url);
    if (ancestors.length) res.removeHeader("X-Frame-Options");
    res.setHeader("Content-Security-Policy", paidArticlePolicy(ancestors));
    // A relay article's read already names its tighter budget (reads a minute per pass); the day's cap then speaks by its 429.
    if (rehearsal && res.getHeader("X-RateLimit-Limit") === undefined) setRateLimitHeaders(res, rehearsal);
    if (check.usesLeft !== undefined) res.setHeader("X-Service-Grant-Uses-Left", String(check.usesLeft));
    if (check.expiresIn !== undefined) res.setHeader("X-Service-Grant-Expires-In", String(check.expiresIn));
    res.status(status).type(paid.contentType).send(paid.body);
    return "read";
  }

  const payByPost = (face: Face) => paidByPost(show(face, false));

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
