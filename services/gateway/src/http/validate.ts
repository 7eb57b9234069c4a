import { invalid, type FieldError } from "@c402/problems";
import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import { schemas, type SchemaName } from "../domain/request-schemas";

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<SchemaName, ValidateFunction>();

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

/** Validates a JSON body against its schema; throws a 422 listing every field error. */
export function validateBody<T>(name: SchemaName, body: unknown, extraErrors: FieldError[] = []): T {
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.compile(schemas[name]);
    compiled.set(name, validate);
  }
  const value = body === undefined ? {} : body;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid([{ field: "(body)", reason: "must be a JSON object" }]);
  const ok = validate(value);
  const errors: FieldError[] = [...extraErrors];
  if (!ok) {
    const seen = new Set<string>();
    for (const e of validate.errors ?? []) {
      // anyOf reports each branch; one line per field is enough.
      if (e.instancePath && e.keyword !== "anyOf" && (validate.errors ?? []).some((o) => o.keyword === "anyOf" && o.instancePath === e.instancePath)) continue;
      const fe = { field: fieldOf(e), reason: reasonOf(e) };
      const k = `${fe.field}\u0000${fe.reason}`;
      if (!seen.has(k)) {
        seen.add(k);
        errors.push(fe);
      }
    }
  }
  if (errors.length) throw invalid(errors);
  return value as T;
}
