import express, { type Express } from "express";
import type { GatewayDeps } from "./http/deps";
import { errorHandler, notFound } from "./http/problems";
import { requestContext } from "./http/request-context";
import { checkoutRoutes } from "./http/routes/checkouts";
import { discoveryRoutes } from "./http/routes/discovery";
import { faceCors, faceRoutes } from "./http/routes/faces";
import { facilitatorRoutes } from "./http/routes/facilitator";
import { keyRoutes } from "./http/routes/keys";
import { walletAuthRoutes } from "./http/routes/wallet-auth";

/** Largest JSON body accepted (a checkout with its inline goods). */
export const MAX_BODY_BYTES = 512 * 1024;

export function createGatewayApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", "loopback");
  app.set("json replacer", (_key: string, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
  app.use(requestContext(deps.logger));
  app.use(["/c", "/r"], faceCors);
  app.use(express.json({ limit: MAX_BODY_BYTES, type: ["application/json", "application/*+json"] }));
  app.use(discoveryRoutes(deps));
  app.use(walletAuthRoutes(deps));
  app.use(keyRoutes(deps));
  app.use(checkoutRoutes(deps));
  app.use(faceRoutes(deps));
  app.use(facilitatorRoutes(deps));
  app.use(notFound);
  app.use(errorHandler(deps.settings.siteUrl, deps.logger));
  return app;
}
