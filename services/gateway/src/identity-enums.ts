import { identityV1 } from "@c402/contracts";

/**
 * Identity's wire enums as the words the JSON API uses, both ways, in one
 * place (as @c402/contracts does for the checkout status): the routes, the
 * authentication and the views all read these.
 */
export type ScopeName = "read_only" | "payments" | "full";
export type KeyModeName = "test" | "live";
/** An API key, or a wallet session (a later wallet sign-in). */
export type CredentialKindName = "api_key" | "session";

const SCOPES: Record<ScopeName, identityV1.Scope> = {
  read_only: identityV1.Scope.READ_ONLY,
  payments: identityV1.Scope.PAYMENTS,
  full: identityV1.Scope.FULL,
};
const KEY_MODES: Record<KeyModeName, identityV1.KeyMode> = { test: identityV1.KeyMode.TEST, live: identityV1.KeyMode.LIVE };
const CREDENTIAL_KINDS: Record<CredentialKindName, identityV1.CredentialKind> = {
  api_key: identityV1.CredentialKind.API_KEY,
  session: identityV1.CredentialKind.SESSION,
};

/** The name of a wire value; undefined for UNSPECIFIED or a value this build does not know. */
function nameOf<N extends string, E>(byName: Record<N, E>, value: E): N | undefined {
  return (Object.keys(byName) as N[]).find((name) => byName[name] === value);
}

export const scopeToProto = (name: ScopeName): identityV1.Scope => SCOPES[name];
export const scopeName = (scope: identityV1.Scope): ScopeName | undefined => nameOf(SCOPES, scope);
export const keyModeToProto = (name: KeyModeName): identityV1.KeyMode => KEY_MODES[name];
export const keyModeName = (mode: identityV1.KeyMode): KeyModeName | undefined => nameOf(KEY_MODES, mode);
export const credentialKindToProto = (name: CredentialKindName): identityV1.CredentialKind => CREDENTIAL_KINDS[name];
export const credentialKindName = (kind: identityV1.CredentialKind): CredentialKindName | undefined => nameOf(CREDENTIAL_KINDS, kind);
