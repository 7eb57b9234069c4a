import { CheckoutStatus } from "./gen/catalog/v1/catalog_pb";
import { DeliveryOutcome, OriginAuthType } from "./gen/fulfillment/v1/fulfillment_pb";
import type { ORIGIN_AUTH_TYPE_NAMES } from "./origin-keys";
import { CredentialKind, KeyMode, Scope } from "./gen/identity/v1/identity_pb";

/**
 * The wire enums as the words the JSON API and the services' domains use,
 * both ways, in one place (each service used to keep its own map).
 */
export type CheckoutStatusName = "open" | "paid" | "expired" | "void";

const CHECKOUT_STATUS_BY_NAME: Record<CheckoutStatusName, CheckoutStatus> = {
  open: CheckoutStatus.OPEN,
  paid: CheckoutStatus.PAID,
  expired: CheckoutStatus.EXPIRED,
  void: CheckoutStatus.VOID,
};

export function checkoutStatusToProto(name: CheckoutStatusName): CheckoutStatus {
  return CHECKOUT_STATUS_BY_NAME[name];
}

/** The name of a wire value; undefined for UNSPECIFIED or a value this build does not know. */
function nameOf<N extends string, E>(byName: Record<N, E>, value: E): N | undefined {
  return (Object.keys(byName) as N[]).find((name) => byName[name] === value);
}

/** The name of a checkout status; undefined for UNSPECIFIED or a value this build does not know. */
export function checkoutStatusName(status: CheckoutStatus): CheckoutStatusName | undefined {
  return nameOf(CHECKOUT_STATUS_BY_NAME, status);
}

export type ScopeName = "read_only" | "payments" | "full";
export type KeyModeName = "test" | "live";
/** An API key, a session (wallet or magic link), or an OAuth access token. */
export type CredentialKindName = "api_key" | "session" | "oauth";

const SCOPES: Record<ScopeName, Scope> = { read_only: Scope.READ_ONLY, payments: Scope.PAYMENTS, full: Scope.FULL };
const KEY_MODES: Record<KeyModeName, KeyMode> = { test: KeyMode.TEST, live: KeyMode.LIVE };
const CREDENTIAL_KINDS: Record<CredentialKindName, CredentialKind> = {
  api_key: CredentialKind.API_KEY,
  session: CredentialKind.SESSION,
  oauth: CredentialKind.OAUTH,
};

export const scopeToProto = (name: ScopeName): Scope => SCOPES[name];
export const scopeName = (scope: Scope): ScopeName | undefined => nameOf(SCOPES, scope);
export const keyModeToProto = (name: KeyModeName): KeyMode => KEY_MODES[name];
export const keyModeName = (mode: KeyMode): KeyModeName | undefined => nameOf(KEY_MODES, mode);
export const credentialKindToProto = (name: CredentialKindName): CredentialKind => CREDENTIAL_KINDS[name];
export const credentialKindName = (kind: CredentialKind): CredentialKindName | undefined => nameOf(CREDENTIAL_KINDS, kind);

/** How an origin key's value is sent to the seller's origin. */
export type OriginAuthTypeName = (typeof ORIGIN_AUTH_TYPE_NAMES)[number];

const ORIGIN_AUTH_TYPES: Record<OriginAuthTypeName, OriginAuthType> = {
  bearer: OriginAuthType.BEARER,
  basic: OriginAuthType.BASIC,
  api_key: OriginAuthType.API_KEY,
  custom: OriginAuthType.CUSTOM,
};

export const originAuthTypeToProto = (name: OriginAuthTypeName): OriginAuthType => ORIGIN_AUTH_TYPES[name];
export const originAuthTypeName = (type: OriginAuthType): OriginAuthTypeName | undefined => nameOf(ORIGIN_AUTH_TYPES, type);

/** How a relay delivery ended (fulfillment records it; payments settles only the charged ones). */
export type DeliveryOutcomeName = "delivered" | "buyer_error" | "origin_failed" | "abandoned" | "test_cap_reached";

const DELIVERY_OUTCOMES: Record<DeliveryOutcomeName, DeliveryOutcome> = {
  delivered: DeliveryOutcome.DELIVERED,
  buyer_error: DeliveryOutcome.BUYER_ERROR,
  origin_failed: DeliveryOutcome.ORIGIN_FAILED,
  abandoned: DeliveryOutcome.ABANDONED,
  test_cap_reached: DeliveryOutcome.TEST_CAP_REACHED,
};

export const deliveryOutcomeToProto = (name: DeliveryOutcomeName): DeliveryOutcome => DELIVERY_OUTCOMES[name];
export const deliveryOutcomeName = (outcome: DeliveryOutcome): DeliveryOutcomeName | undefined => nameOf(DELIVERY_OUTCOMES, outcome);
