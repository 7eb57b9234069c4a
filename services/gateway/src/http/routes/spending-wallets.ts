import { Router } from "express";
import type { SpendingWalletOperations } from "../../operations/spending-wallets";
import { SPENDING_CHAINS } from "../../views/spending-wallets";
import { qrSvg } from "../../views/qr";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { noStore } from "../request-context";
import { idempotencyKeyOf } from "./checkouts";

/**
 * Spending wallets (spec, Endpoints: Spending wallets; ADR 21), `{chain}` is
 * base or solana:
 *
 *   GET    /v1/spending-wallets/health             none: the service's self-check
 *   GET    /v1/spending-wallets                    key or session: addresses only
 *   POST   /v1/spending-wallets/keys               session: a live `payments` agent key, shown once
 *   POST   /v1/spending-wallets/{chain}            session: the wallet and its secret, shown once
 *   DELETE /v1/spending-wallets/{chain}            session: archive (funds untouched)
 *   GET    /v1/spending-wallets/{chain}/balance    key or session
 *   POST   /v1/spending-wallets/{chain}/pay        live key, OAuth or session
 *   GET    /v1/spending-wallets/{chain}/limits     key or session
 *   PUT    /v1/spending-wallets/{chain}/limits     session
 *   GET    /v1/spending-wallets/{chain}/funding    session (?amount=)
 *   GET    /v1/spending-wallets/{chain}/funding.svg  session: the funding uri as a QR
 *   POST   /v1/spending-wallets/{chain}/reveal     session (any key or token refused, and recorded)
 *   GET    /v1/spending-wallets/{chain}/events     key or session: paged
 *   GET    /v1/rehearsal-checkout                  key or session: {url, ask}
 *
 * Design choices (for the ADR):
 * - Who may call is the service's rule (it records refusals); the gateway
 *   maps the credential to a Caller and lets the service's problem through
 *   unchanged. It refuses early only an OAuth token off pay and a key on a
 *   session-only route (403 forbidden, reason oauth_token_refused /
 *   session_only); reveal always asks the service first so that a key's
 *   attempt is recorded, and refuses a non-session whatever it answers.
 * - Each chain has its routes (no `:chain` parameter), so /health and /keys
 *   keep their own methods (405 for another) and an unknown chain is the
 *   unrouted 404.
 * - health answers 200 when ok and 503 with the same body when not, so a
 *   monitor reads the status and a person reads `problems`.
 * - pay is rate limited per account and chain (settings.spendingPaysPerMinute,
 *   default 30 a minute), counted before the service is asked, 429 with
 *   Retry-After and X-RateLimit-*; the budget itself is the service's.
 * - pay's goods: parsed JSON for a JSON content type, text for text/*, else
 *   {content_type, base64}; `status` and `content_type` say what the seller
 *   answered.
 * - Answers with a secret (create, reveal, agent key) are Cache-Control:
 *   no-store; the request log never holds bodies, so the secret is never logged.
 * - There is no transfer-out route (spec): …/withdraw and …/transfer are 404.
 */
/** When a monitor should ask again after a failed self-check. */
const HEALTH_RETRY_AFTER_SECONDS = 30;

export function spendingWalletRoutes({ clients }: GatewayDeps, wallets: SpendingWalletOperations): Router {
  // Case-sensitive: the chain is `base` or `solana`, never `BASE`.
  const router = Router({ caseSensitive: true });
  const anyCredential = requireScope(clients, "read_only");

  router.get("/v1/spending-wallets/health", async (_req, res) => {
    const health = await wallets.health();
    res.setHeader("Cache-Control", "no-store");
    if (!health.ok) res.setHeader("Retry-After", String(HEALTH_RETRY_AFTER_SECONDS));
    res.status(health.ok ? 200 : 503).json(health);
  });

  router.get("/v1/spending-wallets", anyCredential, async (req, res) => {
    res.json(await wallets.list(credentialOf(req)));
  });

  router.post("/v1/spending-wallets/keys", anyCredential, noStore, async (req, res) => {
    res.status(201).json(await wallets.mintAgentKey(credentialOf(req), req.body));
  });

  // One route per chain, not a `:chain` parameter: /v1/spending-wallets/health and /keys keep their own
  // methods (405 for another), and an unknown chain is the unrouted 404.
  for (const chain of SPENDING_CHAINS) {
    router.post(`/v1/spending-wallets/${chain}`, anyCredential, noStore, async (req, res) => {
      res.status(201).json(await wallets.createWallet(credentialOf(req), chain));
    });

    router.delete(`/v1/spending-wallets/${chain}`, anyCredential, async (req, res) => {
      res.json(await wallets.archive(credentialOf(req), chain));
    });

    router.get(`/v1/spending-wallets/${chain}/balance`, anyCredential, async (req, res) => {
      res.setHeader("Cache-Control", "no-store");
      res.json(await wallets.balance(credentialOf(req), chain));
    });

    router.post(`/v1/spending-wallets/${chain}/pay`, requireScope(clients, "payments"), noStore, async (req, res) => {
      const idempotencyKey = idempotencyKeyOf(req);
      res.json(await wallets.pay(credentialOf(req), chain, req.body, res, idempotencyKey !== undefined ? { idempotencyKey } : {}));
    });

    router.get(`/v1/spending-wallets/${chain}/limits`, anyCredential, async (req, res) => {
      res.json(await wallets.limits(credentialOf(req), chain));
    });

    router.put(`/v1/spending-wallets/${chain}/limits`, anyCredential, async (req, res) => {
      res.json(await wallets.setLimits(credentialOf(req), chain, req.body));
    });

    router.get(`/v1/spending-wallets/${chain}/funding`, anyCredential, async (req, res) => {
      res.json(await wallets.funding(credentialOf(req), chain, req.query));
    });

    router.get(`/v1/spending-wallets/${chain}/funding.svg`, anyCredential, async (req, res) => {
      const funding = await wallets.funding(credentialOf(req), chain, req.query);
      res.setHeader("Cache-Control", "no-store");
      res.type("image/svg+xml").send(await qrSvg(funding.uri));
    });

    router.post(`/v1/spending-wallets/${chain}/reveal`, anyCredential, noStore, async (req, res) => {
      res.json(await wallets.reveal(credentialOf(req), chain));
    });

    router.get(`/v1/spending-wallets/${chain}/events`, anyCredential, async (req, res) => {
      res.json(await wallets.events(credentialOf(req), chain, req.query));
    });
  }

  router.get("/v1/rehearsal-checkout", anyCredential, async (req, res) => {
    res.json(await wallets.rehearsalCheckout(credentialOf(req)));
  });

  return router;
}
