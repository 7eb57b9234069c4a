import { originAuthTypeName, type fulfillmentV1 } from "@c402/contracts";
import { isoOrNull } from "./values";

/** The public JSON shape of an origin key: never its value. */
export function originKeyView(k: fulfillmentV1.OriginKey) {
  return {
    id: k.id,
    object: "origin_key",
    name: k.name ?? null,
    auth_type: originAuthTypeName(k.authType) ?? "unknown",
    header_name: k.headerName ?? null,
    checkouts_using: k.checkoutsUsing,
    created_at: isoOrNull(k.createdAt),
    rotated_at: isoOrNull(k.rotatedAt),
    revoked_at: isoOrNull(k.revokedAt),
  };
}

/** DELETE's answer: the key, whether this call revoked it, and a warning when checkouts still reference it. */
export function revokedOriginKeyView(k: fulfillmentV1.OriginKey, revoked: boolean) {
  const using = k.checkoutsUsing;
  return {
    ...originKeyView(k),
    revoked,
    warning:
      using > 0
        ? `${using} checkout${using === 1 ? " still references" : "s still reference"} this key; it is no longer sent with their calls to the origin.`
        : null,
  };
}
