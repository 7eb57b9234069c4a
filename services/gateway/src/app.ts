import express, { type Express } from "express";
import { DEFAULT_AUTH_FAILURE_LIMIT_PER_MINUTE } from "./config";
import type { GatewayDeps } from "./http/deps";
import { jsonBody } from "./http/json-body";
import { boundedJsonBodies } from "./http/json-bounds";
import { errorHandler, notFound } from "./http/problems";
import { AuthFailureLimit } from "./http/rate-limit";
import { requestContext } from "./http/request-context";
import { checkoutRoutes } from "./http/routes/checkouts";
import { discoveryRoutes } from "./http/routes/discovery";
import { bigintAsString } from "./http/json";
import { QuoteCache } from "./http/quote-cache";
import { faceCors, faceRoutes, type FaceQuotes } from "./http/routes/faces";
import { facilitatorRoutes } from "./http/routes/facilitator";
import { keyRoutes } from "./http/routes/keys";
import { walletAuthRoutes } from "./http/routes/wallet-auth";

/** How long an unpaid 402 may be reused (see QuoteCache), and how many are kept. */
export const QUOTE_CACHE_MS = 1_000;
const QUOTE_CACHE_ENTRIES = 10_000;

export function newFaceQuotes(): FaceQuotes {
  return new QuoteCache(QUOTE_CACHE_MS, QUOTE_CACHE_ENTRIES);
}

/** Largest JSON body accepted (a checkout with its inline goods). */
export const MAX_BODY_BYTES = 512 * 1024;

export function createGatewayApp(deps: GatewayDeps, quotes: FaceQuotes = newFaceQuotes()): Express {
  const app = express();
  app.disable("x-powered-by");
  // X-Forwarded-For names the client only when sent by a trusted proxy (TRUST_PROXY; default: none).
  app.set("trust proxy", deps.settings.trustProxy ?? false);
  app.locals.authFailures = new AuthFailureLimit(deps.cache, deps.settings.authFailureLimitPerMinute ?? DEFAULT_AUTH_FAILURE_LIMIT_PER_MINUTE);
  app.set("json replacer", bigintAsString);
  app.use(requestContext(deps.logger));
  app.use(["/c", "/r"], faceCors);
  app.use(jsonBody(MAX_BODY_BYTES));
  app.use(boundedJsonBodies);
  app.use(discoveryRoutes(deps));
  app.use(walletAuthRoutes(deps));
  app.use(keyRoutes(deps));
  app.use(checkoutRoutes(deps, quotes));
  app.use(faceRoutes(deps, quotes));
  app.use(facilitatorRoutes(deps));
  app.use(notFound);
  app.use(errorHandler(deps.settings.siteUrl, deps.logger, deps.settings.serviceName));
  return app;
}
