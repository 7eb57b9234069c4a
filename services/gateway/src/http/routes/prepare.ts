import { Router, type Request, type Response } from "express";
import { FACE_PROTO, type Face } from "../../faces/face";
import { faceUrl } from "../../views/checkouts";
import { preparedView } from "../../views/payments";
import type { GatewayDeps } from "../deps";
import { articleIdOf, checkoutIdOf, escrowCheckoutIdOf } from "../face-requests";
import { validateBody } from "../validate";

/** POST /c/{id}/prepare and /c/{id}/test/prepare (and /x/ for gated articles, /e/ for escrow checkouts): the typed data a buyer signs to pay that face. */
export function prepareRoutes({ clients, settings }: GatewayDeps): Router {
  const router = Router();

  const prepare =
    (face: Face, idOf = checkoutIdOf) =>
    async (req: Request, res: Response) => {
      const id = idOf(req);
      const body = validateBody("PaymentPrepare", req.body);
      const r = await clients.payments.preparePayment({
        checkoutId: id,
        face: FACE_PROTO[face],
        payer: body.payer,
        ...(typeof body.network === "string" ? { network: body.network } : {}),
        ...(body.params ? { params: body.params } : {}),
      });
      // The call parameters ride on the URL the payment is presented at, exactly as on GET /c/{id}?….
      const query = body.params ? new URLSearchParams(body.params).toString() : "";
      const payUrl = faceUrl(settings.baseUrl, id, face) + (query ? `?${query}` : "");
      res.json({ ...preparedView(r, payUrl), pay_url: payUrl });
    };

  router.post("/c/:id/prepare", prepare("live"));
  router.post("/c/:id/test/prepare", prepare("test"));
  router.post("/x/:id/prepare", prepare("live", articleIdOf));
  router.post("/x/:id/test/prepare", prepare("test", articleIdOf));
  router.post("/e/:id/prepare", prepare("live", escrowCheckoutIdOf));
  router.post("/e/:id/test/prepare", prepare("test", escrowCheckoutIdOf));
  return router;
}
