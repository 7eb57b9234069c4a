import { chainOfFamily } from "@c402/chain-addresses";
import type { identityV1 } from "@c402/contracts";
import { newApiKeyView } from "./keys";
import { isoOrNull } from "./values";

/** The answers of the wallet sign-in (challenge, then verify). */

export function walletChallengeView(c: identityV1.CreateWalletChallengeResponse) {
  return { message: c.message, nonce: c.nonce, expires_at: isoOrNull(c.expiresAt) ?? "", expires_in_seconds: c.expiresInSeconds };
}

export function walletSignInView(r: identityV1.VerifyWalletSignatureResponse) {
  return {
    account: { id: r.account?.id, created: r.accountCreated },
    api_key: r.apiKey ? newApiKeyView(r.apiKey, r.secret) : null,
    session: r.session
      ? {
          token: r.session.token,
          expires_at: isoOrNull(r.session.expiresAt) ?? "",
          note: "A bearer token like a key (scope full, test mode for checkout defaults), for browsers and scripts that hold a session; shown once. POST /auth/session/cookie turns it into the session cookie.",
        }
      : null,
    // Named as every payout answer names chains (base, solana, stellar), not by the stored CAIP-2 family.
    payout_wallet: r.payoutWallet
      ? {
          chain: chainOfFamily(r.payoutWallet.chainFamily) ?? r.payoutWallet.chainFamily,
          address: r.payoutWallet.address,
          verified: r.payoutWallet.verified,
          default: r.payoutWallet.isDefault,
        }
      : null,
  };
}
