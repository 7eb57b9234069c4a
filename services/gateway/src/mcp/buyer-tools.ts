import { isCheckoutId, isId } from "@c402/ids";
import { invalid, ProblemError } from "@c402/problems";
import { encodeHeader, signExactEvmPayment } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { schemas } from "../http/request-schemas";
import type { McpToolDefinition } from "./tool";

// A buyer's tools: no credential; a checkout is named by its id or by a face URL.

const CHECKOUT_REFERENCE = {
  type: "string",
  minLength: 1,
  maxLength: 2048,
  description: "A checkout id (chk_…, or cnt_… for a gated article) or a face URL (…/c/<id>, …/c/<id>/test, …/x/<id>, …/x/<id>/test).",
} as const;

/**
 * A checkout named by its id or by a face URL (…/c/<id>, …/x/<id>, either
 * with /test): the id and which face. Faces are separate namespaces: a
 * /c/ URL names a chk_ id, a /x/ URL a gated article's cnt_ id. An escrow
 * checkout's rehearsal (/e/<id>/test) is the escrow faces' (not built yet).
 */
function checkoutNamed(reference: string): { id: string; face: "live" | "test" } {
  const match = /^(?:(?:https?:\/\/[^/]+)?\/([cx])\/)?([A-Za-z0-9_]+)(\/test)?\/?(?:[?#].*)?$/.exec(reference.trim());
  const [namespace, id] = [match?.[1], match?.[2]];
  const known =
    id !== undefined &&
    (namespace === "c" ? isId("checkout", id) : namespace === "x" ? isId("contentCheckout", id) : isCheckoutId(id) && !isId("escrowCheckout", id));
  if (!match || id === undefined || !known) {
    throw invalid([{ field: "checkout", reason: "must be a checkout id (chk_…, cnt_…) or its URL (…/c/<id>, …/x/<id>, each optionally with /test)" }]);
  }
  return { id, face: match[3] ? "test" : "live" };
}

export const payTestCheckoutTool: McpToolDefinition = ({ unpaid, payments }) => ({
  name: "pay_test_checkout",
  title: "Pay a checkout's rehearsal",
  description:
    "Buys from a checkout's rehearsal face (/c/<id>/test, or /x/<id>/test for a gated article) with a simulated payment, signed here by a throwaway key: no wallet, no funds, nothing moves. " +
    "Answers what the face answers a paid request: the goods (fulfillment) and the receipt; for a gated article also grant, grant_scope and grant_expires_in (a pass that opens rehearsal faces). A live URL is rehearsed too: this tool never pays for real. No credential needed.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["checkout"],
    properties: {
      checkout: CHECKOUT_REFERENCE,
      params: {
        type: "object",
        maxProperties: 50,
        additionalProperties: { type: "string", maxLength: 2000 },
        description: "The call's parameters for a relay or mcp checkout (what a buyer sends as query parameters).",
      },
    },
  },
  async run(args) {
    const { checkout, params } = args as { checkout: string; params?: Record<string, string> };
    const { id } = checkoutNamed(checkout);
    const quote = await unpaid.of(id, "test", 2);
    const requirement = quote.required.accepts[0];
    if (!requirement) throw new ProblemError("unavailable", "This checkout's rehearsal face offers no way to pay right now.");
    const payment = await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), requirement, { resourceUrl: quote.required.resource.url });
    const answer = await payments.pay({ checkoutId: id, face: "test", header: encodeHeader(payment), legacy: false, params: params ?? {} });
    if (answer.contentType) {
      const refusal = JSON.parse(String(answer.body)) as { detail?: { message?: string } | string };
      const message = typeof refusal.detail === "string" ? refusal.detail : (refusal.detail?.message ?? "The rehearsal payment was refused.");
      throw new ProblemError("payment-required", message);
    }
    return { http_status: answer.status, ...(answer.body as object) };
  },
});

const { receipt_id: reportReceipt, ...reportFields } = schemas.ReportCreate.properties;

export const reportCheckoutTool: McpToolDefinition = ({ reports }) => ({
  name: "report_checkout",
  title: "Report a checkout",
  description:
    "Tells the seller something went wrong with a checkout (as POST /v1/checkouts/{id}/reports): a category from the closed set, the buyer's words, and the receipt_id of the purchase when there is one. " +
    "A report never refunds; the seller sees it. No credential needed; rate limited per client address (and per receipt).",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["checkout", ...schemas.ReportCreate.required],
    properties: { checkout: CHECKOUT_REFERENCE, ...reportFields, receipt_id: reportReceipt },
  },
  async run(args, _credential, http) {
    const { checkout, ...report } = args as { checkout: string } & Record<string, unknown>;
    return reports.file(http.req, http.res, checkoutNamed(checkout).id, report);
  },
});

export const quoteCheckoutTool: McpToolDefinition = ({ unpaid }) => ({
  name: "quote_checkout",
  title: "Quote a checkout",
  description:
    "What a checkout costs before paying: its offer (price, fee, total, offer card), the x402 requirements to sign (accepts) and how to pay (endpoint). " +
    "Takes the checkout's id or URL; a …/test URL quotes the rehearsal face. A gated article's (/x/<id>) also carries endpoint.article: teaser, byline, tags and pass terms. No credential needed.",
  inputSchema: { type: "object", additionalProperties: false, required: ["checkout"], properties: { checkout: CHECKOUT_REFERENCE } },
  async run(args) {
    const { checkout } = args as { checkout: string };
    const { id, face } = checkoutNamed(checkout);
    const answer = await unpaid.of(id, face, 2);
    return { checkout_id: id, face, ...answer.body };
  },
});
