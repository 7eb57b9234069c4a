import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { credentialKindName, credentialKindToProto, identityV1, keyModeName, keyModeToProto, scopeName, scopeToProto } from "@c402/contracts";
import { invalid } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import type { KeyMode, MintingCredential, Scope } from "../domain/api-keys";
import type { Identity } from "../domain/identity";
import type { ApiKeyPage, ApiKeyRow, PayoutWalletRow } from "../store/identity-store";

const ts = (d: Date) => timestampFromDate(d);

function keyMessage(k: ApiKeyRow): identityV1.ApiKey {
  return {
    $typeName: "identity.v1.ApiKey",
    id: k.id,
    ...(k.name !== null ? { name: k.name } : {}),
    prefix: k.prefix,
    scope: scopeToProto(k.scope as Scope),
    mode: keyModeToProto(k.mode as KeyMode),
    createdAt: ts(k.created_at),
    ...(k.revoked_at ? { revokedAt: ts(k.revoked_at) } : {}),
    ...(k.last_used_at ? { lastUsedAt: ts(k.last_used_at) } : {}),
  };
}

function walletMessage(w: PayoutWalletRow): identityV1.PayoutWallet {
  return { $typeName: "identity.v1.PayoutWallet", chainFamily: w.chain_family, address: w.address, verified: w.verified, isDefault: w.is_default };
}

function pageOf(req: identityV1.ListApiKeysRequest): ApiKeyPage {
  if (!req.after) return { size: req.pageSize };
  if (!req.after.createdAt || !req.after.id) throw invalid([{ field: "after", reason: "needs created_at and id" }]);
  return { size: req.pageSize, after: { createdAt: timestampDate(req.after.createdAt), id: req.after.id } };
}

function mintingCredentialOf(m: identityV1.MintingCredential | undefined): MintingCredential {
  const kind = m && credentialKindName(m.kind);
  const scope = m && scopeName(m.scope);
  const mode = m && keyModeName(m.mode);
  if (!kind || !scope || !mode) throw invalid([{ field: "minted_by", reason: "must name the kind, scope and mode of the credential asking" }]);
  return { kind, scope, mode };
}

export function identityRpc(identity: Identity): ServiceImplementation<typeof identityV1.IdentityService> {
  return {
    async createWalletChallenge(req) {
      const c = await identity.createChallenge({ address: req.address, network: req.network });
      return { message: c.message, nonce: c.nonce, expiresAt: ts(c.expiresAt), expiresInSeconds: c.expiresInSeconds };
    },
    async verifyWalletSignature(req) {
      const r = await identity.verifySignature({ message: req.message, signature: req.signature });
      return {
        account: { id: r.accountId, createdAt: ts(r.accountCreatedAt) },
        accountCreated: r.accountCreated,
        payoutWallet: walletMessage(r.wallet),
        ...(r.accountCreated ? { apiKey: keyMessage(r.key), secret: r.secret } : { session: { token: r.session.token, expiresAt: ts(r.session.expiresAt) } }),
      };
    },
    async resolveCredential(req) {
      const c = await identity.resolve(req.secret);
      return {
        accountId: c.accountId,
        keyId: c.id,
        keyPrefix: c.prefix,
        scope: scopeToProto(c.scope),
        mode: keyModeToProto(c.mode),
        kind: credentialKindToProto(c.kind),
      };
    },
    async createApiKey(req) {
      const scope = scopeName(req.scope);
      const mode = keyModeName(req.mode);
      if (!scope) throw invalid([{ field: "scope", reason: "must be read_only, payments or full" }]);
      if (!mode) throw invalid([{ field: "mode", reason: "must be test or live" }]);
      const { key, secret } = await identity.createKey(
        req.accountId,
        { ...(req.name !== undefined ? { name: req.name } : {}), scope, mode },
        mintingCredentialOf(req.mintedBy),
      );
      return { apiKey: keyMessage(key), secret };
    },
    async listApiKeys(req) {
      return { apiKeys: (await identity.listKeys(req.accountId, pageOf(req))).map(keyMessage) };
    },
    async revokeApiKey(req) {
      return { apiKey: keyMessage(await identity.revokeKey(req.accountId, req.keyId)) };
    },
    async getPayoutWallets(req) {
      return { wallets: (await identity.payoutWallets(req.accountId)).map(walletMessage) };
    },
    async endSession(req) {
      return { endedAt: ts(await identity.endSession(req.accountId, req.sessionId)) };
    },
  };
}
