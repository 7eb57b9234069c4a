import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Router } from "express";
import { apiKeyView } from "../../domain/views";
import type { GatewayDeps } from "../deps";
import { rateLimit } from "../rate-limit";
import { noStore } from "../request-context";
import { validateBody } from "../validate";

const iso = (t?: Timestamp) => (t ? timestampDate(t).toISOString() : "");

export function walletAuthRoutes({ clients, cache, settings }: GatewayDeps): Router {
  const router = Router();
  const limit = rateLimit(cache, { name: "wallet-auth", limit: settings.authRateLimitPerMinute, windowSeconds: 60 });

  router.post("/auth/wallet/challenge", limit, async (req, res) => {
    const body = validateBody<{ address: string; network: string }>("WalletChallenge", req.body);
    const c = await clients.identity.createWalletChallenge(body);
    res.json({ message: c.message, nonce: c.nonce, expires_at: iso(c.expiresAt), expires_in_seconds: c.expiresInSeconds });
  });

  // The first sign-in creates the account and shows its first automation key once (201); a later
  // one mints no key and opens a session instead (200). Both carry a secret: never cached.
  router.post("/auth/wallet/verify", limit, noStore, async (req, res) => {
    const body = validateBody<{ message: string; signature: string }>("WalletVerify", req.body);
    const r = await clients.identity.verifyWalletSignature(body);
    res.status(r.accountCreated ? 201 : 200).json({
      account: { id: r.account?.id, created: r.accountCreated },
      api_key: r.apiKey ? { ...apiKeyView(r.apiKey), secret: r.secret, note: "Shown once. Store it now; only its prefix can be listed later." } : null,
      session: r.session
        ? {
            token: r.session.token,
            expires_at: iso(r.session.expiresAt),
            note: "A bearer token like a key (scope full, test mode for checkout defaults); shown once. Use it to mint a key: POST /v1/keys.",
          }
        : null,
      payout_wallet: r.payoutWallet
        ? { chain: r.payoutWallet.chainFamily, address: r.payoutWallet.address, verified: r.payoutWallet.verified, default: r.payoutWallet.isDefault }
        : null,
    });
  });

  return router;
}
