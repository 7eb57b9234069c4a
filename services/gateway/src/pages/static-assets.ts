import { createHash } from "node:crypto";
import { Router } from "express";
import { BUILT_ASSETS } from "./assets.generated";

/** A short digest of each asset: the pages name it in their URLs, so a new build is fetched at once. */
const versionOf = (name: string) =>
  createHash("sha256")
    .update(BUILT_ASSETS[name]?.body ?? "")
    .digest("hex")
    .slice(0, 12);

/** Where the pages load their script and styles. */
export const ASSET_PATHS = {
  pay: `/static/pay.js?v=${versionOf("pay.js")}`,
  css: `/static/pages.css?v=${versionOf("pages.css")}`,
  embed: "/static/embed.js",
} as const;

/** How long a browser keeps an asset: embed.js's URL is pasted into sellers' pages and never changes, so it is rechecked often. */
const MAX_AGE_SECONDS = 300;

/**
 * GET /static/pay.js, /static/embed.js, /static/pages.css: the pages' browser
 * code, built at build time (scripts/build-pages.mjs) and served from memory.
 * Sellers' pages load embed.js from their own origin, so it may be fetched
 * cross-origin.
 */
export function staticAssetRoutes(): Router {
  const router = Router();
  router.get("/static/:name", (req, res, next) => {
    const asset = BUILT_ASSETS[String(req.params.name)];
    if (!asset || !Object.prototype.hasOwnProperty.call(BUILT_ASSETS, String(req.params.name))) return next();
    res.setHeader("Cache-Control", `public, max-age=${MAX_AGE_SECONDS}`);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cross-Origin-Resource-Policy", "cross-origin");
    res.type(asset.type).send(asset.body);
  });
  return router;
}
