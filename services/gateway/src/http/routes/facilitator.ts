import { Router } from "express";
import type { GatewayDeps } from "../deps";
import { validateBody } from "../validate";

interface FacilitatorBody {
  network: string;
  requirement: Record<string, unknown>;
  payload: Record<string, unknown>;
}

/** The x402 facilitator API per chain family (`base`, `stellar`, `solana`); no credential. */
export function facilitatorRoutes({ clients }: GatewayDeps): Router {
  const router = Router();

  router.get("/x402/:family/supported", async (req, res) => {
    const r = await clients.payments.facilitatorSupported({ family: String(req.params.family) });
    res.json(JSON.parse(r.supportedJson));
  });

  for (const action of ["verify", "settle"] as const) {
    router.post(`/x402/:family/${action}`, async (req, res) => {
      const body = validateBody<FacilitatorBody>("FacilitatorRequest", req.body);
      const request = {
        family: String(req.params.family),
        network: body.network,
        requirementJson: JSON.stringify(body.requirement),
        payloadJson: JSON.stringify(body.payload),
      };
      // Like the reference facilitator: 200 with isValid/success false for a refused payment.
      if (action === "verify") res.json(JSON.parse((await clients.payments.facilitatorVerify(request)).verifyResponseJson));
      else res.json(JSON.parse((await clients.payments.facilitatorSettle(request, { timeoutMs: 60_000 })).settleResponseJson));
    });
  }

  return router;
}
