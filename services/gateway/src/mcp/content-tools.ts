import { schemas } from "../http/request-schemas";
import { sellerTool, type McpToolDefinition } from "./tool";

// The seller's gated articles: reading and changing one, its snippet, and the passes that open it.

const CONTENT_ID = { type: "string", minLength: 1, maxLength: 64, description: "The gated article's id (cnt_…)." } as const;
const contentRef = { type: "object", additionalProperties: false, required: ["checkout_id"], properties: { checkout_id: CONTENT_ID } } as const;

export const getContentTool: McpToolDefinition = ({ content }) =>
  sellerTool({
    name: "get_content",
    title: "Get a gated article",
    description:
      "One of the seller's gated articles (as GET /v1/content/{id}): the body as written, the full declaration (teaser, byline, pass terms) and its URLs.",
    inputSchema: contentRef,
    scope: "read_only",
    run: async (args, seller) => content.get(seller, String(args.checkout_id)),
  });

export const updateContentTool: McpToolDefinition = ({ content }) =>
  sellerTool({
    name: "update_content",
    title: "Update a gated article",
    description:
      "Changes a gated article (as PATCH /v1/checkouts/{id}): payload replaces the body, content replaces the whole declaration, and any offer-card field; live for the next read, pass holders included. Answers as get_content.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["checkout_id"],
      properties: { checkout_id: CONTENT_ID, ...schemas.CheckoutOfferPatch.properties },
    },
    scope: "payments",
    async run(args, seller) {
      const { checkout_id, ...patch } = args;
      return content.update(seller, String(checkout_id), patch);
    },
  });

export const getContentSnippetTool: McpToolDefinition = ({ content }) =>
  sellerTool({
    name: "get_content_snippet",
    title: "Get a gated article's snippet",
    description:
      "What to paste into the seller's own page for a gated article (as GET /x/{id}/snippet): the HTML snippet (teaser and an unlock link), gate_url, teaser, schema.org JSON-LD marking the paid part, and the price.",
    inputSchema: contentRef,
    scope: "read_only",
    // The snippet is public (GET /x/{id}/snippet); the tool is still a seller's, behind its scope.
    run: async (args) => content.snippet(String(args.checkout_id)),
  });

export const issueContentGrantTool: McpToolDefinition = ({ content }) =>
  sellerTool({
    name: "issue_content_grant",
    title: "Issue a pass",
    description:
      "Issues a pass (as POST /v1/content/{id}/grants) a reader presents as X-Service-Grant (or ?grant=): scope seller (default) opens every article of the account, content this one; ttl_seconds defaults to the article's pass_hours (at most 31 days); uses limits reads. " +
      "subject is recorded (pass.issued), never interpreted. A test key's pass opens rehearsal faces only.",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      required: ["checkout_id", ...schemas.ContentGrantCreate.required],
      properties: { checkout_id: CONTENT_ID, ...schemas.ContentGrantCreate.properties },
    },
    scope: "payments",
    async run(args, seller) {
      const { checkout_id, ...grant } = args;
      return content.grantForContent(seller, String(checkout_id), grant);
    },
  });
