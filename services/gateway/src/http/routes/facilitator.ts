import type { Request } from "express";
import { settleResponseFromMessage, supportedFromMessage, verifyResponseFromMessage } from "@c402/contracts";
import { Router } from "express";
import { isAddress } from "viem";
import { facilitatorHealthView } from "../../views/facilitator-health";
import type { GatewayDeps } from "../deps";
import type { SettlementRails } from "../rails";
import { rateLimit } from "../rate-limit";
import { validateBody } from "../validate";

/**
 * Verify and settle calls a minute per client address and per payer. Each
 * one asks the chain, so a flood must not delay the sellers' settlements;
 * real buyers settle one payment at a time.
 */
export const FACILITATOR_LIMITS = { perAddressPerMinute: 120, perPayerPerMinute: 30 };

/** The payer a facilitator request names (the authorization's `from`), lowercased, if it names one. */
function payerOf(req: Request): string | undefined {
  const from = (req.body as { payload?: { payload?: { authorization?: { from?: unknown } } } } | undefined)?.payload?.payload?.authorization?.from;
  return typeof from === "string" && isAddress(from, { strict: false }) ? from.toLowerCase() : undefined;
}

/**
 * The x402 facilitator API per chain family (`base`, `stellar`, `solana`); no
 * credential. Payments verifies and settles only requirements this service
 * issued for an open live checkout (docs/adr/0008). /health/facilitator says
 * what each family settles now, from the same answer as /supported.
 */
export function facilitatorRoutes({ clients, cache }: GatewayDeps, rails: SettlementRails): Router {
  const router = Router();

  // Never a 5xx: a payments outage is a 200 with status "degraded" and no family available (docs/decisions.md).
  router.get("/health/facilitator", async (_req, res) => {
    const answer = await rails.ask().catch(() => undefined);
    res.setHeader("Cache-Control", "no-store");
    res.json(facilitatorHealthView(answer, rails.lastKnown(), new Date()));
  });

  const perAddress = rateLimit(cache, { name: "facilitator", limit: FACILITATOR_LIMITS.perAddressPerMinute, windowSeconds: 60 });
  const perPayer = rateLimit(cache, { name: "facilitator-payer", limit: FACILITATOR_LIMITS.perPayerPerMinute, windowSeconds: 60, keyOf: payerOf });

  router.get("/x402/:family/supported", async (req, res) => {
    const r = await clients.payments.facilitatorSupported({ family: String(req.params.family) });
    res.json(supportedFromMessage(r));
  });

  for (const action of ["verify", "settle"] as const) {
    router.post(`/x402/:family/${action}`, perAddress, perPayer, async (req, res) => {
      const body = validateBody("FacilitatorRequest", req.body);
      const request = {
        family: String(req.params.family),
        network: body.network,
        requirementJson: JSON.stringify(body.requirement),
        payloadJson: JSON.stringify(body.payload),
      };
      // Like the reference facilitator: 200 with isValid/success false for a refused payment.
      if (action === "verify") res.json(verifyResponseFromMessage((await clients.payments.facilitatorVerify(request)).verifyResponse));
      else res.json(settleResponseFromMessage((await clients.payments.facilitatorSettle(request, { timeoutMs: 60_000 })).settleResponse));
    });
  }

  return router;
}
