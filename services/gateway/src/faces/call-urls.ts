import type { Cache } from "@c402/cache";
import { catalogV1 } from "@c402/contracts";
import { isId, SELLER_SLUG } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import type { ServiceClients } from "../http/deps";

/**
 * Call URLs (docs/decisions.md "Call URLs"): a seller's handle names their
 * relay and mcp checkouts, `/r/<slug>/<checkout_id>` (and `/test`), served
 * exactly as the checkout's face. Beside receipts at `/r/<payment_id>` the
 * first segment tells them apart: a slug never holds `_`, a payment id
 * always does. A URL whose slug is not the checkout's seller's (a slug that
 * changed, another seller's checkout) or whose checkout sells no call is 404.
 */

/** How long a call URL's verdict is kept: a changed slug stops its old URLs within this. */
export const CALL_URL_TTL_SECONDS = 30;

const noSuchCallUrl = () => new ProblemError("not-found", "No such call URL: the seller's handle does not sell this checkout's calls.");

/** Whether a path segment can be a seller's slug (never a payment id: those hold `_`). */
export const isSlug = (segment: string): boolean => SELLER_SLUG.test(segment);

export class CallUrls {
  constructor(
    private readonly clients: Pick<ServiceClients, "identity" | "catalog">,
    private readonly cache: Cache,
  ) {}

  /** Resolves a call URL to its checkout (404 unless the slug's seller sells it as relay or mcp calls). */
  async checkoutOf(slug: string, checkoutId: string): Promise<string> {
    if (!isSlug(slug) || !isId("checkout", checkoutId)) throw noSuchCallUrl();
    const key = `callurl:${slug}:${checkoutId}`;
    // A cache that cannot answer is passed over: the verdict is asked of identity and catalog.
    if ((await this.cache.get(key).catch(() => null)) === "1") return checkoutId;
    const [seller, sold] = await Promise.all([
      this.clients.identity.getPublicProfile({ slug }).catch(notFoundAs(undefined)),
      this.clients.catalog.getCheckout({ checkoutId }).catch(notFoundAs(undefined)),
    ]);
    const checkout = sold && answered(sold.checkout, "checkout");
    const accountId = seller && answered(seller.profile, "profile").accountId;
    const sellsCalls = checkout?.fulfillment === catalogV1.Fulfillment.RELAY || checkout?.fulfillment === catalogV1.Fulfillment.MCP;
    if (!checkout || accountId === undefined || checkout.accountId !== accountId || !sellsCalls) throw noSuchCallUrl();
    await this.cache.set(key, "1", CALL_URL_TTL_SECONDS).catch(() => undefined);
    return checkoutId;
  }
}

function notFoundAs<T>(value: T) {
  return (err: unknown): T => {
    if (err instanceof ProblemError && err.slug === "not-found") return value;
    throw err;
  };
}
