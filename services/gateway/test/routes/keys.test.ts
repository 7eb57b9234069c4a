import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { identityV1 } from "@c402/contracts";
import { ACCOUNT_ID, resolveCredential, SELLER_KEY, servers, bodyOf, recorded } from "../support/fake-gateway";

/** /v1/keys: mint, list, revoke (routes/keys.ts). */

const serve = servers();
const auth = { authorization: `Bearer ${SELLER_KEY}` };
const KEY_ID = "key_Minted0000000000000000";

function apiKey(scope: identityV1.Scope, mode: identityV1.KeyMode) {
  return create(identityV1.ApiKeySchema, {
    id: KEY_ID,
    name: "ci",
    prefix: "sk_live_wxyz",
    scope,
    mode,
    createdAt: timestampFromDate(new Date("2025-02-01T00:00:00.000Z")),
  });
}

function keyFakes(scope: identityV1.Scope = identityV1.Scope.FULL) {
  return recorded({
    identity: {
      resolveCredential: resolveCredential(scope),
      createApiKey: async (req) =>
        create(identityV1.CreateApiKeyResponseSchema, { apiKey: apiKey(req.scope ?? 0, req.mode ?? 0), secret: "sk_live_wxyz_secret" }),
      listApiKeys: async () => create(identityV1.ListApiKeysResponseSchema, { apiKeys: [apiKey(identityV1.Scope.UNSPECIFIED, identityV1.KeyMode.TEST)] }),
      revokeApiKey: async () => create(identityV1.RevokeApiKeyResponseSchema, {}),
    },
  });
}

describe("API keys", () => {
  it("mints a key with the asked scope and mode, naming the credential that mints it, and shows the secret once", async () => {
    const { fakes, of } = keyFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/keys`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "ci", scope: "read_only", mode: "live" }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await bodyOf(res)).toMatchObject({
      id: KEY_ID,
      object: "api_key",
      name: "ci",
      prefix: "sk_live_wxyz",
      scope: "read_only",
      mode: "live",
      created_at: "2025-02-01T00:00:00.000Z",
      revoked_at: null,
      secret: "sk_live_wxyz_secret",
    });
    expect(of("createApiKey")).toEqual([
      {
        accountId: ACCOUNT_ID,
        name: "ci",
        scope: identityV1.Scope.READ_ONLY,
        mode: identityV1.KeyMode.LIVE,
        mintedBy: { kind: identityV1.CredentialKind.API_KEY, scope: identityV1.Scope.FULL, mode: identityV1.KeyMode.TEST },
        actor: "key:sk_test_abcd",
      },
    ]);
  });

  it("defaults to a payments test key", async () => {
    const { fakes, of } = keyFakes();
    const { url } = await serve.app(fakes);
    await fetch(`${url}/v1/keys`, { method: "POST", headers: auth });
    expect(of("createApiKey")[0]).toMatchObject({ scope: identityV1.Scope.PAYMENTS, mode: identityV1.KeyMode.TEST });
  });

  it("lists keys, naming a scope this build does not know `unknown`", async () => {
    const { fakes } = keyFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const body = await bodyOf(await fetch(`${url}/v1/keys`, { headers: auth }));
    expect(body).toEqual({ keys: [expect.objectContaining({ id: KEY_ID, scope: "unknown", mode: "test" })], has_more: false, next_cursor: null });
  });

  it("lets a key revoke itself, but another key only with scope full", async () => {
    const { fakes, of } = keyFakes(identityV1.Scope.PAYMENTS);
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/v1/keys/${KEY_ID}`, { method: "DELETE", headers: auth })).status).toBe(403);
    expect((await fetch(`${url}/v1/keys/key_SellerKey000000000000000`, { method: "DELETE", headers: auth })).status).toBe(204);
    expect(of("revokeApiKey")).toEqual([{ accountId: ACCOUNT_ID, keyId: "key_SellerKey000000000000000", actor: "key:sk_test_abcd" }]);
  });
});
