import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router } from "express";
import { credentialKindToProto, keyModeToProto, scopeToProto } from "@c402/contracts";
import { apiKeyView, newApiKeyView } from "../../views/keys";
import { credentialOf, refuseOAuth, requireScope, type Credential } from "../auth";
import type { GatewayDeps } from "../deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { noStore } from "../request-context";
import { validateBody } from "../validate";

/** The credential of a keys route: an OAuth token never manages keys (403). */
function keyManager(req: Parameters<typeof credentialOf>[0]): Credential {
  const cred = credentialOf(req);
  refuseOAuth(cred, "API keys");
  return cred;
}

/** /v1/keys: a seller mints, lists and revokes API keys. */
export function keyRoutes({ clients }: GatewayDeps): Router {
  const router = Router();

  // Identity refuses (403) a key more powerful than the credential asking for it.
  router.post("/v1/keys", requireScope(clients, "full"), noStore, async (req, res) => {
    const cred = keyManager(req);
    const body = validateBody("ApiKeyCreate", req.body);
    const r = await clients.identity.createApiKey({
      accountId: cred.accountId,
      ...(body.name ? { name: body.name } : {}),
      scope: scopeToProto(body.scope ?? "payments"),
      mode: keyModeToProto(body.mode ?? "test"),
      mintedBy: { kind: credentialKindToProto(cred.kind), scope: scopeToProto(cred.scope), mode: keyModeToProto(cred.mode) },
      actor: cred.actor,
    });
    res.status(201).json(newApiKeyView(answered(r.apiKey, "api_key"), r.secret));
  });

  router.get("/v1/keys", requireScope(clients, "read_only"), async (req, res) => {
    const page = pageRequestOf(req.query);
    const r = await clients.identity.listApiKeys({ accountId: keyManager(req).accountId, ...servicePage(page) });
    const { items, ...more } = pageOf(r.apiKeys, page.limit, createdAtKey);
    res.json({ keys: items.map(apiKeyView), ...more });
  });

  // Any key may revoke itself (a leaked key can be killed with itself); revoking another key needs `full`.
  router.delete("/v1/keys/:keyId", requireScope(clients, "read_only"), async (req, res) => {
    const cred = keyManager(req);
    const keyId = String(req.params.keyId);
    if (keyId !== cred.keyId && cred.scope !== "full") {
      throw new ProblemError("forbidden", { message: "Revoking another key needs scope `full`.", extensions: { needed_scope: "full" } });
    }
    await clients.identity.revokeApiKey({ accountId: cred.accountId, keyId, actor: cred.actor });
    res.status(204).end();
  });

  return router;
}
