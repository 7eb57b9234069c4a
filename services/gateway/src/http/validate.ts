import { invalid, type FieldError } from "@c402/problems";
import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import { schemas, type BodyOf, type SchemaName } from "./request-schemas";

const ajv = new Ajv({ allErrors: true, strict: false });
// The shape only (one @, no spaces but around it): identity normalises and checks the address itself.
ajv.addFormat("email", /^\s*[^\s@]+@[^\s@]+\s*$/);
for (const [name, schema] of Object.entries(schemas)) ajv.addSchema(schema, name);

/** The validator of a body's schema (ajv compiles it on first use): a type guard for the body type derived from that schema. */
function validatorOf<N extends SchemaName>(name: N): ValidateFunction<BodyOf<N>> {
  const validate = ajv.getSchema<BodyOf<N>>(name);
  if (!validate) throw new Error(`no request schema named ${name}`);
  return validate;
}

function fieldOf(e: ErrorObject): string {
  const path = e.instancePath.replace(/^\//, "").replace(/\//g, ".");
  if (e.keyword === "additionalProperties") return [path, e.params.additionalProperty].filter(Boolean).join(".");
  if (e.keyword === "required") return [path, e.params.missingProperty].filter(Boolean).join(".");
  return path || "(body)";
}

function reasonOf(e: ErrorObject): string {
  if (e.keyword === "additionalProperties") return "is not a known field";
  if (e.keyword === "required") return "is required";
  if (e.keyword === "anyOf") return "has the wrong type";
  return e.message ?? "is invalid";
}

/** ajv's errors as one line per field and reason. */
function fieldErrorsOf(errors: readonly ErrorObject[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  const under = (o: ErrorObject, path: string) => o.instancePath === path || o.instancePath.startsWith(`${path}/`);
  // What a failed branch of a nullable field says beyond "not the right type" (a bound, an unknown nested field).
  const informative = (anyOf: ErrorObject) =>
    errors.some(
      (o) => o !== anyOf && o.keyword !== "anyOf" && under(o, anyOf.instancePath) && !(o.keyword === "type" && o.instancePath === anyOf.instancePath),
    );
  for (const e of errors) {
    // A nullable field (anyOf [T, null]) fails in every branch: report what the T branch said, else one "wrong type".
    if (e.keyword === "anyOf" && informative(e)) continue;
    if (e.keyword === "type" && errors.some((o) => o.keyword === "anyOf" && o.instancePath === e.instancePath)) continue;
    const fe = { field: fieldOf(e), reason: reasonOf(e) };
    const k = `${fe.field}\u0000${fe.reason}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push(fe);
    }
  }
  return out;
}

/**
 * Validates a JSON body against its schema and answers it typed as that
 * schema says; throws a 422 listing every field error (`extraErrors`, found
 * by the caller, first).
 */
export function validateBody<N extends SchemaName>(name: N, body: unknown, extraErrors: FieldError[] = []): BodyOf<N> {
  const validate = validatorOf(name);
  const value = body === undefined ? {} : body;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid([{ field: "(body)", reason: "must be a JSON object" }]);
  if (validate(value) && extraErrors.length === 0) return value;
  throw invalid([...extraErrors, ...fieldErrorsOf(validate.errors ?? [])]);
}

/** Why a field the spec names is refused: its feature is not built on this deployment yet. */
export const NOT_AVAILABLE_YET = "is part of the spec but not available on this deployment yet";

/**
 * validateBody for a body whose schema leaves out fields the spec names but
 * this route refuses: each one sent is refused by name with `reason` (422),
 * not as an unknown field. The reason defaults to NOT_AVAILABLE_YET (a
 * feature not built on this deployment); a PATCH names fields fixed at create.
 */
export function validateBodyWithholding<N extends SchemaName>(name: N, raw: unknown, fields: readonly string[], reason = NOT_AVAILABLE_YET): BodyOf<N> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return validateBody(name, raw);
  const withheld = new Set(fields);
  const errors = fields.filter((field) => field in raw).map((field) => ({ field, reason }));
  return validateBody(name, Object.fromEntries(Object.entries(raw).filter(([k]) => !withheld.has(k))), errors);
}

/**
 * Validates a JSON object against a schema that is not a REST body's (an MCP
 * tool's arguments), compiled once under `id`, with the same rules and the
 * same 422 as validateBody.
 */
export function validateObject<T>(id: string, schema: object, value: unknown): T {
  if (!ajv.getSchema(id)) ajv.addSchema(schema, id);
  const validate = ajv.getSchema(id) as ValidateFunction<T>;
  const v = value === undefined ? {} : value;
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw invalid([{ field: "(arguments)", reason: "must be a JSON object" }]);
  if (validate(v)) return v;
  throw invalid(fieldErrorsOf(validate.errors ?? []));
}
