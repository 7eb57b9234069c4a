import express, { type Express } from "express";
import { DEFAULT_AUTH_FAILURE_LIMIT_PER_MINUTE } from "./config";
import { newFaceQuotes, type FaceQuotes } from "./faces/answers";
import { FacePayments } from "./faces/face-payments";
import { UnpaidAnswers } from "./faces/unpaid";
import { faceCors, seriesCors } from "./http/cors";
import type { GatewayDeps } from "./http/deps";
import { bigintAsString } from "./http/json";
import { jsonBody } from "./http/json-body";
import { boundedJsonBodies } from "./http/json-bounds";
import { errorHandler, notFound } from "./http/problems";
import { SettlementRails } from "./http/rails";
import { AuthFailureLimit } from "./http/rate-limit";
import { SessionCookies } from "./http/session-cookie";
import { requestContext } from "./http/request-context";
import { accountRoutes } from "./http/routes/account";
import { checkoutRoutes } from "./http/routes/checkouts";
import { discoveryRoutes } from "./http/routes/discovery";
import { faceRoutes } from "./http/routes/faces";
import { retiredTwinRedirect } from "./http/retired-twins";
import { ledgerRoutes } from "./http/routes/ledger";
import { analyticsRoutes } from "./http/routes/analytics";
import { facilitatorRoutes } from "./http/routes/facilitator";
import { handoffRoutes } from "./http/routes/handoff";
import { staticAssetRoutes } from "./pages/static-assets";
import { dashboardRoutes } from "./pages/dashboard/routes";
import { embedCheckRoutes } from "./pages/embed-check";
import { keyRoutes } from "./http/routes/keys";
import { mcpToolRoutes } from "./http/routes/mcp-tools";
import { originKeyRoutes } from "./http/routes/origin-keys";
import { webhookRoutes } from "./http/routes/webhooks";
import { magicLinkRoutes } from "./http/routes/magic-link";
import { payoutRoutes } from "./http/routes/payouts";
import { platformRoutes } from "./http/routes/platform";
import { prepareRoutes } from "./http/routes/prepare";
import { profileRoutes } from "./http/routes/profile";
import { qrRoutes } from "./http/routes/qr";
import { receiptRoutes } from "./http/routes/receipts";
import { reportRoutes } from "./http/routes/reports";
import { fulfilmentRoutes } from "./http/routes/fulfilment";
import { sellerCatalogueRoutes } from "./http/routes/seller-catalogue";
import { sessionRoutes } from "./http/routes/sessions";
import { walletAuthRoutes } from "./http/routes/wallet-auth";
import { embedRoutes } from "./http/routes/embed";
import { escrowSettingsRoutes } from "./http/routes/escrow-settings";
import { EscrowSettingsOperations } from "./operations/escrow-settings";
import { escrowRoutes } from "./http/routes/escrows";
import { EscrowOperations } from "./operations/escrows";
import { scheduleRoutes } from "./http/routes/schedules";
import { ScheduleOperations } from "./operations/schedules";
import { spendingWalletRoutes } from "./http/routes/spending-wallets";
import { SpendingWalletOperations } from "./operations/spending-wallets";
import { EmbedOrigins } from "./http/embed-origins";
import { ContentOperations } from "./operations/content";
import { contentRoutes } from "./http/routes/content";
import { EmbedOperations } from "./operations/embed";
import { oauthRoutes } from "./http/routes/oauth";
import { mcpRoutes } from "./mcp/endpoint";
import { mcpTools } from "./mcp/tools";
import { CheckoutOperations } from "./operations/checkouts";
import { ReceiptOperations } from "./operations/receipts";
import { ReportFiling } from "./operations/reports";

/** Largest JSON body accepted (a checkout with its inline goods). */
export const MAX_BODY_BYTES = 512 * 1024;

/**
 * The gateway's HTTP app. Each route group has its file in http/routes/:
 *
 *   /, /health, /openapi.json, /llms.txt, /docs (and /docs/assets/*), /.well-known/*   discovery.ts
 *   /v1/sellers/{slug}/offers, /v1/sellers/{slug}/embed, /schedule/{slug}   seller-catalogue.ts
 *   /auth/wallet/challenge, /auth/wallet/verify                    wallet-auth.ts
 *   /auth/logout                                                   sessions.ts
 *   /auth/magic-link/request, /auth/verify, /auth/session/cookie   magic-link.ts
 *   /auth/me (GET, PATCH: the seller profile)                      profile.ts
 *   /v1/keys                                                       keys.ts
 *   /v1/origin-keys                                                origin-keys.ts
 *   /v1/mcp/tools                                                  mcp-tools.ts
 *   /v1/account/events                                             account.ts
 *   /v1/checkouts                                                  checkouts.ts
 *   /v1/account/wallets (+ /preview), /v1/checkouts/{id}/payouts   payouts.ts
 *   /v1/checkouts/{id}/reports, /v1/reports (filing is public)     reports.ts
 *   /c/{id}, /c/{id}/test (the 402, and paying it)                 faces.ts
 *   /c/{id}/prepare, /c/{id}/test/prepare                          prepare.ts
 *   /c/{id}/handoff/{nonce}                                        handoff.ts
 *   /c/{id}/qr.svg, /c/{id}/test/qr.svg                            qr.ts
 *   /r/{id}, /r/{id}/download, /r/by-tx/{hash}                     receipts.ts
 *   /x402/{family}/supported, /verify, /settle                     facilitator.ts
 *   /health/facilitator                                            facilitator.ts
 *   /v1/platform/quote                                             platform.ts
 *   /oauth/*, /.well-known/oauth-*                                 oauth.ts
 *   /v1/account/embed                                              embed.ts
 *   /v1/account/escrow (+ /readiness)                              escrow-settings.ts
 *   /v1/escrows, /e/{id}/status, /e/{id}/actions/*                 escrows.ts
 *   /v1/schedules, /schedule/{id} (an sch_ id; + /cancel)          schedules.ts
 *   /v1/spending-wallets (+ /health, /keys, /{chain}/*), /v1/rehearsal-checkout   spending-wallets.ts
 *
 * The pages people see (the pay page, the article wall, the embed script) live
 * in pages/: /static/pay.js, /static/embed.js, /static/pages.css are pages/static-assets.ts;
 * /embed/check (why an embed shows or stays blank) is pages/embed-check.ts.
 *
 * `quotes` holds the faces' unpaid answers; startGateway shares it with the
 * socket fast path (faces/fast-path.ts).
 */
