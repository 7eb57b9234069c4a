import { Router } from "express";
import { walletChallengeView, walletSignInView } from "../../views/wallet-auth";
import type { GatewayDeps } from "../deps";
import { rateLimit } from "../rate-limit";
import { noStore } from "../request-context";
import { validateBody } from "../validate";

/** /auth/wallet/challenge and /auth/wallet/verify: a seller signs in with a wallet. */
export function walletAuthRoutes({ clients, cache, settings }: GatewayDeps): Router {
  const router = Router();
  const limit = rateLimit(cache, { name: "wallet-auth", limit: settings.authRateLimitPerMinute, windowSeconds: 60 });

  router.post("/auth/wallet/challenge", limit, async (req, res) => {
    const body = validateBody("WalletChallenge", req.body);
    res.json(walletChallengeView(await clients.identity.createWalletChallenge(body)));
  });

  // Every sign-in shows a fresh automation key once, with a session beside it: the first creates the
  // account (201, its first key), a later one recovers access (200). Both carry secrets: never cached.
  router.post("/auth/wallet/verify", limit, noStore, async (req, res) => {
    const body = validateBody("WalletVerify", req.body);
    const r = await clients.identity.verifyWalletSignature(body);
    res.status(r.accountCreated ? 201 : 200).json(walletSignInView(r));
  });

  return router;
}
