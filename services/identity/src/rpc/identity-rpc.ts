import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { credentialKindName, credentialKindToProto, identityV1, keyModeName, keyModeToProto, scopeName, scopeToProto } from "@c402/contracts";
import { actorOfRequest } from "@c402/account-events";
import { invalid } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import type { KeyMode, MintingCredential, Scope } from "../domain/api-keys";
import { listAccountEvents } from "../domain/account-events";
import type { Identity } from "../domain/identity";
import type { MagicLinkMethods } from "./magic-link-rpc";
import type { OAuthMethods } from "./oauth-rpc";
import type { EmbedMethods } from "./embed-rpc";
import { isWellFormedAccessToken, oauthActor, type OAuthServer } from "../domain/oauth";
import { PayoutWallets } from "../domain/payout-wallets";
import { Platforms, type PlatformSettings } from "../domain/platform";
import { Profiles, type ProfilePatch, type ProfileTypeName } from "../domain/profile";
import type { AccountEventRow, ApiKeyPage, ApiKeyRow, IdentityDb, PayoutWalletRow, ProfileRow } from "../store/identity-store";

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

function eventMessage(e: AccountEventRow): identityV1.AccountEvent {
  return {
    $typeName: "identity.v1.AccountEvent",
    id: e.id,
    action: e.action,
    objectId: e.object_id,
    detailJson: JSON.stringify(e.detail),
    actor: e.actor,
    testMode: e.test_mode,
    at: ts(e.at),
  };
}

const PROFILE_TYPES: Record<ProfileTypeName, identityV1.ProfileType> = {
  individual: identityV1.ProfileType.INDIVIDUAL,
  team: identityV1.ProfileType.TEAM,
  company: identityV1.ProfileType.COMPANY,
};
const profileTypeName = (t: identityV1.ProfileType) => (Object.keys(PROFILE_TYPES) as ProfileTypeName[]).find((n) => PROFILE_TYPES[n] === t);

function profileMessage(p: ProfileRow): identityV1.Profile {
  const type = p.profile_type as ProfileTypeName | null;
  return {
    $typeName: "identity.v1.Profile",
    accountId: p.account_id,
    ...(p.slug !== null ? { slug: p.slug } : {}),
    ...(p.name !== null ? { name: p.name } : {}),
    profileType: type ? PROFILE_TYPES[type] : identityV1.ProfileType.UNSPECIFIED,
    ...(p.bio !== null ? { bio: p.bio } : {}),
    ...(p.avatar_url !== null ? { avatarUrl: p.avatar_url } : {}),
    ...(p.website_url !== null ? { websiteUrl: p.website_url } : {}),
    socialLinks: { $typeName: "identity.v1.SocialLinks", links: { ...p.social_links } },
    verified: p.verified,
    createdAt: ts(p.created_at),
    updatedAt: ts(p.updated_at),
  };
}

/** The request's patch in the domain's words: set fields, cleared fields, and the links when sent. */
function platformMessage(p: PlatformSettings): identityV1.PlatformSettings {
  return {
    $typeName: "identity.v1.PlatformSettings",
    platformAccount: p.platformAccount,
    platformFeeBps: p.platformFeeBps,
    ...(p.platformFeeTo !== null ? { platformFeeTo: p.platformFeeTo } : {}),
  };
}

function profilePatchOf(req: identityV1.UpdateProfileRequest): ProfilePatch {
  const type = req.profileType === undefined ? undefined : profileTypeName(req.profileType);
  return {
    set: {
      ...(req.slug !== undefined ? { slug: req.slug } : {}),
      ...(req.name !== undefined ? { name: req.name } : {}),
      ...(type !== undefined ? { profile_type: type } : {}),
      ...(req.bio !== undefined ? { bio: req.bio } : {}),
      ...(req.avatarUrl !== undefined ? { avatar_url: req.avatarUrl } : {}),
      ...(req.websiteUrl !== undefined ? { website_url: req.websiteUrl } : {}),
    },
    clear: req.clear,
    ...(req.socialLinks ? { socialLinks: req.socialLinks.links } : {}),
  };
}

function mintingCredentialOf(m: identityV1.MintingCredential | undefined): MintingCredential {
  const kind = m && credentialKindName(m.kind);
  const scope = m && scopeName(m.scope);
  const mode = m && keyModeName(m.mode);
  if (!kind || !scope || !mode) throw invalid([{ field: "minted_by", reason: "must name the kind, scope and mode of the credential asking" }]);
  return { kind, scope, mode };
}

