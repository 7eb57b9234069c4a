import { CONTENT_LIMITS } from "@c402/contracts";
import { PASS_HEADER, PASS_QUERY } from "./content";
import { anyJson, bool, idOf, object, orNull, ref, str, strOrNull, timestamp, timestampOrNull, url, usd, type Schema } from "./openapi-schema";

/**
 * Gated content in the OpenAPI document: the article faces (/x/{id} and
 * /x/{id}/test, their POST twins and prepare), the snippet, the seller's
 * read-back and the passes it issues, and their shapes (openapi.ts merges
 * them in and hands over its operation helpers, as for openapi-payouts.ts).
 * An article face answers as a checkout face does (it is derived from
 * openapi.ts's faceOperation), plus the pass.
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };
type FaceName = "live" | "rehearsal";

interface DocumentedResponse {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: Schema }>;
}
/** A /c/ face operation as openapi.ts's faceOperation builds it: its 402 has a JSON body (the x402 one) and headers; 429 a relay's limits. */
interface FaceOperation {
  description: string;
  parameters: { name: string }[];
  responses: Record<string, DocumentedResponse> & {
    "200": DocumentedResponse;
    "402": DocumentedResponse & { headers: Record<string, unknown>; content: { "application/json": { schema: Schema } } };
    "429": DocumentedResponse;
  };
}

export interface ContentOperationKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  authenticated: (minimumScope: "read_only" | "payments" | "full") => Part;
  bodyProblems: Part;
  use: (name: "BadRequest" | "NotFound" | "InvalidRequest") => unknown;
  problem: (description: string, status: 410) => unknown;
  /** A shared response object itself (to extend it), not a reference to it. */
  shared: (name: "BadRequest" | "NotFound" | "InvalidRequest" | "RehearsalCapReached") => { description: string; content: Record<string, unknown> };
  json: (description: string, schema: Schema) => unknown;
  header: (description: string, schema: Schema, required?: boolean) => unknown;
  body: (name: "ContentGrantCreate" | "GrantCreate") => unknown;
  pathParam: (name: string, schema: Schema, description?: string) => unknown;
  /** The checkout face (/c/{id}, /c/{id}/test, their POST twins) the article faces derive from. */
  faceOperation: (face: FaceName, method?: "get" | "post") => unknown;
  prepareOperation: (face: FaceName, id: unknown) => unknown;
  /** The schema of a base64 header value (PAYMENT-RESPONSE). */
  base64: Schema;
  /** The schema of a header holding a whole number. */
  wholeNumber: Schema;
}

/** Request bodies a client could send as they are. */
export const CONTENT_EXAMPLES = {
  ContentGrantCreate: { subject: "reviewer@example.com", scope: "content", ttl_seconds: 604_800, uses: 10 },
  GrantCreate: { subject: "newsletter subscriber 4711", ttl_seconds: 86_400 },
};

/** A pass as identity signs it: `gp1.<key id>.<claims>.<tag>`, opaque to clients. */
const pass: Schema = { type: "string", pattern: "^gp1\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$", maxLength: 4096 };
const passScope: Schema = { enum: ["seller", "content"], description: "seller: the pass opens every article the seller gates; content: this one only" };
/** Why a pass does not open an article. */
const refusalReason: Schema = {
  enum: ["malformed", "signature", "expired", "other_seller", "other_content", "rehearsal_pass", "used_up"],
  description:
    "malformed (not a pass), signature (not issued here, or its key was retired), expired, other_seller, other_content (a content pass for another article), rehearsal_pass (a rehearsal's pass on a live face), used_up (a limited pass has opened all its reads)",
};

/** The pass fields of a purchase and of a seller's grant. */
function passFields(grant: Schema): Record<string, Schema> {
  return {
    grant: { ...grant, description: `The pass: send it as the ${PASS_HEADER} header (or ?${PASS_QUERY}=) to read the article again` },
    grant_scope: passScope,
    grant_expires_in: { type: "integer", minimum: 0, description: "Seconds until the pass expires" },
  };
}

