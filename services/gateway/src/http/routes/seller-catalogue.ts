import { hasIdShape } from "@c402/ids";
import { Router, type Request, type Response } from "express";
import { sellerCatalogue } from "../../catalogue/seller-catalogue";
import { CATALOGUE_PAGE_HEADERS, catalogueEmbed, catalogueView, cataloguePage, embedHeaders } from "../../views/seller-catalogue";
import type { GatewayDeps } from "../deps";
import { pageRequestOf } from "../pagination";
import { wantsHtml } from "../face-requests";

/**
 * A seller's public catalogue, no credential: /v1/sellers/{slug}/offers
 * (JSON), /schedule/{slug} (the page) and /v1/sellers/{slug}/embed (a
 * fragment for other sites), all three from sellerCatalogue. /schedule/{id}
 * is a series' buyer view (routes/schedules.ts): an id there (its `_` can
 * never be in a slug) is passed on to it.
 */

/** How long browsers and shared caches may keep a catalogue: a void or a new offer shows within this. */
export const CATALOGUE_MAX_AGE_SECONDS = 60;

/** The JSON and the fragment are read by other sites' pages and scripts: public data, no credential, any origin. */
function openToAnyOrigin(_req: Request, res: Response, next: () => void): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  next();
}

const cacheable = (res: Response) => res.setHeader("Cache-Control", `public, max-age=${CATALOGUE_MAX_AGE_SECONDS}`);

export function sellerCatalogueRoutes({ clients, settings }: GatewayDeps): Router {
  const router = Router();
  const catalogueOf = (req: Request) => sellerCatalogue(clients, String(req.params.slug), pageRequestOf(req.query));

  router.get("/v1/sellers/:slug/offers", openToAnyOrigin, async (req, res) => {
    const catalogue = await catalogueOf(req);
    cacheable(res);
    res.json(catalogueView(catalogue, settings.baseUrl));
  });

  router.get("/v1/sellers/:slug/embed", openToAnyOrigin, async (req, res) => {
    const catalogue = await catalogueOf(req);
    cacheable(res);
    for (const [name, value] of embedHeaders(settings.serviceName)) res.setHeader(name, value);
    res.type("html").send(catalogueEmbed(catalogue, settings.baseUrl, settings.serviceName));
  });

  /** The seller's public page: the catalogue as JSON (with each relay or mcp offer's call URL), or as the page for a browser. */
  router.get("/u/:slug", openToAnyOrigin, async (req, res) => {
    const catalogue = await catalogueOf(req);
    cacheable(res);
    res.vary("Accept");
    if (wantsHtml(req)) {
      for (const [name, value] of CATALOGUE_PAGE_HEADERS) res.setHeader(name, value);
      res.type("html").send(cataloguePage(catalogue, settings.baseUrl));
      return;
    }
    res.json(catalogueView(catalogue, settings.baseUrl));
  });

  router.get("/schedule/:slug", async (req, res, next) => {
    if (hasIdShape(String(req.params.slug))) return next();
    const catalogue = await catalogueOf(req);
    cacheable(res);
    for (const [name, value] of CATALOGUE_PAGE_HEADERS) res.setHeader(name, value);
    res.type("html").send(cataloguePage(catalogue, settings.baseUrl));
  });

  return router;
}
