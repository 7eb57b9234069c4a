import { isCheckoutId, isId } from "@c402/ids";
import { invalid, ProblemError } from "@c402/problems";
import { authorizationFromMessage, requirementFromMessage } from "@c402/contracts";
import { answered } from "@c402/rpc";
import { encodeHeader, signEscrowDeposit, signExactEvmPayment } from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { FACE_PROTO } from "../faces/face";
import { faceUrl } from "../views/checkouts";
import { schemas } from "../http/request-schemas";
import type { McpToolDefinition, McpToolDeps } from "./tool";

// A buyer's tools: no credential; a checkout is named by its id or by a face URL.

const CHECKOUT_REFERENCE = {
  type: "string",
  minLength: 1,
  maxLength: 2048,
  description:
    "A checkout id (chk_…, cnt_… for a gated article, esc_… for an escrow checkout) or a face URL (…/c/<id>, …/x/<id>, …/e/<id>, each optionally with /test).",
} as const;

/**
 * A checkout named by its id or by a face URL (…/c/<id>, …/x/<id>, either
 * with /test): the id and which face. Faces are separate namespaces: a
 * /c/ URL names a chk_ id, a /x/ URL a gated article's cnt_ id, an /e/ URL an
 * escrow checkout's esc_ id.
 */
function checkoutNamed(reference: string): { id: string; face: "live" | "test" } {
  const match = /^(?:(?:https?:\/\/[^/]+)?\/([cxe])\/)?([A-Za-z0-9_]+)(\/test)?\/?(?:[?#].*)?$/.exec(reference.trim());
  const [namespace, id] = [match?.[1], match?.[2]];
  const kind = { c: "checkout", x: "contentCheckout", e: "escrowCheckout" } as const;
  const known = id !== undefined && (namespace === undefined ? isCheckoutId(id) : isId(kind[namespace as keyof typeof kind], id));
  if (!match || id === undefined || !known) {
    throw invalid([
      { field: "checkout", reason: "must be a checkout id (chk_…, cnt_…, esc_…) or its URL (…/c/<id>, …/x/<id>, …/e/<id>, each optionally with /test)" },
    ]);
  }
  return { id, face: match[3] ? "test" : "live" };
}

/** An escrow checkout's rehearsal deposit: prepared by payments for `buyer` (a fresh salt), signed by it, as the /e/{id}/test face takes it. */
async function rehearsedEscrowDeposit(deps: McpToolDeps["deps"], id: string, buyer: PrivateKeyAccount) {
  const r = await deps.clients.payments.preparePayment({ checkoutId: id, face: FACE_PROTO.test, payer: buyer.address });
  if (r.escrowSalt === undefined) throw new ProblemError("unavailable", "This escrow checkout's rehearsal face prepared no deposit.");
  return signEscrowDeposit(buyer, {
    requirement: requirementFromMessage(answered(r.requirement, "requirement")),
    authorization: authorizationFromMessage(answered(r.authorization, "authorization")),
    resourceUrl: faceUrl(deps.settings.baseUrl, id, "test"),
    salt: r.escrowSalt,
  });
}

export const payTestCheckoutTool: McpToolDefinition = ({ deps, unpaid, payments }) => ({
  name: "pay_test_checkout",
  title: "Pay a checkout's rehearsal",
  description:
    "Buys from a checkout's rehearsal face (/c/<id>/test, /x/<id>/test for a gated article, /e/<id>/test for an escrow checkout) with a simulated payment, signed here by a throwaway key: no wallet, no funds, nothing moves. " +
    "Answers what the face answers a paid request: the goods (fulfillment) and the receipt; for a gated article also grant, grant_scope and grant_expires_in (a pass that opens rehearsal faces); for an escrow checkout the test escrow held (escrow, no receipt until it is released). A live URL is rehearsed too: this tool never pays for real. No credential needed.",
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
    const buyer = privateKeyToAccount(generatePrivateKey());
    const payment = isId("escrowCheckout", id)
      ? await rehearsedEscrowDeposit(deps, id, buyer)
      : await signExactEvmPayment(buyer, requirement, { resourceUrl: quote.required.resource.url });
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
