import { create } from "@bufbuild/protobuf";
import { fulfillmentV1, originAuthTypeToProto, type OriginAuthTypeName } from "@c402/contracts";
import { invalid, type FieldError } from "@c402/problems";

/** The origin-auth fields of a body (POST /v1/mcp/tools; later relay and mcp creates). */
export interface OriginAuthFields {
  origin_auth_type?: OriginAuthTypeName | null;
  origin_auth_value?: string | null;
  origin_auth_header?: string | null;
  origin_auth_secret_id?: string | null;
}

/**
 * The fields as the contract's OriginAuth: a stored origin key, or a one-off
 * credential (type and value, and the header for api_key and custom), or
 * none. A mix of the two, or half a one-off credential, is 422 naming the
 * fields; the fulfillment service checks the credential itself.
 */
export function originAuthOf(body: OriginAuthFields): fulfillmentV1.OriginAuth | undefined {
  const type = body.origin_auth_type ?? undefined;
  const value = body.origin_auth_value ?? undefined;
  const header = body.origin_auth_header ?? undefined;
  const secretId = body.origin_auth_secret_id ?? undefined;
  const errors: FieldError[] = [];
  if (secretId !== undefined) {
    for (const [field, v] of [
      ["origin_auth_type", type],
      ["origin_auth_value", value],
      ["origin_auth_header", header],
    ] as const) {
      if (v !== undefined) errors.push({ field, reason: "cannot be sent with origin_auth_secret_id (the origin key holds the credential)" });
    }
    if (errors.length > 0) throw invalid(errors);
    return create(fulfillmentV1.OriginAuthSchema, { source: { case: "originKeyId", value: secretId } });
  }
  if (type === undefined && value === undefined && header === undefined) return undefined;
  if (type === undefined) errors.push({ field: "origin_auth_type", reason: "is required with origin_auth_value or origin_auth_header" });
  if (value === undefined) errors.push({ field: "origin_auth_value", reason: "is required with origin_auth_type" });
  if (errors.length > 0 || type === undefined || value === undefined) throw invalid(errors);
  return create(fulfillmentV1.OriginAuthSchema, {
    source: { case: "oneOff", value: { authType: originAuthTypeToProto(type), value, ...(header !== undefined ? { headerName: header } : {}) } },
  });
}
