import type { OriginAuthTypeName } from "@c402/contracts";
import type { FieldError } from "@c402/problems";
import { assertValid, headerNameErrors, valueErrors } from "./origin-key-rules";
import type { OriginCredential, OriginKeys } from "./origin-keys";

/** How a call to an origin authenticates, as a request names it: a one-off credential or a stored origin key. */
export type OriginAuthRequest =
  { kind: "one_off"; authType: OriginAuthTypeName; value: string; headerName?: string } | { kind: "origin_key"; originKeyId: string } | { kind: "none" };

/** The headers a credential puts on every request to the origin. */
export function credentialHeaders(c: OriginCredential): Record<string, string> {
  switch (c.authType) {
    case "bearer":
      return { authorization: `Bearer ${c.value}` };
    case "basic":
      return { authorization: `Basic ${Buffer.from(c.value, "utf8").toString("base64")}` };
    case "api_key":
    case "custom":
      return c.headerName ? { [c.headerName]: c.value } : {};
  }
}

/** Field names as the JSON API calls them (origin_auth_value, …), for 422s on requests that carry a one-off credential. */
function asRequestFields(errors: FieldError[]): FieldError[] {
  const names: Record<string, string> = { value: "origin_auth_value", header_name: "origin_auth_header" };
  return errors.map((e) => ({ ...e, field: names[e.field] ?? e.field }));
}

/**
 * The credential to send, checked: a one-off one by the origin-key rules, a
 * stored one opened now (422 naming origin_auth_secret_id when it is not this
 * account's or is revoked).
 */
export async function resolveOriginAuth(auth: OriginAuthRequest, accountId: string, originKeys: OriginKeys): Promise<OriginCredential | undefined> {
  if (auth.kind === "none") return undefined;
  if (auth.kind === "one_off") {
    assertValid(asRequestFields([...valueErrors(auth.authType, auth.value), ...headerNameErrors(auth.authType, auth.headerName)]));
    return { authType: auth.authType, headerName: auth.headerName ?? null, value: auth.value };
  }
  const credential = await originKeys.usableCredential(accountId, auth.originKeyId);
  if (!credential) assertValid([{ field: "origin_auth_secret_id", reason: "names no usable origin key of this account (unknown or revoked)" }]);
  return credential;
}
