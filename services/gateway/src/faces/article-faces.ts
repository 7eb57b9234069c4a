import { createHash } from "node:crypto";
import { catalogV1, framingOrigins, fulfillmentV1, ORIGIN_CALL_TIMEOUT_MS } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import type { GatewayDeps } from "../http/deps";
import type { EmbedOrigins } from "../http/embed-origins";
import { articlePayPage } from "../pages/checkout-pages";
import { articleDeclarationOf, paidArticle, paidArticlePolicy, PASS_QUERY, relayedArticle, teaserOf } from "../views/content";
import { ArticlePasses } from "./article-passes";
import { ArticleRehearsals, isRehearsalFace } from "./article-rehearsals";
import type { Face, WireVersion } from "./face";
import type { FacePayments } from "./face-payments";
import type { UnpaidAnswers } from "./unpaid";

/** A read with a pass the faces answer: the article, with the headers that go with it. */
export interface ArticleRead {
  status: number;
  contentType: string;
  body: string | Buffer;
  headers: [string, string][];
  /** Whether some origin may frame it (the Content-Security-Policy header names them; X-Frame-Options then goes). */
  frameable: boolean;
  /** The day's rehearsal budget this read left, for X-RateLimit-* (unless a tighter budget already named itself). */
  rehearsalBudget?: { limit: number; remaining: number; resetSeconds: number };
}

/** Why a pass does not open the article (the 402 then carries it as grant_refused). */
export interface PassRefusal {
  reason: string;
  message: string;
}

/** The 402 a face answers without a pass that opens it: JSON, or the wall for a browser. */
export interface ArticleWall {
  header: string;
  contentType: "html" | "json";
  body: string;
  /** The origins that may frame the wall (empty: none). */
  frameAncestors: string[];
  /** The page's own headers (its policy names the framing origins); absent on the JSON 402. */
  headers?: [string, string][];
}

/**
 * Gated content's faces (spec, Gated content), apart from HTTP: a read with
 * a pass (the article as it is now, or why the pass does not open it) and
 * the 402 or the wall otherwise. The routes in http/routes/content.ts turn
 * these into responses.
 */
export class ArticleFaces {
  private readonly passes: ArticlePasses;
  private readonly rehearsals: ArticleRehearsals;

  constructor(
    private readonly deps: Pick<GatewayDeps, "clients">,
    private readonly unpaid: UnpaidAnswers,
    private readonly payments: FacePayments,
    private readonly embedOrigins: EmbedOrigins,
  ) {
    this.passes = new ArticlePasses(deps.clients);
    this.rehearsals = new ArticleRehearsals(deps.clients);
  }

  /**
   * A read with a pass: the article as it is now (edits are live for the next
   * read), or why the pass does not open it. A withdrawn article is gone for
   * everyone; a sold single-shot or a passed deadline stop new sales only.
   * `spendRelayRead` counts a relay article's read against the pass's budget
   * a minute (it may refuse with 429) before a use is counted.
   */
  async read(p: {
    id: string;
    face: Face;
    pass: string;
    params: Record<string, string>;
    spendRelayRead: (passDigest: string) => Promise<void>;
  }): Promise<ArticleRead | PassRefusal> {
    const { id, face, pass } = p;
    const checkout = await this.article(id);
    if (checkout.status === catalogV1.CheckoutStatus.VOID) throw new ProblemError("gone", "This article was withdrawn by its seller.");
    const origin = checkout.origin;
    // Each read of a relay article is a call to the seller's origin: bounded per pass (before a use is counted), like a package key's calls.
    if (origin) await p.spendRelayRead(createHash("sha256").update(pass).digest("hex"));
    const check = await this.passes.check(pass, checkout, face);
    if (!check.valid) return { reason: check.reason, message: check.message };
    // A rehearsal face delivers the article itself: each read counts against the day's cap (docs/decisions.md "Gated content").
    const rehearsalBudget = isRehearsalFace(checkout, face) ? await this.countOrGiveBack(checkout, pass, check.usesLeft) : undefined;
    const d = articleDeclarationOf(checkout);
    let status = 200;
    let paid: { contentType: string; body: string | Buffer };
    if (origin) {
      const delivery = await this.readOrigin(checkout, origin, p.params, pass, check.usesLeft);
      // The reader's own request error (400, 404, 422) is the origin's answer, passed on.
      if (delivery.outcome === fulfillmentV1.DeliveryOutcome.BUYER_ERROR) status = delivery.status;
      paid = relayedArticle(checkout, d, delivery);
    } else paid = paidArticle(checkout, d);
    const ancestors = await this.frameAncestors(checkout.accountId, d.canonical_url);
    const headers: [string, string][] = [["Content-Security-Policy", paidArticlePolicy(ancestors)]];
    if (check.usesLeft !== undefined) headers.push(["X-Service-Grant-Uses-Left", String(check.usesLeft)]);
    if (check.expiresIn !== undefined) headers.push(["X-Service-Grant-Expires-In", String(check.expiresIn)]);
    return {
      status,
      contentType: paid.contentType,
      body: paid.body,
      headers,
      frameable: ancestors.length > 0,
      ...(rehearsalBudget ? { rehearsalBudget } : {}),
    };
  }

