import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Router } from "express";
import { apiKeyView } from "../../domain/views";
import type { GatewayDeps } from "../deps";
import { rateLimit } from "../rate-limit";
import { validateBody } from "../validate";

export function walletAuthRoutes({ clients, cache, settings }: GatewayDeps): Router {
  const router = Router();
  const limit = rateLimit(cache, { name: "wallet-auth", limit: settings.authRateLimitPerMinute, windowSeconds: 60 });

  router.post("/auth/wallet/challenge", limit, async (req, res) => {
    const body = validateBody<{ address: string; network: string }>("WalletChallenge", req.body);
    const c = await clients.identity.createWalletChallenge(body);
    res.json({ message: c.message, nonce: c.nonce, expires_at: c.expiresAt ? timestampDate(c.expiresAt).toISOString() : "" });
  });

  router.post("/auth/wallet/verify", limit, async (req, res) => {
    const body = validateBody<{ message: string; signature: string }>("WalletVerify", req.body);
    const r = await clients.identity.verifyWalletSignature(body);
    res.status(r.accountCreated ? 201 : 200).json({
      account: { id: r.account?.id, created: r.accountCreated },
      api_key: { ...apiKeyView(r.apiKey!), secret: r.secret, note: "Shown once. Store it now; only its prefix can be listed later." },
      payout_wallet: r.payoutWallet
        ? { chain: r.payoutWallet.chainFamily, address: r.payoutWallet.address, verified: r.payoutWallet.verified, default: r.payoutWallet.isDefault }
        : null,
    });
  });

  return router;
}
