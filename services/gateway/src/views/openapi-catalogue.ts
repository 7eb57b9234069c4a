import { SELLER_SLUG } from "@c402/ids";
import { bool, checkoutOrArticleId, object, ref, str, strOrNull, timestamp, timestampOrNull, url, usd6, type Schema } from "./openapi-schema";

/**
 * The seller catalogue's operations and shapes (/v1/sellers/{slug}/offers,
 * /v1/sellers/{slug}/embed, /schedule/{slug}) and the /docs viewer's files,
 * merged into the OpenAPI document by openapi.ts, which hands over its
 * operation helpers (as openapi-reports.ts takes them).
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };

export interface CatalogueKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  use: (name: "BadRequest" | "NotFound" | "InvalidRequest" | "Unavailable") => unknown;
  json: (description: string, schema: Schema, headers?: Record<string, unknown>) => unknown;
  pathParam: (name: string, schema: Schema, description?: string) => unknown;
  pageQuery: unknown[];
}

const header = (description: string, schema: Schema, required = true) => ({ description, required, schema });
const cacheControl = header("Public data: browsers and shared caches may keep it a minute", { type: "string", pattern: "^public, max-age=[0-9]+$" });
const anyOrigin = header("Any site may read it (public, no credential)", { const: "*" });
const csp = header("What the page may load: nothing from elsewhere", { type: "string", pattern: "default-src 'none'" });

export function catalogueResponseSchemas(): Record<string, Schema> {
  return {
    CatalogueSeller: object(
      {
        slug: { type: "string", pattern: SELLER_SLUG.source },
        name: strOrNull,
        profile_type: { enum: ["individual", "team", "company", null] },
        bio: strOrNull,
        avatar_url: { type: ["string", "null"], maxLength: 2048 },
        website_url: { type: ["string", "null"], maxLength: 2048 },
        social_links: { type: "object", additionalProperties: { type: "string", maxLength: 2048 } },
        verified: { type: "boolean", description: "Set by the operators, never by the seller" },
      },
      { closed: true, description: "The seller's public profile (no account id)" },
    ),
    CatalogueOffer: object(
      {
        id: checkoutOrArticleId,
        object: { const: "offer" },
        title: str,
        description: strOrNull,
        price_usd: usd6,
        fee_usd: usd6,
        total_usd: { ...usd6, description: "What the buyer pays: the price plus the fee" },
        currency: { const: "USDC" },
        calls_included: { type: ["integer", "null"], minimum: 1, description: "A package: the calls one payment buys (null: one call)" },
        reusable: { type: "boolean", description: "false: one sale only (single-shot)" },
        url: { ...url, description: "The live face: GET it for the 402, pay it with an x402 client" },
        test_url: { ...url, description: "The rehearsal face: the same flow, settled without funds" },
        call_url: {
          type: ["string", "null"],
          format: "uri",
          description: "A relay or mcp offer: its call URL under the seller's handle (/r/{slug}/{id}, served as the live face); null otherwise",
        },
        created_at: timestamp,
        expires_at: timestampOrNull,
        freshness: strOrNull,
        coverage: strOrNull,
        source: strOrNull,
        constraints: strOrNull,
      },
      { closed: true, description: "A checkout on sale: its offer card's text claims (the live face's 402 carries the schemas and examples), never the goods" },
    ),
    SellerCatalogue: object(
      {
        object: { const: "seller_catalogue" },
        seller: ref("CatalogueSeller"),
        offers: { type: "array", items: ref("CatalogueOffer") },
        has_more: bool,
        next_cursor: strOrNull,
        links: object({ offers: url, page: url, embed: url, profile: url }, { closed: true }),
      },
      { closed: true, description: "What a seller sells now, newest first" },
    ),
  };
}

export function cataloguePaths(k: CatalogueKit): Record<string, Record<string, unknown>> {
  const slug = k.pathParam("slug", { type: "string", minLength: 1, maxLength: 64 }, "The seller's public slug (PATCH /auth/me sets it)");
  const selling =
    "Lists the seller's armed checkouts that sell now (not void, not expired, not a sold single-shot), newest first, `limit` (default 50, at most 200) at a time; an unarmed checkout only rehearses and is not listed. A slug no seller holds, or text that cannot be a slug, is 404.";
  const problems = { "400": k.use("BadRequest"), "404": k.use("NotFound"), "422": k.use("InvalidRequest") };
  const html = (description: string, headers: Record<string, unknown>) => ({ description, headers, content: { "text/html": { schema: { type: "string" } } } });
  return {
    "/v1/sellers/{slug}/offers": {
      get: k.operation({
        operationId: "getSellerOffers",
        summary: "A seller's catalogue: what it sells now (no key)",
        description: selling,
        parameters: [slug, ...k.pageQuery],
        responses: {
          "200": k.json("The catalogue", ref("SellerCatalogue"), { "Cache-Control": cacheControl, "Access-Control-Allow-Origin": anyOrigin }),
          ...problems,
        },
      }),
    },
    "/v1/sellers/{slug}/embed": {
      get: k.operation({
        operationId: "getSellerEmbed",
        summary: "A seller's catalogue as an HTML fragment to put in another page (no key)",
        description: `${selling} One element with its own scoped <style>, no script, links that open each checkout's live face; any site may fetch or frame it.`,
        parameters: [slug, ...k.pageQuery],
        responses: {
          "200": html("The fragment (no <html> wrapper)", {
            "Cache-Control": cacheControl,
            "Access-Control-Allow-Origin": anyOrigin,
            "Content-Security-Policy": csp,
          }),
          ...problems,
        },
      }),
    },
    "/u/{slug}": {
      get: k.operation({
        operationId: "getSellerProfile",
        summary: "A seller's public page (no key): the catalogue as JSON, or as the page for a browser (Accept: text/html)",
        description: `${selling} Each relay or mcp offer names its call URL (/r/{slug}/{id}).`,
        parameters: [slug, ...k.pageQuery],
        responses: {
          "200": {
            description: "The catalogue (JSON), or the page",
            headers: { "Cache-Control": cacheControl, "Access-Control-Allow-Origin": anyOrigin },
            content: { "application/json": { schema: ref("SellerCatalogue") }, "text/html": { schema: { type: "string" } } },
          },
          ...problems,
        },
      }),
    },
    "/schedule/{slug}": {
      get: k.operation({
        operationId: "getSellerPage",
        summary: "A seller's catalogue as a page; or, for a series id, the series' buyer view (no key)",
        description: `${selling} A series id in the place of the slug (/schedule/{id}, sch_…) answers that recurring series as its buyer sees it (JSON, open to any origin): its periods, and \`cancel\` (null once it ended): the EIP-191 message the payer signs to stop the charging, and one USDC CancelAuthorization typed data per held period (POST /schedule/{id}/cancel takes either). Another id there is 404.`,
        parameters: [slug, ...k.pageQuery],
        responses: {
          "200": {
            description: "The page (a slug), or the series' buyer view (a series id)",
            headers: { "Cache-Control": header("A slug's page: public, a minute; a series: no-store", { type: "string" }) },
            content: { "text/html": { schema: { type: "string" } }, "application/json": { schema: ref("ScheduleBuyerView") } },
          },
          "503": k.use("Unavailable"),
          ...problems,
        },
      }),
    },
    "/docs/assets/{file}": {
      get: k.operation({
        operationId: "getDocsAsset",
        summary: "A file of the /docs viewer (Swagger UI, served by this service)",
        parameters: [k.pathParam("file", { enum: ["swagger-ui.css", "swagger-ui-bundle.js", "docs.js"] }, "The file")],
        responses: {
          "200": {
            description: "The file",
            headers: { "Cache-Control": header("Kept a day", { type: "string", pattern: "^public, max-age=[0-9]+$" }) },
            content: { "text/css": { schema: { type: "string" } }, "text/javascript": { schema: { type: "string" } } },
          },
          "400": k.use("BadRequest"),
          "404": k.use("NotFound"),
        },
      }),
    },
  };
}