export function contentResponseSchemas(): Record<string, Schema> {
  const textOrNull = (description: string): Schema => ({ ...strOrNull, description });
  return {
    ContentDeclaration: object(
      {
        teaser: textOrNull("The free part as declared (null: the description, else the opening of the body, is shown)"),
        author: strOrNull,
        published: { ...strOrNull, description: "ISO 8601 date or date-time, as sent" },
        canonical_url: { ...strOrNull, description: "The seller's URL of the article: its origin may frame the article (one site: wildcards are refused)" },
        keywords: { type: "array", items: str },
        section: strOrNull,
        language: { ...strOrNull, description: "BCP 47 tag" },
        license_url: strOrNull,
        pass_scope: passScope,
        pass_hours: { type: "integer", minimum: 1, maximum: CONTENT_LIMITS.passHoursMax, description: "Lifetime of the pass a purchase answers" },
      },
      { closed: true, description: "A gated article's declaration, normalized: every field present, the defaults filled in" },
    ),
    ArticleBlock: object(
      {
        teaser: textOrNull("The free part: the declared teaser, else the description, else the opening of the body (never the whole of it)"),
        byline: object({ author: strOrNull, published: strOrNull }),
        tags: { type: "array", items: str, description: "The declaration's keywords" },
        section: strOrNull,
        language: strOrNull,
        canonical_url: strOrNull,
        license_url: strOrNull,
        pass: object(
          { scope: passScope, hours: { type: "integer", minimum: 1 }, header: { const: PASS_HEADER }, query: { const: PASS_QUERY }, how: str },
          { description: "What a purchase's pass opens, for how long, and how to present it" },
        ),
      },
      { description: "A gated article as a reader sees it before paying (never the body)" },
    ),
    GrantRefused: object({ reason: refusalReason, message: str }, { closed: true, description: "Why the pass presented does not open this article" }),
    Grant: object(passFields(pass), { closed: true, description: "A pass the seller issued, shown only in this answer (it is never stored)" }),
    ArticlePurchase: {
      allOf: [
        ref("Paid"),
        object(passFields(orNull(pass)), {
          description: "A gated article's purchase adds its pass (grant null: a redelivery after the first purchase's pass expired)",
        }),
      ],
    },
    Content: object(
      {
        id: idOf("cnt"),
        object: { const: "content" },
        url: { ...url, description: "The live face, /x/{id}" },
        test_url: url,
        snippet_url: url,
        status: ref("CheckoutStatus"),
        test_mode: { ...bool, description: "true until the seller goes live" },
        title: str,
        description: strOrNull,
        price_usd: usd,
        body: { ...anyJson, description: "The article as written (a string of text or HTML, or any JSON value)" },
        content: ref("ContentDeclaration"),
        teaser: textOrNull("The free part as readers see it (see ArticleBlock)"),
        created_at: timestamp,
        expires_at: timestampOrNull,
      },
      { closed: true, description: "One of the account's gated articles: the body as written and the full declaration" },
    ),
    ContentSnippet: object(
      {
        id: idOf("cnt"),
        object: { const: "content_snippet" },
        snippet: { ...str, description: "HTML to paste into the seller's page: the teaser, a link to the gate, the JSON-LD (works without any script)" },
        gate_url: { ...url, description: "The live face, /x/{id}: a browser gets the wall there, an agent the 402" },
        teaser: strOrNull,
        jsonld: object(
          {
            "@context": { const: "https://schema.org" },
            "@type": { const: "Article" },
            headline: str,
            description: strOrNull,
            url,
            author: object({ "@type": { const: "Person" }, name: str }),
            datePublished: str,
            keywords: str,
            articleSection: str,
            inLanguage: str,
            license: str,
            isAccessibleForFree: { const: false },
            hasPart: object({ "@type": { const: "WebPageElement" }, isAccessibleForFree: { const: false }, cssSelector: { const: ".c402-paid" } }),
            offers: object({ "@type": { const: "Offer" }, price: usd, priceCurrency: { const: "USD" }, url }),
          },
          {
            optional: ["author", "datePublished", "keywords", "articleSection", "inLanguage", "license"],
            description: "schema.org Article markup of a paywalled article (the paid part named by its CSS selector)",
          },
        ),
        price_usd: usd,
      },
      { closed: true, description: "What a seller pastes into its own page" },
    ),
  };
}

/** What the faces of /c/ take that an article face does not: its own id (cnt_), a package key (articles sell no packages), a handoff nonce. */
const NOT_ON_ARTICLE_FACES = new Set(["id", "Authorization", "h"]);

const PASS_READS =
  'With a pass (the X-Service-Grant header, or ?grant=): the article itself, with X-Service-Grant-Expires-In (and X-Service-Grant-Uses-Left for a pass limited in reads: each read counts). An inline article: its string as an HTML page holding it in `<article class="c402-paid">` (sandboxed: no script runs), any other JSON value verbatim as application/json. A relay article: its origin is called with the reader\'s query parameters (never the pass) and answers the same way (HTML inside `<article class="c402-paid">`, any other type verbatim; its 400, 404 or 422 passed on with that status), within a budget of reads a minute per pass (X-RateLimit-*, then 429). A pass that does not open the article answers the 402 with `grant_refused` {reason, message} and the X-Service-Grant-Refused header. A rehearsal pass (from a rehearsal purchase, or issued with a test key) opens rehearsal faces only: /x/{id}/test, and /x/{id} until the seller goes live. A pass still reads an article whose deadline passed or that sold out; a withdrawn (void) one answers 410. On a rehearsal face each read (and each purchase of an inline article) counts against the checkout\'s test_delivery_daily_cap for the UTC day (X-RateLimit-*; past it 429 with live_url, nothing delivered).';

