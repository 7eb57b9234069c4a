import { ProblemError } from "@c402/problems";
import { Router } from "express";
import { endedSessionView } from "../../views/sessions";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { noStore } from "../request-context";
import { sessionCookiesOf } from "../session-cookie";

/**
 * POST /auth/logout: ends the session the request is authenticated with (its
 * bearer token or the session cookie: one session either way), at once: the
 * token then gets 401, and the browser is told to drop the cookie. An API key
 * is not a session: 403, pointing at revoking the key instead.
 */
export function sessionRoutes({ clients }: GatewayDeps): Router {
  const router = Router();

  router.post("/auth/logout", requireScope(clients, "read_only"), noStore, async (req, res) => {
    const credential = credentialOf(req);
    if (credential.kind !== "session") {
      throw new ProblemError("forbidden", {
        message: "Logout ends a session, and this request is authenticated with an API key.",
        help: { fix: "To stop a key working, revoke it: DELETE /v1/keys/{id} (any key may revoke itself)." },
      });
    }
    const ended = await clients.identity.endSession({ accountId: credential.accountId, sessionId: credential.keyId, actor: credential.actor });
    sessionCookiesOf(req).clear(res);
    res.json(endedSessionView(ended));
  });

  return router;
}
