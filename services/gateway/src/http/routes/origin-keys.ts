import { originAuthTypeToProto } from "@c402/contracts";
import { answered } from "@c402/rpc";
import { Router } from "express";
import { originKeyView, revokedOriginKeyView } from "../../views/origin-keys";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { noStore } from "../request-context";
import { validateBody } from "../validate";

/** /v1/origin-keys: credentials for a seller's origins, stored sealed by fulfillment; the value goes in and never comes out. */
export function originKeyRoutes({ clients }: GatewayDeps): Router {
  const router = Router();
  const change = (req: Parameters<typeof credentialOf>[0]) => {
    const cred = credentialOf(req);
    return { accountId: cred.accountId, actor: cred.actor, testMode: cred.mode === "test" };
  };

  router.post("/v1/origin-keys", requireScope(clients, "payments"), noStore, async (req, res) => {
    const body = validateBody("OriginKeyCreate", req.body);
    const r = await clients.fulfillment.createOriginKey({
      ...change(req),
      authType: originAuthTypeToProto(body.auth_type),
      value: body.value,
      ...(typeof body.name === "string" ? { name: body.name } : {}),
      ...(typeof body.header_name === "string" ? { headerName: body.header_name } : {}),
    });
    res
      .status(201)
      .json({ ...originKeyView(answered(r.originKey, "origin_key")), note: "Stored sealed. The value is never shown again; rotate it with PATCH." });
  });

  router.get("/v1/origin-keys", requireScope(clients, "read_only"), async (req, res) => {
    const page = pageRequestOf(req.query);
    const r = await clients.fulfillment.listOriginKeys({ accountId: credentialOf(req).accountId, ...servicePage(page) });
    const { items, ...more } = pageOf(r.originKeys, page.limit, createdAtKey);
    res.json({ origin_keys: items.map(originKeyView), ...more });
  });

  router.patch("/v1/origin-keys/:secretId", requireScope(clients, "payments"), noStore, async (req, res) => {
    const body = validateBody("OriginKeyRotate", req.body);
    const r = await clients.fulfillment.rotateOriginKey({ ...change(req), originKeyId: String(req.params.secretId), value: body.value });
    res.json(originKeyView(answered(r.originKey, "origin_key")));
  });

  router.delete("/v1/origin-keys/:secretId", requireScope(clients, "payments"), async (req, res) => {
    const r = await clients.fulfillment.revokeOriginKey({ ...change(req), originKeyId: String(req.params.secretId) });
    res.json(revokedOriginKeyView(answered(r.originKey, "origin_key"), r.revoked));
  });

  return router;
}