export function createGatewayApp(deps: GatewayDeps, quotes: FaceQuotes = newFaceQuotes()): Express {
  const app = express();
  app.disable("x-powered-by");
  // No ETag: faces and payments answer no-store (a SHA-1 of every body for nothing), and a 304 must never stand in for a paid answer.
  app.set("etag", false);
  // X-Forwarded-For names the client only when sent by a trusted proxy (TRUST_PROXY; default: none).
  app.set("trust proxy", deps.settings.trustProxy ?? false);
  app.locals.authFailures = new AuthFailureLimit(deps.cache, deps.settings.authFailureLimitPerMinute ?? DEFAULT_AUTH_FAILURE_LIMIT_PER_MINUTE);
  app.locals.sessionCookies = new SessionCookies(deps.settings.baseUrl);
  app.set("json replacer", bigintAsString);
  app.use(requestContext(deps.logger));
  app.use(["/c", "/x", "/e", "/r"], faceCors);
  app.use("/schedule", seriesCors);
  const checkouts = new CheckoutOperations(deps, quotes);
  const receipts = new ReceiptOperations(deps);
  const unpaid = new UnpaidAnswers(deps.clients, deps.settings.baseUrl, quotes);
  const payments = new FacePayments(deps, unpaid);
  const reports = new ReportFiling(deps);
  const embedOrigins = new EmbedOrigins(deps.clients, deps.cache);
  const embeds = new EmbedOperations(deps, embedOrigins);
  const content = new ContentOperations(deps, checkouts);
  const escrowSettings = new EscrowSettingsOperations(deps);
  const escrows = new EscrowOperations(deps);
  const schedules = new ScheduleOperations(deps);
  const spendingWallets = new SpendingWalletOperations(deps, checkouts);
  // /mcp parses its own body: its failures are JSON-RPC errors, not problem documents.
  app.use(
    mcpRoutes(deps, mcpTools({ deps, checkouts, receipts, unpaid, payments, reports, embeds, content, escrowSettings, escrows, schedules, spendingWallets })),
  );
  // The OAuth server parses its own bodies (forms; JSON for registration) and answers OAuth errors.
  app.use(oauthRoutes(deps));
  // The dashboard's forms are url-encoded (they work without script): it parses its own bodies, before the JSON-only rule.
  app.use(dashboardRoutes(deps, receipts));
  app.use(jsonBody(MAX_BODY_BYTES));
  app.use(boundedJsonBodies);
  // The faces first: a buyer's request (most of the traffic) is then matched against their few routes
  // before the seller API's hundred. No router before them serves a path under /c, /x or /r.
  app.use(faceRoutes(deps, unpaid, payments, embedOrigins));
  app.use(staticAssetRoutes());
  app.use(embedCheckRoutes(deps, embedOrigins));
  // What this run settles on, asked of payments: shared by the discovery documents and /health/facilitator.
  const rails = new SettlementRails(deps.clients.payments, deps.logger);
  app.use(discoveryRoutes(deps, rails));
  app.use(sellerCatalogueRoutes(deps));
  app.use(walletAuthRoutes(deps));
  app.use(sessionRoutes(deps));
  app.use(magicLinkRoutes(deps));
  app.use(profileRoutes(deps));
  app.use(keyRoutes(deps));
  app.use(originKeyRoutes(deps));
  app.use(webhookRoutes(deps));
  app.use(mcpToolRoutes(deps));
  app.use(accountRoutes(deps));
  app.use(checkoutRoutes(deps, quotes, checkouts));
  app.use(payoutRoutes(deps, quotes));
  app.use(reportRoutes(deps, reports));
  app.use(fulfilmentRoutes(deps, receipts));
  app.use(ledgerRoutes(deps, receipts));
  app.use(analyticsRoutes(deps));
  app.use(contentRoutes(deps, unpaid, payments, embedOrigins, content));
  app.use(handoffRoutes(deps));
  app.use(qrRoutes(deps));
  app.use(prepareRoutes(deps));
  app.use(receiptRoutes(deps, embedOrigins));
  app.use(facilitatorRoutes(deps, rails));
  app.use(platformRoutes(deps, rails));
  app.use(embedRoutes(deps, embeds));
  app.use(escrowSettingsRoutes(deps, escrowSettings));
  app.use(escrowRoutes(deps, escrows));
  app.use(scheduleRoutes(deps, schedules));
  app.use(spendingWalletRoutes(deps, spendingWallets));
  app.use(notFound);
  app.use(retiredTwinRedirect(deps));
  app.use(errorHandler(deps.settings.siteUrl, deps.logger, deps.settings.serviceName));
  return app;
}
