import { answered } from "@c402/rpc";
import { identityV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { Router } from "express";
import { apiKeyView } from "../../domain/views";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { noStore } from "../request-context";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { validateBody } from "../validate";

const SCOPES = { read_only: identityV1.Scope.READ_ONLY, payments: identityV1.Scope.PAYMENTS, full: identityV1.Scope.FULL } as const;
const MODES = { test: identityV1.KeyMode.TEST, live: identityV1.KeyMode.LIVE } as const;
const KINDS = { api_key: identityV1.CredentialKind.API_KEY, session: identityV1.CredentialKind.SESSION } as const;

export function keyRoutes({ clients }: GatewayDeps): Router {
  const router = Router();

  // Identity refuses (403) a key more powerful than the credential asking for it.
  router.post("/v1/keys", requireScope(clients, "full"), noStore, async (req, res) => {
    const body = validateBody<{ name?: string | null; scope?: keyof typeof SCOPES; mode?: keyof typeof MODES }>("ApiKeyCreate", req.body);
    const cred = credentialOf(req);
    const r = await clients.identity.createApiKey({
      accountId: cred.accountId,
      ...(body.name ? { name: body.name } : {}),
      scope: SCOPES[body.scope ?? "payments"],
      mode: MODES[body.mode ?? "test"],
      mintedBy: { kind: KINDS[cred.kind], scope: SCOPES[cred.scope], mode: MODES[cred.mode] },
    });
    res
      .status(201)
      .json({ ...apiKeyView(answered(r.apiKey, "api_key")), secret: r.secret, note: "Shown once. Store it now; only its prefix can be listed later." });
  });

  router.get("/v1/keys", requireScope(clients, "read_only"), async (req, res) => {
    const page = pageRequestOf(req.query);
    const r = await clients.identity.listApiKeys({ accountId: credentialOf(req).accountId, ...servicePage(page) });
    const { items, ...more } = pageOf(r.apiKeys, page.limit, createdAtKey);
    res.json({ keys: items.map(apiKeyView), ...more });
  });

  // Any key may revoke itself (a leaked key can be killed with itself); revoking another key needs `full`.
  router.delete("/v1/keys/:keyId", requireScope(clients, "read_only"), async (req, res) => {
    const cred = credentialOf(req);
    const keyId = String(req.params.keyId);
    if (keyId !== cred.keyId && cred.scope !== "full") {
      throw new ProblemError("forbidden", { message: "Revoking another key needs scope `full`.", extensions: { needed_scope: "full" } });
    }
    await clients.identity.revokeApiKey({ accountId: cred.accountId, keyId });
    res.status(204).end();
  });

  return router;
}
