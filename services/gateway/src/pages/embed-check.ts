import { framingOriginOf, framingOrigins } from "@c402/contracts";
import { isCheckoutId } from "@c402/ids";
import { invalid, type FieldError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router } from "express";
import type { GatewayDeps } from "../http/deps";
import type { EmbedOrigins } from "../http/embed-origins";
import { checkoutStatus, faceUrls } from "../views/checkouts";
import { declarationOf } from "../views/content";

/** Longest `origin` accepted: a scheme, a host name (253) and a port. */
const MAX_ORIGIN_LENGTH = 300;

/** One value of a query parameter: a repeated parameter (Express makes it an array) is not one value. */
function single(query: Record<string, unknown>, name: string, errors: FieldError[]): string | undefined {
  const value = query[name];
  if (typeof value === "string") return value;
  errors.push({ field: name, reason: value === undefined ? "is required" : "must be given once, as a plain value" });
  return undefined;
}

/** The origin a page reports (`location.origin`): http(s), a host, an optional port, nothing else (a trailing slash is forgiven). */
function originOf(value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_ORIGIN_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const bare = value.replace(/\/$/, "").toLowerCase();
  if ((url.protocol !== "https:" && url.protocol !== "http:") || bare !== url.origin.toLowerCase()) return undefined;
  return url.origin;
}

/** The query of a check: a checkout id of any face and a page origin; 422 naming each bad one. */
export function embedCheckQueryOf(query: Record<string, unknown>): { checkoutId: string; origin: string } {
  const errors: FieldError[] = [];
  const id = single(query, "checkout_id", errors);
  if (id !== undefined && !isCheckoutId(id)) errors.push({ field: "checkout_id", reason: "must be a checkout id (chk_…, cnt_… or esc_…)" });
  const raw = single(query, "origin", errors);
  const origin = raw === undefined ? undefined : originOf(raw);
  if (raw !== undefined && origin === undefined)
    errors.push({ field: "origin", reason: "must be a web origin such as https://shop.example (scheme, host, port)" });
  if (errors.length > 0 || id === undefined || origin === undefined) throw invalid(errors, "Invalid embed check parameters.");
  return { checkoutId: id, origin };
}

/**
 * GET /embed/check?checkout_id=&origin=: why an embed on `origin` shows the
 * checkout or stays blank (spec, Embedding: the diagnostic the embed script
 * uses). Public and readable from any page (CORS *): it tells what the pay
 * page's own headers already tell anyone, who may frame it, and whether
 * the frame takes payment (wallet_button). Never cached: a seller fixing the
 * allowlist checks again at once.
 */
export function embedCheckRoutes({ clients, settings }: GatewayDeps, embedOrigins: EmbedOrigins): Router {
  const router = Router();
  router.get("/embed/check", async (req, res) => {
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Cache-Control", "no-store");
    const { checkoutId, origin } = embedCheckQueryOf(req.query);
    const checkout = answered((await clients.catalog.getCheckout({ checkoutId })).checkout, "checkout");
    const accountOrigins = await embedOrigins.of(checkout.accountId);
    // An article may also be framed by its canonical URL's origin (spec, Gated content).
    const allowed = framingOrigins([...accountOrigins, declarationOf(checkout)?.canonical_url]);
    const allowable = framingOriginOf(origin) !== undefined;
    const framingAllowed = allowed.includes(origin);
    const walletButton = checkout.settings?.walletButton ?? false;
    res.json({
      object: "embed_check",
      checkout_id: checkout.id,
      origin,
      status: checkoutStatus(checkout),
      framing_allowed: framingAllowed,
      origin_allowable: allowable,
      allowed_origins_count: allowed.length,
      wallet_button: walletButton,
      button_mode: true,
      face_url: faceUrls(settings.baseUrl, checkout.id).url,
      message: messageOf({ framingAllowed, allowable, walletButton, count: allowed.length }),
    });
  });
  return router;
}

function messageOf(c: { framingAllowed: boolean; allowable: boolean; walletButton: boolean; count: number }): string {
  const button = 'data-svc-mode="button" (a link to the checkout page) works on any site without an allowlist.';
  if (!c.allowable)
    return `Browsers will not show the checkout in a frame on this origin: only https origins (plain http on localhost or a loopback address) can be allowlisted. ${button}`;
  if (!c.framingAllowed) {
    return c.count === 0
      ? `The seller has allowlisted no origin, so browsers refuse to show the checkout in any frame. Add this origin with PUT /v1/account/embed; ${button}`
      : `This origin is not among the seller's ${c.count} allowlisted origin(s), so browsers refuse to show the checkout in its frame. Add it with PUT /v1/account/embed; ${button}`;
  }
  return c.walletButton
    ? "This origin may frame the checkout, and buyers can pay inside the frame."
    : "This origin may frame the checkout, but wallet_button is false: the frame shows the offer with a link to buy on the checkout page. Set wallet_button to true on the checkout to take payment in the frame.";
}