export function identityRpc(
  identity: Identity,
  db: IdentityDb,
  oauth: OAuthServer,
  profiles = new Profiles(db),
  platforms = new Platforms(db),
  payoutWallets = new PayoutWallets(db),
): Omit<ServiceImplementation<typeof identityV1.IdentityService>, keyof MagicLinkMethods | keyof OAuthMethods | keyof EmbedMethods> {
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
        apiKey: keyMessage(r.key),
        secret: r.secret,
        session: { token: r.session.token, expiresAt: ts(r.session.expiresAt) },
      };
    },
    async resolveCredential(req) {
      if (isWellFormedAccessToken(req.secret)) {
        const t = await oauth.resolve(req.secret, req.audience === identityV1.Audience.MCP ? "mcp" : "rest");
        return {
          accountId: t.accountId,
          keyId: t.grantId,
          keyPrefix: req.secret.slice(0, 12),
          scope: scopeToProto(t.rung),
          // What an OAuth token creates is unarmed (spec, Authentication 2): it is test here, as a session is.
          mode: keyModeToProto("test"),
          kind: credentialKindToProto("oauth"),
          actor: oauthActor(t.clientId),
          expiresAt: ts(t.expiresAt),
        };
      }
      const c = await identity.resolve(req.secret);
      return {
        accountId: c.accountId,
        keyId: c.id,
        keyPrefix: c.prefix,
        scope: scopeToProto(c.scope),
        mode: keyModeToProto(c.mode),
        kind: credentialKindToProto(c.kind),
        actor: c.actor,
        ...(c.expiresAt ? { expiresAt: ts(c.expiresAt) } : {}),
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
        actorOfRequest(req.actor),
      );
      return { apiKey: keyMessage(key), secret };
    },
    async listApiKeys(req) {
      return { apiKeys: (await identity.listKeys(req.accountId, pageOf(req))).map(keyMessage) };
    },
    async revokeApiKey(req) {
      return { apiKey: keyMessage(await identity.revokeKey(req.accountId, req.keyId, actorOfRequest(req.actor))) };
    },
    async getPayoutWallets(req) {
      return { wallets: (await identity.payoutWallets(req.accountId)).map(walletMessage) };
    },
    async putPayoutWallets(req) {
      const r = await payoutWallets.put(req.accountId, req.wallets, actorOfRequest(req.actor), { dryRun: req.dryRun });
      return {
        wallets: r.wallets.map(walletMessage),
        changes: r.changes.map((c) => ({
          chainFamily: c.chainFamily,
          ...(c.before !== null ? { before: c.before } : {}),
          ...(c.after !== null ? { after: c.after } : {}),
        })),
        changed: r.changed,
      };
    },
    async endSession(req) {
      return { endedAt: ts(await identity.endSession(req.accountId, req.sessionId, actorOfRequest(req.actor))) };
    },
    async listAccountEvents(req) {
      const events = await listAccountEvents(db, req.accountId, {
        size: req.pageSize,
        ...(req.actionPrefix ? { actionPrefix: req.actionPrefix } : {}),
        ...(req.before.case === "beforeEventId" ? { beforeEventId: req.before.value } : {}),
        ...(req.before.case === "beforeAt" ? { beforeAt: timestampDate(req.before.value) } : {}),
      });
      return { events: events.map(eventMessage) };
    },
    async getProfile(req) {
      return { profile: profileMessage(await profiles.get(req.accountId)) };
    },
    async getPublicProfile(req) {
      return { profile: profileMessage(await profiles.bySlug(req.slug)) };
    },
    async updateProfile(req) {
      const { profile, changed } = await profiles.update(req.accountId, profilePatchOf(req), actorOfRequest(req.actor));
      return { profile: profileMessage(profile), changed };
    },
    async getPlatformSettings(req) {
      const settings = await platforms.get(req.accountId);
      return { settings: platformMessage(settings), soldBy: settings.platformAccount ? await platforms.soldBy(req.accountId) : "" };
    },
    async putPlatformSettings(req) {
      const input = { platformAccount: req.platformAccount, platformFeeBps: req.platformFeeBps, platformFeeTo: req.platformFeeTo ?? null };
      const { settings, changed } = await platforms.put(req.accountId, input, actorOfRequest(req.actor));
      return { settings: platformMessage(settings), changed };
    },
  };
}
