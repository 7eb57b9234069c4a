import { CHAIN_FAMILY, PAYOUT_CHAINS } from "@c402/chain-addresses";
import { invalid } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router } from "express";
import { forgetFaces, type FaceQuotes } from "../../faces/answers";
import { ensureAddedRailPayable } from "../../operations/payout-accounts";
import { checkoutView } from "../../views/checkouts";
import { payoutWalletsChangeView, payoutWalletsView } from "../../views/payouts";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import type { BodyOf } from "../request-schemas";
import { validateBody } from "../validate";

/**
 * Where a seller is paid. /v1/account/wallets: the account's standing payout
 * wallets (identity's). Reading and previewing take any seller credential
 * (the spec puts the preview at read_only); replacing them changes payout
 * wallets, which the spec keeps to `full` (an OAuth token, capped at
 * payments, will get 403 here once OAuth exists). POST
 * /v1/checkouts/{id}/payouts: adds a payout rail to one checkout (catalog's),
 * scope payments like every other checkout change.
 */

/**
 * The body's addresses by stored chain family (eip155, solana, stellar); null
 * and absent name none. A request with no body at all is refused rather than
 * read as `{}`: replacing the set with nothing must be asked for.
 */
function walletsOf(raw: unknown): Record<string, string> {
  if (raw === undefined) throw invalid([{ field: "(body)", reason: "is required: the whole standing set ({} keeps only the sign-in wallets)" }]);
  const body: BodyOf<"PayoutWalletsPut"> = validateBody("PayoutWalletsPut", raw);
  const wallets: Record<string, string> = {};
  for (const chain of PAYOUT_CHAINS) {
    const address = body[chain];
    if (typeof address === "string") wallets[CHAIN_FAMILY[chain]] = address;
  }
  return wallets;
}

export function payoutRoutes({ clients, settings }: GatewayDeps, quotes: FaceQuotes): Router {
  const router = Router();

  router.get("/v1/account/wallets", requireScope(clients, "read_only"), async (req, res) => {
    const r = await clients.identity.getPayoutWallets({ accountId: credentialOf(req).accountId });
    res.json(payoutWalletsView(r.wallets));
  });

  router.put("/v1/account/wallets", requireScope(clients, "full"), async (req, res) => {
    const wallets = walletsOf(req.body);
    const cred = credentialOf(req);
    const r = await clients.identity.putPayoutWallets({ accountId: cred.accountId, wallets, dryRun: false, actor: cred.actor });
    res.json(payoutWalletsChangeView(r, false));
  });

  router.post("/v1/account/wallets/preview", requireScope(clients, "read_only"), async (req, res) => {
    const wallets = walletsOf(req.body);
    const cred = credentialOf(req);
    const r = await clients.identity.putPayoutWallets({ accountId: cred.accountId, wallets, dryRun: true, actor: cred.actor });
    res.json(payoutWalletsChangeView(r, true));
  });

  router.post("/v1/checkouts/:id/payouts", requireScope(clients, "payments"), async (req, res) => {
    const body = validateBody("CheckoutPayoutAdd", req.body);
    const cred = credentialOf(req);
    const checkoutId = String(req.params.id);
    const rail = { chainFamily: CHAIN_FAMILY[body.chain], address: body.address };
    await ensureAddedRailPayable(clients, cred.accountId, checkoutId, rail);
    const r = await clients.catalog.addPayoutRail({ accountId: cred.accountId, actor: cred.actor, checkoutId, ...rail });
    // Both faces carry the checkout's record in their cached answers.
    forgetFaces(quotes, checkoutId);
    res.json(checkoutView(answered(r.checkout, "checkout"), settings.baseUrl));
  });

  return router;
}
