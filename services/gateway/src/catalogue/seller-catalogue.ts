import type { catalogV1, identityV1 } from "@c402/contracts";
import { SELLER_SLUG } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import type { ServiceClients } from "../http/deps";
import { createdAtKey, pageOf, servicePage, type PageRequest } from "../http/pagination";

/**
 * A seller's public catalogue: the profile that holds the slug and one page of
 * what it sells now (catalog's ListSellingOffers: armed, open checkouts, newest
 * first). The three public faces of the catalogue (the JSON at
 * /v1/sellers/{slug}/offers, the page at /schedule/{slug}, the fragment at
 * /v1/sellers/{slug}/embed) render this one value, so they always show the
 * same set.
 */
export interface SellerCatalogue {
  slug: string;
  profile: identityV1.Profile;
  offers: CatalogueOffer[];
  hasMore: boolean;
  nextCursor: string | null;
  /** The page asked for (its limit is carried into the next page's link). */
  page: PageRequest;
}

/** One selling checkout: its summary and the offer card's text claims. */
export interface CatalogueOffer {
  checkout: catalogV1.CheckoutSummary;
  claims: catalogV1.OfferCard | undefined;
}

const noSuchSeller = () => new ProblemError("not-found", "No seller has this slug.");

/**
 * The catalogue of `slug`. Text that cannot be a slug is 404 without asking
 * anyone, like an id that cannot exist.
 */
export async function sellerCatalogue(clients: ServiceClients, slug: string, page: PageRequest): Promise<SellerCatalogue> {
  if (!SELLER_SLUG.test(slug)) throw noSuchSeller();
  const { profile } = await clients.identity.getPublicProfile({ slug });
  const seller = answered(profile, "profile");
  const { offers } = await clients.catalog.listSellingOffers({ accountId: seller.accountId, ...servicePage(page) });
  const entries = offers.map((o): CatalogueOffer => ({ checkout: answered(o.checkout, "checkout"), claims: o.offer }));
  const listed = pageOf(entries, page.limit, (o) => createdAtKey(o.checkout));
  return { slug, profile: seller, offers: listed.items, hasMore: listed.has_more, nextCursor: listed.next_cursor, page };
}