  /** The 402 without a pass that opens the article (with the refusal when a pass did not): the wall for a browser, else JSON. */
  async wall(p: {
    id: string;
    face: Face;
    wireVersion: WireVersion;
    page: boolean;
    refused?: PassRefusal | undefined;
    params?: Record<string, string>;
  }): Promise<ArticleWall> {
    const answer = await this.unpaid.of(p.id, p.face, p.wireVersion);
    if (p.page) {
      const checkout = await this.article(p.id);
      const d = articleDeclarationOf(checkout);
      const frameAncestors = await this.frameAncestors(answer.accountId, d.canonical_url);
      const byline = [d.author, d.published].filter((v) => v !== null).join(" · ");
      const article = { teaser: teaserOf(checkout, d), byline, passHours: d.pass_hours, language: d.language ?? "en", passQuery: PASS_QUERY };
      const page = await articlePayPage({ checkout, face: p.face, answer, frameOrigins: frameAncestors, params: p.params ?? {}, article });
      return { header: answer.header, contentType: "html", body: page.html, frameAncestors, headers: page.headers };
    }
    const body = p.refused ? JSON.stringify({ ...answer.body, grant_refused: p.refused }) : answer.json;
    return { header: answer.header, contentType: "json", body, frameAncestors: [] };
  }

  private async article(id: string): Promise<catalogV1.Checkout> {
    return answered((await this.deps.clients.catalog.getCheckout({ checkoutId: id })).checkout, "checkout");
  }

  /** The origins that may frame the article: the account's embed origins and its canonical URL's, only those the framing rule accepts. */
  private async frameAncestors(accountId: string, canonicalUrl: string | null | undefined): Promise<string[]> {
    return framingOrigins([...(await this.embedOrigins.of(accountId)), canonicalUrl]);
  }

  /** One rehearsal read counted; past the day's cap (429, with the live URL) the use a limited pass counted is given back. */
  private async countOrGiveBack(checkout: catalogV1.Checkout, pass: string, usesLeft: number | undefined) {
    try {
      return await this.rehearsals.count(checkout);
    } catch (err) {
      if (err instanceof ProblemError) this.payments.withBuyerHints(err, checkout.id);
      if (usesLeft !== undefined) await this.passes.giveBack(pass, checkout);
      throw err;
    }
  }

  /** A relay article's read: its origin called with the reader's parameters; when it fails (502) the use a limited pass counted is given back. */
  private async readOrigin(
    checkout: catalogV1.Checkout,
    origin: NonNullable<catalogV1.Checkout["origin"]>,
    params: Record<string, string>,
    pass: string,
    usesLeft: number | undefined,
  ): Promise<fulfillmentV1.Delivery> {
    try {
      const r = await this.deps.clients.fulfillment.readArticle(
        {
          checkoutId: checkout.id,
          accountId: checkout.accountId,
          originUrl: origin.url,
          originMethod: origin.method,
          ...(origin.originKeyId !== undefined ? { originKeyId: origin.originKeyId } : {}),
          oneOffCredential: origin.oneOffCredential,
          params,
        },
        // Longer than the origin's own deadline: its failure (502, the read given back) is what the reader hears.
        { timeoutMs: ORIGIN_CALL_TIMEOUT_MS },
      );
      return answered(r.delivery, "delivery");
    } catch (err) {
      if (err instanceof ProblemError) {
        this.payments.withBuyerHints(err, checkout.id);
        if (usesLeft !== undefined) await this.passes.giveBack(pass, checkout);
      }
      throw err;
    }
  }
}
