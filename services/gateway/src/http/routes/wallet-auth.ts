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

  // The first sign-in creates the account and shows its first automation key once (201); a later
  // one mints no key and opens a session instead (200). Both carry a secret: never cached.
  router.post("/auth/wallet/verify", limit, noStore, async (req, res) => {
    const body = validateBody("WalletVerify", req.body);
    const r = await clients.identity.verifyWalletSignature(body);
    res.status(r.accountCreated ? 201 : 200).json(walletSignInView(r));
  });

  return router;
}