/** An article as a reader gets it (a read with a pass, or the purchase's JSON): an HTML page, JSON, or a relay article's origin's own type. */
const articleAnswer = {
  "application/json": {
    schema: { anyOf: [ref("ArticlePurchase"), { ...anyJson, description: "A JSON article (or a relay article's JSON answer), verbatim" }] },
  },
  "text/html": { schema: { type: "string", description: 'An HTML page holding the article in `<article class="c402-paid">`' } },
  "*/*": { schema: { description: "A relay article's answer in the origin's own type, verbatim" } },
};

export function contentPaths(k: ContentOperationKit): Record<string, Record<string, unknown>> {
  const articleId = k.pathParam("id", idOf("cnt"), "Gated article id");
  const passParameters = [
    {
      name: PASS_HEADER,
      in: "header",
      required: false,
      schema: pass,
      description: "A pass (a purchase's grant, or one the seller issued): reads the article instead of paying; a payment header wins over it",
    },
    {
      name: PASS_QUERY,
      in: "query",
      required: false,
      schema: pass,
      description: `The pass as a query parameter, for links (the ${PASS_HEADER} header wins when both are sent)`,
    },
  ];

  /** A problem of the article faces, or (a relay article) its origin's answer with that status: to a purchase (charged, fault buyer) or to a read with a pass. */
  const orOriginAnswer = (name: "BadRequest" | "NotFound" | "InvalidRequest") => {
    const shared = k.shared(name);
    return {
      description: `${shared.description}. Or, a relay article, its origin answered the reader's request with this status: to a purchase, charged, the origin's body with the receipt and the pass (fault buyer); to a read with a pass, its answer passed on`,
      content: { ...shared.content, ...articleAnswer },
    };
  };

  /** An article face, derived from the checkout face: the same payment answers (inline or relay), plus the pass; no package. */
  function articleFace(face: FaceName, method: "get" | "post" = "get") {
    const base = k.faceOperation(face, method) as FaceOperation;
    const post = method === "post";
    const { "401": _packageKey, ...kept } = base.responses;
    const { "200": paid, "402": required, "429": limited } = base.responses;
    return k.operation({
      ...base,
      summary:
        (face === "live"
          ? "Gated article, live face: read it with a pass, or buy it (the purchase answers a pass)"
          : "Gated article, rehearsal face (simulated settlement, no funds move)") + (post ? " (POST twin of paying by header on GET)" : ""),
      description: post
        ? `${base.description} On an article the purchase answers the pass too (grant, grant_scope, grant_expires_in), and a pass instead of a payment reads the article as GET does (never the wall page). ${PASS_READS}`
        : `Without a payment or a pass: 402 with the requirements, whose endpoint block carries \`article\` (teaser, byline, tags, the pass terms; never the body), or the wall page for browsers (\`Accept: text/html\`). With PAYMENT-SIGNATURE (or X-PAYMENT), which wins over a pass: the purchase, 200 with the article in fulfillment.payload (a relay article: its origin's answer), the receipt and the pass (grant, grant_scope, grant_expires_in); or 402 with the reason the payment was refused. ${PASS_READS} Never cacheable.`,
      parameters: [articleId, ...base.parameters.filter((p) => !NOT_ON_ARTICLE_FACES.has(p.name)), ...passParameters],
      responses: {
        ...kept,
        "200": {
          description:
            "The article read with a pass (an HTML page, a JSON article verbatim, or a relay article's answer in its own type); or a purchase (application/json): the article in fulfillment.payload, the receipt and the pass",
          headers: {
            ...paid.headers,
            "PAYMENT-RESPONSE": k.header("The x402 SettleResponse, base64 JSON (a purchase; absent on a read with a pass)", k.base64, false),
            "X-Service-Grant-Expires-In": k.header("A read with a pass: seconds the pass has left", k.wholeNumber, false),
            "X-Service-Grant-Uses-Left": k.header("A read with a pass limited in reads: the reads it has left after this one", k.wholeNumber, false),
          },
          content: articleAnswer,
        },
        "400": orOriginAnswer("BadRequest"),
        "402": {
          description: `Payment required. Without a pass, or with one that does not open the article (then \`grant_refused\` and X-Service-Grant-Refused say why): the x402 body (v2, or v1 with x402_version=1) whose endpoint block carries \`article\`${post ? "" : ", or the wall page for browsers"}. A presented payment refused: a problem document with \`reason\` and accepts[]. The v2 requirements are in PAYMENT-REQUIRED`,
          headers: {
            ...required.headers,
            "X-Service-Grant-Refused": k.header("Why the pass presented does not open the article (as grant_refused.reason)", refusalReason, false),
          },
          content: {
            ...required.content,
            "application/json": {
              schema: {
                allOf: [
                  required.content["application/json"].schema,
                  object({ endpoint: object({ article: ref("ArticleBlock") }), grant_refused: ref("GrantRefused") }, { optional: ["grant_refused"] }),
                ],
              },
            },
            // A refused payment; an article has no package to exhaust.
            "application/problem+json": { schema: ref("PaymentRefused") },
          },
        },
        "404": orOriginAnswer("NotFound"),
        "410": k.problem(
          "The article was withdrawn by its seller (void), for a pass too; or, without a pass, it no longer sells (its deadline passed, or a single-shot sold)",
          410,
        ),
        "422": orOriginAnswer("InvalidRequest"),
        "429": { ...limited, description: `${k.shared("RehearsalCapReached").description}; or a pass's reads of relay articles this minute are spent` },
      },
    });
  }

  return {
    "/x/{id}": { get: articleFace("live") },
    "/x/{id}/test": { get: articleFace("rehearsal") },
    "/x/{id}/pay": { post: articleFace("live", "post") },
    "/x/{id}/test/pay": { post: articleFace("rehearsal", "post") },
    "/x/{id}/prepare": { post: k.prepareOperation("live", articleId) },
    "/x/{id}/test/prepare": { post: k.prepareOperation("rehearsal", articleId) },
    "/x/{id}/snippet": {
      get: k.operation({
        operationId: "getContentSnippet",
        summary: "What a seller pastes into its own page: the teaser, a link to the gate and schema.org Article markup (public)",
        description:
          "The snippet works without any script: the teaser and a link to the gate (/x/{id}), where a browser gets the wall and an agent the 402. `jsonld` is the structured data the snippet carries (isAccessibleForFree false; the paid part named by `.c402-paid`). 410 once the article is withdrawn (void).",
        parameters: [articleId],
        responses: {
          "200": k.json("The snippet", ref("ContentSnippet")),
          "400": k.use("BadRequest"),
          "404": k.use("NotFound"),
          "410": k.problem("The article was withdrawn by its seller (void)", 410),
        },
      }),
    },
    "/v1/content/{id}": {
      get: k.operation(
        {
          operationId: "getContent",
          summary: "One of the account's gated articles: the body as written and the full declaration",
          description:
            "Change it with PATCH /v1/checkouts/{id} (payload, content, offer-card fields). Another seller's article, and any id that is not an article's (cnt_…), answer 404.",
          parameters: [articleId],
          responses: { "200": k.json("The article", ref("Content")), "404": k.use("NotFound") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/content/{id}/grants": {
      post: k.operation(
        {
          operationId: "issueContentGrant",
          summary: "Issue a pass without a sale: to this article (scope content), or to every article the account gates (scope seller, the default)",
          description:
            "For a subscriber, a reviewer, a support case: `subject` says whom it is for (recorded, never interpreted). It lives ttl_seconds (default the article's pass_hours, at most 31 days); `uses` limits the reads it opens. A pass issued with a test key opens rehearsal faces only. Recorded as a `pass.issued` account event (never the pass itself). Another seller's article answers 404.",
          parameters: [articleId],
          requestBody: k.body("ContentGrantCreate"),
          responses: { "201": k.json("The pass, shown once", ref("Grant")), "404": k.use("NotFound") },
        },
        k.authenticated("payments"),
        k.bodyProblems,
      ),
    },
    "/v1/grants": {
      post: k.operation(
        {
          operationId: "issueGrant",
          summary: "Issue a pass to every article the account gates (scope seller)",
          description:
            "`subject` says whom it is for (recorded, never interpreted). It lives ttl_seconds (default 24 hours, at most 31 days); `uses` limits the reads it opens. A pass issued with a test key opens rehearsal faces only. Recorded as a `pass.issued` account event (never the pass itself).",
          requestBody: k.body("GrantCreate"),
          responses: { "201": k.json("The pass, shown once", ref("Grant")) },
        },
        k.authenticated("payments"),
        k.bodyProblems,
      ),
    },
  };
}
