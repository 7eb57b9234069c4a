import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { identityV1 } from "@c402/contracts";
import { ACCOUNT_ID, resolveCredential, SELLER_KEY, servers, bodyOf, recorded } from "../support/fake-gateway";

/** POST /auth/logout (routes/sessions.ts). */

const serve = servers();
const SESSION_TOKEN = "sess_0123456789abcdefABCDEF0123456789";
const SESSION_ID = "ses_Session00000000000000000";
const ENDED_AT = new Date("2025-03-04T05:06:07.000Z");

function sessionFakes() {
  const asKey = resolveCredential();
  return recorded({
    identity: {
      resolveCredential: async (req) =>
        req.secret === SESSION_TOKEN
          ? create(identityV1.ResolveCredentialResponseSchema, {
              accountId: ACCOUNT_ID,
              keyId: SESSION_ID,
              keyPrefix: SESSION_TOKEN.slice(0, 12),
              scope: identityV1.Scope.FULL,
              mode: identityV1.KeyMode.TEST,
              kind: identityV1.CredentialKind.SESSION,
              actor: "wallet",
            })
          : asKey(req),
      endSession: async () => create(identityV1.EndSessionResponseSchema, { endedAt: timestampFromDate(ENDED_AT) }),
    },
  });
}

const logout = (url: string, secret: string) => fetch(`${url}/auth/logout`, { method: "POST", headers: { authorization: `Bearer ${secret}` } });

describe("logout", () => {
  it("ends the session the request carries, naming it to identity, and answers when it ended (not stored)", async () => {
    const { fakes, of, called } = sessionFakes();
    const { url } = await serve.app(fakes);
    const res = await logout(url, SESSION_TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(res)).toEqual({ object: "session", ended: true, ended_at: ENDED_AT.toISOString() });
    // The browser's cookie is the same session: it is cleared too.
    expect(res.headers.getSetCookie()).toEqual([expect.stringMatching(/^c402_session=; Max-Age=0; .*HttpOnly/)]);
    expect(of("endSession")).toEqual([{ accountId: ACCOUNT_ID, sessionId: SESSION_ID, actor: "wallet" }]);
    expect(called()).toEqual(["identity.resolveCredential", "identity.endSession"]);
  });

  it("refuses an API key with 403 pointing at key revocation, and ends nothing", async () => {
    const { fakes, called } = sessionFakes();
    const { url } = await serve.app(fakes);
    const res = await logout(url, SELLER_KEY);
    expect(res.status).toBe(403);
    expect(await bodyOf(res)).toMatchObject({ help: { fix: expect.stringContaining("DELETE /v1/keys/{id}") } });
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(called()).toEqual(["identity.resolveCredential"]);
  });

  it("401 without a credential", async () => {
    const { fakes, called } = sessionFakes();
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/auth/logout`, { method: "POST" })).status).toBe(401);
    expect(called()).toEqual([]);
  });
});
