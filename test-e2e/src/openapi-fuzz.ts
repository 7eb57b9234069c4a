/**
 * OpenAPI conformance fuzzer (G22). It reads the live /openapi.json of a
 * target on the loopback interface and, for every operation, generates
 * requests with fast-check: valid ones from the document's JSON Schemas (and
 * the request examples), and mutated ones (bodies, path parameters, query
 * values, headers). Every answer is checked against the document:
 *
 * - never a 5xx, never a hang or a dropped connection;
 * - the status is documented for the operation, or allowed by a global rule
 *   (400 anywhere; 413 and 415 where a body was sent; 431 anywhere; 405 with
 *   `Allow` for a wrong method; 404 for an unknown path);
 * - the Content-Type is one documented for that status, and the body
 *   validates (ajv) against its schema; documented required headers are there;
 * - a request that is certainly invalid (a body the schema refuses, a non-JSON
 *   media type, a corrupt or unsupported encoding, no or a bad credential, an id
 *   that does not exist...) is refused with a 4xx.
 *
 * Failures are collected, not stopped at: each distinct one (operation, rule,
 * mutation) is kept with its smallest request and fast-check's seed and path,
 * which replay it (`C402_FUZZ_SEED`, `C402_FUZZ_PATH`, `C402_FUZZ_ONLY`).
 */
import { request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import fc from "fast-check";

// ---- Loopback only ----------------------------------------------------------

/** The fuzzer never talks to anything but the loopback interface. */
export function loopbackTarget(baseUrl: string): { host: string; port: number } {
  const u = new URL(baseUrl);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  const ok = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === "::1";
  if (!ok || u.protocol !== "http:") throw new Error(`refusing to fuzz ${baseUrl}: only http://127.0.0.0/8 or [::1] targets`);
  return { host, port: Number(u.port || 80) };
}

// ---- HTTP -------------------------------------------------------------------

export interface HttpRequest {
  method: string;
  /** Sent exactly as is (already percent-encoded, or deliberately not). */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface HttpResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  text: string;
  ms: number;
}

const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** One request on a fresh connection (node:http, so paths and headers go out exactly as built). */
export function send(baseUrl: string, req: HttpRequest, opts: { timeoutMs?: number; localAddress?: string } = {}): Promise<HttpResponse> {
  const { host, port } = loopbackTarget(baseUrl);
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (fn: () => void) => {
      if (!settled) {
        settled = true;
        fn();
      }
    };
    const headers: Record<string, string> = { connection: "close", ...req.headers };
    if (req.body !== undefined) headers["content-length"] = String(req.body.length);
    const local = opts.localAddress ? { localAddress: opts.localAddress } : {};
    const chunks: Buffer[] = [];
    let answered: { status: number; headers: Record<string, string> } | undefined;
    const r = httpRequest({ host, port, method: req.method, path: req.path, headers, agent: false, setHost: true, ...local }, (res) => {
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= MAX_RESPONSE_BYTES) chunks.push(c);
      });
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
      answered = { status: res.statusCode ?? 0, headers: h };
      const finish = () => done(() => resolve({ ...answered!, text: Buffer.concat(chunks).toString("utf8"), ms: Date.now() - started }));
      res.on("error", finish);
      res.on("end", finish);
    });
    r.setTimeout(timeoutMs, () => {
      r.destroy(new Error(`no answer within ${timeoutMs} ms`));
    });
    // The server may answer (413, 431) and close before reading the whole body: an answer that arrived still counts.
    r.on("error", (err) =>
      done(() => (answered ? resolve({ ...answered, text: Buffer.concat(chunks).toString("utf8"), ms: Date.now() - started }) : reject(err))),
    );
    if (req.body !== undefined) r.end(req.body);
    else r.end();
  });
}

// ---- The document -------------------------------------------------------------

export type Schema = Record<string, any>;
export type Doc = Record<string, any>;

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
export type Scope = "read_only" | "payments" | "full";
const SCOPE_RANK: Record<Scope, number> = { read_only: 1, payments: 2, full: 3 };

export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: Schema;
}

export interface DocumentedResponse {
  /** JSON pointer (in the document) of the response object, for schema validation. */
  pointer: string;
  description: string;
  headers: Record<string, { required: boolean; schema?: Schema }>;
  /** Media type → has a schema; undefined when the response has no body. */
  content?: Record<string, { schema?: Schema }>;
}

export interface Operation {
  /** "POST /v1/checkouts" */
  id: string;
  method: string;
  template: string;
  parameters: Parameter[];
  body?: { pointer: string; schema: Schema; example?: unknown; required: boolean };
  responses: Record<string, DocumentedResponse>;
  minimumScope?: Scope;
  secured: boolean;
}

const escapePointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

export function resolvePointer(doc: Doc, ref: string): any {
  if (!ref.startsWith("#/")) throw new Error(`only local $refs are supported: ${ref}`);
  let node: any = doc;
  for (const part of ref.slice(2).split("/")) {
    node = node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
  }
  return node;
}

/** A non-schema object that may be a `$ref` (responses, parameters, headers): the object and its pointer. */
function deref(doc: Doc, node: any, pointer: string): { node: any; pointer: string } {
  let seen = 0;
  while (node && typeof node.$ref === "string") {
    if (++seen > 10) throw new Error(`$ref loop at ${pointer}`);
    pointer = node.$ref.slice(1);
    node = resolvePointer(doc, node.$ref);
  }
  return { node, pointer };
}

export function operationsOf(doc: Doc): Operation[] {
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const base = `/paths/${escapePointer(template)}/${method}`;
      const parameters: Parameter[] = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => {
        const { node } = deref(doc, p, "");
        return { name: node.name, in: node.in, required: Boolean(node.required), schema: node.schema ?? {} };
      });
      const responses: Record<string, DocumentedResponse> = {};
      for (const [status, r] of Object.entries<any>(op.responses ?? {})) {
        const { node, pointer } = deref(doc, r, `${base}/responses/${status}`);
        const headers: DocumentedResponse["headers"] = {};
        for (const [name, h] of Object.entries<any>(node.headers ?? {})) {
          const d = deref(doc, h, "").node;
          headers[name.toLowerCase()] = { required: Boolean(d.required), schema: d.schema };
        }
        responses[status] = { pointer, description: node.description, headers, ...(node.content ? { content: node.content } : {}) };
      }
      let body: Operation["body"];
      if (op.requestBody) {
        const { node, pointer } = deref(doc, op.requestBody, `${base}/requestBody`);
        const media = node.content?.["application/json"];
        if (media) {
          body = {
            pointer: `${pointer}/content/application~1json/schema`,
            schema: media.schema ?? {},
            example: media.example,
            required: Boolean(node.required),
          };
        }
      }
      const security = op.security ?? doc.security ?? [];
      ops.push({
        id: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        parameters,
        ...(body ? { body } : {}),
        responses,
        ...(op["x-minimum-scope"] ? { minimumScope: op["x-minimum-scope"] as Scope } : {}),
        secured: security.some((s: Record<string, unknown>) => Object.keys(s).length > 0),
      });
    }
  }
  return ops;
}

/** Problems with the document itself: unresolved $refs, responses without a description or a content type. */
export function documentProblems(doc: Doc): string[] {
  const problems: string[] = [];
  const walk = (node: unknown, at: string) => {
    if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${at}/${i}`));
    else if (node && typeof node === "object") {
      for (const [k, v] of Object.entries(node)) {
        if (k === "$ref" && typeof v === "string") {
          try {
            resolvePointer(doc, v);
          } catch (err) {
            problems.push(`${at}: ${(err as Error).message}`);
          }
        } else walk(v, `${at}/${escapePointer(k)}`);
      }
    }
  };
  walk(doc, "");
  if (!/^3\.1\./.test(String(doc.openapi))) problems.push(`openapi is ${doc.openapi}, not 3.1.x`);
  for (const op of operationsOf(doc)) {
    if (Object.keys(op.responses).length === 0) problems.push(`${op.id}: no responses`);
    for (const [status, r] of Object.entries(op.responses)) {
      if (!r.description) problems.push(`${op.id} ${status}: no description`);
      if (!/^[1-5][0-9][0-9]$/.test(status)) problems.push(`${op.id}: response key ${status} is not a status code`);
      if (status !== "204" && status !== "303" && !r.content) problems.push(`${op.id} ${status}: no content type documented`);
      for (const [media, m] of Object.entries(r.content ?? {})) {
        if (!m.schema) problems.push(`${op.id} ${status} ${media}: no schema`);
        if (media.includes("json") && JSON.stringify(m.schema) === JSON.stringify({ type: "object" })) {
          problems.push(`${op.id} ${status} ${media}: the schema is a bare {type: object}`);
        }
      }
    }
    for (const p of op.parameters)
      if (p.in === "path" && !op.template.includes(`{${p.name}}`)) problems.push(`${op.id}: path parameter ${p.name} not in the path`);
    for (const m of op.template.matchAll(/\{([^}]+)\}/g)) {
      if (!op.parameters.some((p) => p.in === "path" && p.name === m[1])) problems.push(`${op.id}: {${m[1]}} is not declared`);
    }
  }
  return problems;
}

// ---- Validation (ajv, from the gateway's own dependency: no new package) ---------

interface AjvLike {
  addSchema(schema: object, key: string): unknown;
  addFormat(name: string, format: RegExp): unknown;
  compile(schema: object): ValidateFn;
}
export type ValidateFn = ((data: unknown) => boolean) & { errors?: { instancePath: string; keyword: string; message?: string; params?: unknown }[] | null };

const root = join(__dirname, "../..");
const ajvRequire = createRequire(join(root, "services/gateway/package.json"));

/** ajv for JSON Schema 2020-12 (OpenAPI 3.1), with the formats the document uses. */
function newAjv(): AjvLike {
  const Ajv2020 = ajvRequire("ajv/dist/2020").default as new (opts: object) => AjvLike;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  ajv.addFormat("date-time", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  ajv.addFormat("uri", /^[a-z][a-z0-9+.-]*:[^\s]*$/i);
  ajv.addFormat("email", /^\s*[^\s@]+@[^\s@]+\s*$/);
  return ajv;
}

export class Validator {
  private readonly ajv: AjvLike;
  private readonly cache = new Map<string, ValidateFn>();

  constructor(doc: Doc) {
    this.ajv = newAjv();
    this.ajv.addSchema(doc, "openapi.json");
  }

  /** The validator of the schema at `pointer` in the document. */
  at(pointer: string): ValidateFn {
    let v = this.cache.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `openapi.json#${pointer}` });
      this.cache.set(pointer, v);
    }
    return v;
  }

  /** "" when valid, else the first few errors. */
  errors(pointer: string, value: unknown): string {
    const v = this.at(pointer);
    if (v(value)) return "";
    return (v.errors ?? [])
      .filter((e) => e.keyword !== "anyOf" && e.keyword !== "allOf")
      .slice(0, 4)
      .map((e) => `${e.instancePath || "(root)"} ${e.message ?? e.keyword}${e.keyword === "additionalProperties" ? ` (${JSON.stringify(e.params)})` : ""}`)
      .join("; ");
  }
}

// ---- JSON Schema → fast-check ----------------------------------------------------

/**
 * Valid values for the subset of JSON Schema the document uses: $ref, const,
 * enum, anyOf/oneOf, allOf (objects), type (and type arrays for nullability),
 * pattern (fc.stringMatching), min/maxLength, format date-time, minimum/maximum,
 * items/minItems/maxItems, properties/required/additionalProperties.
 */
export function arbitraryOf(schema: Schema, doc: Doc, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 8) return fc.constant(null);
  if (typeof schema.$ref === "string") return arbitraryOf({ ...resolvePointer(doc, schema.$ref), ...withoutKeys(schema, ["$ref"]) }, doc, depth + 1);
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) {
    const rest = withoutKeys(schema, ["anyOf", "oneOf", "description"]);
    return fc.oneof(...branches.map((b: Schema) => arbitraryOf({ ...rest, ...b }, doc, depth + 1)));
  }
  if (Array.isArray(schema.allOf)) return arbitraryOf(mergeAllOf(schema, doc), doc, depth + 1);
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((t: string) => arbitraryOf({ ...schema, type: t }, doc, depth)));
  switch (schema.type) {
    case "string":
      return stringOf(schema);
    case "integer":
      return fc.integer({ min: Math.max(schema.minimum ?? -1_000_000, -(2 ** 31)), max: Math.min(schema.maximum ?? 1_000_000, 2 ** 31) });
    case "number":
      return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(schema.items ? arbitraryOf(schema.items, doc, depth + 1) : smallJson, {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case "object":
      return objectOf(schema, doc, depth);
    default:
      return schema.properties ? objectOf(schema, doc, depth) : smallJson;
  }
}

const smallJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 });

function withoutKeys(o: Schema, keys: string[]): Schema {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
}

function mergeAllOf(schema: Schema, doc: Doc): Schema {
  const parts = (schema.allOf as Schema[]).map((p) => (p.$ref ? resolvePointer(doc, p.$ref) : p));
  return {
    ...withoutKeys(schema, ["allOf"]),
    type: "object",
    properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
    required: parts.flatMap((p) => p.required ?? []),
  };
}

function stringOf(schema: Schema): fc.Arbitrary<string> {
  const min: number = schema.minLength ?? 0;
  const max: number | undefined = schema.maxLength;
  // JSON Schema counts code points; only explicit bounds filter (a filter that never passes would hang fast-check).
  const fits = (s: string) => [...s].length >= min && (max === undefined || [...s].length <= max);
  if (typeof schema.pattern === "string") {
    const matching = fc.stringMatching(new RegExp(schema.pattern));
    return schema.minLength === undefined && max === undefined ? matching : matching.filter(fits);
  }
  if (schema.format === "date-time")
    return fc.date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true }).map((d) => d.toISOString());
  const capped = Math.min(max ?? 40, Math.max(min, 40));
  return fc
    .oneof(
      fc.string({ minLength: min, maxLength: capped }),
      fc.string({ unit: "grapheme", minLength: min, maxLength: capped }).map((s) => [...s].slice(0, capped).join("")),
    )
    .filter(fits);
}

function objectOf(schema: Schema, doc: Doc, depth: number): fc.Arbitrary<unknown> {
  const props: Record<string, Schema> = schema.properties ?? {};
  const keys = Object.keys(props);
  if (keys.length === 0) {
    const values = typeof schema.additionalProperties === "object" ? arbitraryOf(schema.additionalProperties, doc, depth + 1) : smallJson;
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), values, { maxKeys: 4 });
  }
  const model = Object.fromEntries(keys.map((k) => [k, arbitraryOf(props[k]!, doc, depth + 1)]));
  return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k: string) => k in props) });
}

/**
 * Valid values near the documented example: each property kept from the
 * example or drawn from its schema, optional ones sometimes left out.
 */
export function nearExample(example: unknown, schema: Schema, doc: Doc): fc.Arbitrary<unknown> {
  const resolved = schema.$ref ? resolvePointer(doc, schema.$ref) : schema;
  if (!isPlainObject(example) || !resolved.properties) return fc.constant(example);
  const props: Record<string, Schema> = resolved.properties;
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const k of new Set([...Object.keys(example), ...Object.keys(props)])) {
    const generated = props[k] ? arbitraryOf(props[k], doc, 1) : fc.constant((example as Record<string, unknown>)[k]);
    model[k] =
      k in example ? fc.oneof({ weight: 8, arbitrary: fc.constant((example as Record<string, unknown>)[k]) }, { weight: 1, arbitrary: generated }) : generated;
  }
  return fc.record(model, { requiredKeys: resolved.required ?? [] });
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

// ---- JSON text with raw tokens ------------------------------------------------------

/** A JSON fragment written as is (deep nesting, -0, 1e400...). */
export class Raw {
  constructor(readonly text: string) {}
  toJSON(): string {
    return `<raw ${this.text.length} chars>`;
  }
}

export function jsonText(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(",")}]`;
  if (isPlainObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function deepNesting(depth: number, kind: "array" | "object"): Raw {
  return kind === "array" ? new Raw(`${"[".repeat(depth)}1${"]".repeat(depth)}`) : new Raw(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
}

const UINT256_OVERFLOW = (2n ** 256n).toString();

/**
 * Values that are wrong, extreme or hostile in some way, one of each kind:
 * the sweep sends each to every field, the properties draw from all of them.
 */
export const SWEEP_VALUES: readonly unknown[] = [
  null,
  true,
  -1,
  new Raw("-0"),
  new Raw("1e20"),
  new Raw("1e400"),
  1.5,
  "",
  "not an address",
  "0x1234",
  "a\u0000b",
  "9".repeat(78),
  UINT256_OVERFLOW,
  "x".repeat(70_000),
  deepNesting(3_000, "object"),
  [],
  {},
  new Raw('{"__proto__":{"polluted":true}}'),
];

/** Path segments the sweep puts in every path parameter, as written on the wire (percent-escapes raw, Latin-1 bytes unescaped). */
export const PATH_SWEEP: readonly string[] = [
  "%00",
  "%ZZ",
  "%",
  "%C3%28",
  "%F0%9F%98%80",
  "%2e%2e",
  "a%2Fb",
  "%20",
  "\u00e9t\u00e9",
  "x".repeat(300),
  "__proto__",
  "-1",
];

export const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, [], {}, [1, "a", null], { a: { b: [] } }),
  fc.constantFrom<unknown>(0, -1, 1.5, 2 ** 53 + 2, 1e20, -1e20, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.constantFrom("-0", "1e20", "1e400", "-1e-400", "1E+2", "123456789012345678901234567890", "0.1e-7").map((t) => new Raw(t)),
  fc.constantFrom("", " ", "0x", "0xZZ", "-1", "1e20", "NaN", "9".repeat(78), UINT256_OVERFLOW, "0x" + "f".repeat(64), "\u202e\u200b"),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ maxLength: 10 }).map((s) => `${s}\u0000${s}`),
  fc.constantFrom(1_000, 70_000, 600_000).map((n) => "x".repeat(n)),
  fc.tuple(fc.integer({ min: 1, max: 5_000 }), fc.constantFrom<"array" | "object">("array", "object")).map(([d, k]) => deepNesting(d, k)),
  fc.constant(new Raw('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}')),
);

/** Every path to a value inside `value` (objects and arrays), depth-first, up to `maxDepth`. */
function pathsIn(value: unknown, maxDepth = 6, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (at.length >= maxDepth) return out;
  if (Array.isArray(value)) value.forEach((v, i) => out.push([...at, i], ...pathsIn(v, maxDepth, [...at, i])));
  else if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) out.push([...at, k], ...pathsIn(v, maxDepth, [...at, k]));
  return out;
}

function setAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? setAt(v, rest, replacement) : v));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === head ? setAt(v, rest, replacement) : v]));
  return value;
}

/**
 * The examples use 0x…dEaD as a placeholder wallet (payer, payee). Services
 * limit requests per payer and per client address, so each sweep case gets
 * its own placeholder and its own (documentation-range) client address:
 * otherwise the sweep would mostly test the rate limiter.
 */
function freshPlaceholders(value: unknown, n: number): unknown {
  // Lower case: a mixed-case address must carry its EIP-55 checksum.
  if (typeof value === "string") return /^0x0{36}dead$/i.test(value) ? `0x${(n + 1).toString(16).padStart(36, "0")}dead` : value;
  if (Array.isArray(value)) return value.map((v) => freshPlaceholders(v, n));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, freshPlaceholders(v, n)]));
  return value;
}

const clientAddress = (n: number) => `198.18.${(n >> 8) & 255}.${n & 255}`;

/** setAt, adding the last key when the object lacks it. */
function setAtOrAdd(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 1 && isPlainObject(value)) return { ...value, [path[0]!]: replacement };
  return setAt(value, path, replacement);
}

function deleteAt(value: Record<string, unknown>, key: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));
}

// ---- Requests ----------------------------------------------------------------------

export interface Fixtures {
  /** Valid keys (at least one of each scope). */
  keys: { scope: Scope; secret: string; mode: "test" | "live" }[];
  /** A revoked key. */
  revokedKey?: string;
  /** Existing values of path parameters, by name or by "<operation id> <name>" (ids that exist, facilitator families...). */
  params: Record<string, string[]>;
  /** Valid values of query parameters beyond their schema (a real `cursor`). */
  query: Record<string, string[]>;
  /**
   * Query parameters whose fixture values stand in for a payment (a gated
   * article's pass, `grant`): a request carrying one is judged on it, as a
   * paid request is, and may ignore query values it does not use.
   */
  passQuery?: string[];
  /** Valid payments that may be presented again (redelivery): the face and the header. */
  payments: { template: string; params: Record<string, string>; header: string }[];
}

/** A request before it is written: mutations edit it, then it becomes bytes. */
interface Draft {
  /** Decoded values, percent-encoded when written, unless listed in rawParams. */
  params: Record<string, string>;
  rawParams: Record<string, string>;
  query: [string, string][];
  rawQuery?: string;
  headers: Record<string, string>;
  body?: { value: unknown } | { text: string } | { bytes: Buffer };
  /** How the body is encoded on the wire. */
  encoding?: { header: string; payload: "gzip" | "garbage" };
  mutation: string;
  /** The request is certainly invalid: anything but a 4xx is a failure. */
  mustReject: boolean;
}

export interface FuzzCase {
  op: Operation;
  req: HttpRequest;
  mutation: string;
  mustReject: boolean;
  /** Only for the global rules: a wrong method, an unrouted path. */
  probe?: "wrong-method" | "unrouted";
}

/** Largest request body the service accepts (MAX_BODY_BYTES of the gateway). */
export const MAX_BODY_BYTES = 512 * 1024;

const FORWARDED_FOR = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 254 })).map(([a, b]) => `198.51.${a}.${b}`) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 0xffff }).map((n) => `2001:db8::${n.toString(16)}`) },
  { weight: 1, arbitrary: fc.constantFrom("garbage", "203.0.113.7, 10.0.0.1", "::::", "999.999.999.999", "unknown") },
);

const ACCEPT = fc.constantFrom<string | undefined>(
  "application/json",
  "application/json",
  "*/*",
  "text/html",
  "text/html,application/xhtml+xml",
  undefined,
  "image/svg+xml",
  "application/xml",
);

export class RequestFactory {
  constructor(
    private readonly doc: Doc,
    private readonly validator: Validator,
    private readonly fixtures: Fixtures,
  ) {}

  /** Valid requests to `op`: documented parameters, a valid body, a key with enough scope. */
  valid(op: Operation): fc.Arbitrary<FuzzCase> {
    return this.validDraft(op).map((d) => this.write(op, d));
  }

  /** Requests to `op` with one thing wrong (or hostile). */
  mutated(op: Operation): fc.Arbitrary<FuzzCase> {
    const kinds: fc.WeightedArbitrary<Draft>[] = [{ weight: 2, arbitrary: this.headerMutation(op) }];
    if (op.parameters.some((p) => p.in === "path")) kinds.push({ weight: 4, arbitrary: this.pathMutation(op) });
    if (op.body) kinds.push({ weight: 8, arbitrary: this.bodyMutation(op) }, { weight: 3, arbitrary: this.mediaMutation(op) });
    if (op.parameters.some((p) => p.in === "query")) kinds.push({ weight: 3, arbitrary: this.queryMutation(op) });
    if (op.secured) kinds.push({ weight: 2, arbitrary: this.authMutation(op) });
    if (op.parameters.some((p) => p.in === "header" && /payment/i.test(p.name))) kinds.push({ weight: 5, arbitrary: this.paymentMutation(op) });
    return fc.oneof(...kinds).map((d) => this.write(op, d));
  }

  /**
   * The sweep: the documented example body (or a paid payment, for a face)
   * with one field replaced by each of SWEEP_VALUES, for every field at any
   * depth. Deterministic, so a rare field x value pair is never left to chance.
   */
  sweep(op: Operation): FuzzCase[] {
    const cases: FuzzCase[] = [];
    const base = this.baseDraft(op);
    if (op.body?.example !== undefined && isPlainObject(op.body.example)) {
      const schema = op.body.schema.$ref ? resolvePointer(this.doc, op.body.schema.$ref) : op.body.schema;
      const example = op.body.example;
      const missing = Object.keys(schema.properties ?? {}).filter((k) => !(k in example));
      const paths = [...pathsIn(example, 4), ...missing.map((k) => [k])];
      for (const path of paths) {
        for (const w of SWEEP_VALUES) {
          const text = jsonText(setAtOrAdd(freshPlaceholders(example, cases.length), path, w));
          cases.push(
            this.write(op, {
              ...base,
              headers: { ...base.headers, "x-forwarded-for": clientAddress(cases.length) },
              body: { text },
              mutation: `sweep: ${path.join(".")} = ${describeValue(w)}`,
              mustReject: this.bodyMustBeRefused(op, text),
            }),
          );
        }
      }
    }
    for (const p of op.parameters.filter((q) => q.in === "path")) {
      for (const raw of PATH_SWEEP) {
        cases.push(
          this.write(op, { ...base, rawParams: { [p.name]: raw }, mutation: `sweep: path parameter ${p.name} = ${describeValue(raw)}`, mustReject: true }),
        );
      }
    }
    for (const p of this.fixtures.payments.filter((f) => f.template === op.template)) {
      const payment = JSON.parse(Buffer.from(p.header, "base64").toString("utf8")) as unknown;
      for (const path of pathsIn(payment, 4)) {
        for (const w of SWEEP_VALUES) {
          const header = Buffer.from(jsonText(setAt(payment, path, w))).toString("base64");
          const d: Draft = {
            ...base,
            params: { ...base.params, ...p.params },
            headers: { ...base.headers, "payment-signature": header, "x-forwarded-for": clientAddress(cases.length) },
          };
          cases.push(this.write(op, { ...d, mutation: `sweep: payment ${path.join(".")} = ${describeValue(w)}`, mustReject: false }));
        }
      }
    }
    return cases;
  }

  /** A request that should succeed: existing ids, the example body, the strongest test key. */
  private baseDraft(op: Operation): Draft {
    const params = Object.fromEntries(op.parameters.filter((p) => p.in === "path").map((p) => [p.name, this.existing(op, p.name)[0] ?? "x"]));
    const headers: Record<string, string> = { accept: "application/json", "x-forwarded-for": "198.51.100.3" };
    if (op.secured) headers.authorization = `Bearer ${this.keysWith(op.minimumScope ?? "read_only").at(-1)}`;
    if (op.body) headers["content-type"] = "application/json";
    return { params, rawParams: {}, query: [], headers, mutation: "sweep", mustReject: false };
  }

  // -- valid parts

  private validDraft(op: Operation): fc.Arbitrary<Draft> {
    const pathParams = op.parameters.filter((p) => p.in === "path");
    const params = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, this.validParam(op, p)]))) as fc.Arbitrary<Record<string, string>>;
    const query = fc.tuple(
      ...op.parameters
        .filter((p) => p.in === "query")
        .map((p) => fc.option(this.validQuery(p), { nil: undefined, freq: 2 }).map((v) => (v === undefined ? undefined : ([p.name, v] as [string, string])))),
    );
    const headerParams = op.parameters.filter((p) => p.in === "header" && !/payment/i.test(p.name));
    const headers = fc.tuple(
      ...headerParams.map((p) =>
        fc.option(
          arbitraryOf(p.schema, this.doc).map((v) => [p.name, String(v)] as [string, string]),
          { nil: undefined },
        ),
      ),
    );
    const payment = this.fixtures.payments.filter((p) => p.template === op.template);
    const paying = payment.length
      ? fc.option(fc.tuple(fc.constantFrom(...payment), fc.constantFrom("payment-signature", "x-payment")), { freq: 3, nil: undefined })
      : fc.constant(undefined);
    const key = op.secured ? fc.constantFrom(...this.keysWith(op.minimumScope ?? "read_only")) : fc.constant(undefined);
    const body = op.body ? this.validBody(op).map((value) => ({ value }) as Draft["body"]) : fc.constant(undefined);
    return fc.record({ params, query, headers, paying, key, body, xff: FORWARDED_FOR, accept: ACCEPT }).map((r) => {
      const headers: Record<string, string> = { "x-forwarded-for": r.xff };
      if (r.accept) headers.accept = r.accept;
      for (const h of r.headers) if (h) headers[h[0].toLowerCase()] = h[1];
      if (r.key) headers.authorization = `Bearer ${r.key}`;
      let params = r.params;
      if (r.paying) {
        const [p, name] = r.paying;
        params = { ...params, ...p.params };
        headers[name] = p.header;
      }
      if (r.body) headers["content-type"] = "application/json";
      return {
        params,
        rawParams: {},
        query: r.query.filter((q): q is [string, string] => q !== undefined),
        headers,
        ...(r.body ? { body: r.body } : {}),
        mutation: r.paying ? "valid (a paid payment presented again)" : "valid",
        mustReject: false,
      };
    });
  }

  /** Existing values of a path parameter: the operation's own list ("POST /v1/checkouts/{id}/go-live id"), else by name. */
  private existing(op: Operation, name: string): string[] {
    return this.fixtures.params[`${op.id} ${name}`] ?? this.fixtures.params[name] ?? [];
  }

  private keysWith(minimum: Scope): string[] {
    const keys = this.fixtures.keys.filter((k) => SCOPE_RANK[k.scope] >= SCOPE_RANK[minimum]).map((k) => k.secret);
    if (keys.length === 0) throw new Error(`no fixture key has scope ${minimum} or above`);
    return keys;
  }

  private validParam(op: Operation, p: Parameter): fc.Arbitrary<string> {
    const existing = this.existing(op, p.name);
    const fromSchema = arbitraryOf(p.schema, this.doc).map((v) => String(v) || "x");
    return existing.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...existing) }, { weight: 1, arbitrary: fromSchema }) : fromSchema;
  }

  private validQuery(p: Parameter): fc.Arbitrary<string> {
    const extra = this.fixtures.query[p.name] ?? [];
    const fromSchema = arbitraryOf(p.schema, this.doc).map(String);
    return extra.length ? fc.oneof(fc.constantFrom(...extra), fromSchema) : fromSchema;
  }

  private validBody(op: Operation): fc.Arbitrary<unknown> {
    const b = op.body!;
    const generated = arbitraryOf(b.schema, this.doc);
    const arb =
      b.example === undefined ? generated : fc.oneof({ weight: 3, arbitrary: nearExample(b.example, b.schema, this.doc) }, { weight: 1, arbitrary: generated });
    const valid = this.validator.at(b.pointer);
    // Not a filter: one the generator cannot satisfy would hang; the example is valid by construction (checked by the test).
    return fc.tuple(arb, fc.nat(1_000_000)).map(([v, n]) => freshPlaceholders(valid(v) ? v : b.example, n));
  }

  // -- mutations

  private pathMutation(op: Operation): fc.Arbitrary<Draft> {
    const names = op.parameters.filter((p) => p.in === "path").map((p) => p.name);
    if (names.length === 0) return this.headerMutation(op);
    const bad = fc.oneof(
      fc.string({ minLength: 1, maxLength: 30 }).map((v) => ({ v, raw: false })),
      fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }).map((v) => ({ v, raw: false })),
      fc.constantFrom("%ZZ", "%00", "%", "%2", "%C3%28", "%E0%A4%A", "abc%ZZdef", "%u0041", "%F0%9F%98%80").map((v) => ({ v, raw: true })),
      fc
        .constantFrom("..", ".", "%2e%2e", "a%2Fb", "~", "-", "null", "undefined", "0", "-1", "1e20", "__proto__", "constructor")
        .map((v) => ({ v, raw: true })),
      fc.constantFrom("\u00e9t\u00e9", "\u00ff\u00fe").map((v) => ({ v, raw: true })), // Latin-1 bytes on the wire, unescaped
      fc.integer({ min: 256, max: 400 }).map((n) => ({ v: "a".repeat(n), raw: false })),
      fc.constantFrom(300, 2_000, 8_000).map((n) => ({ v: `chk_${"A".repeat(n)}`, raw: false })),
      fc.stringMatching(/^(chk|pay|key|acct)_[0-9A-Za-z]{24}$/).map((v) => ({ v, raw: false })),
    );
    return fc.tuple(this.validDraft(op), fc.constantFrom(...names), bad).map(([d, name, { v, raw }]) => {
      const existing = this.existing(op, name);
      const decoded = raw ? safeDecode(v) : v;
      return {
        ...d,
        params: raw ? d.params : { ...d.params, [name]: v },
        rawParams: raw ? { ...d.rawParams, [name]: v } : d.rawParams,
        mutation: `path parameter ${name}: ${raw ? "raw " : ""}${describeValue(v)}`,
        mustReject: d.mustReject || decoded === undefined || !existing.includes(decoded),
      };
    });
  }

  private queryMutation(op: Operation): fc.Arbitrary<Draft> {
    const params = op.parameters.filter((p) => p.in === "query");
    const documents422 = "422" in op.responses;
    const bad = fc.oneof(
      fc.constantFrom("", "0", "-1", "201", "1.5", "1e2", "abc", "true", "yes", "\uff19", " 1", "0x10", "99999999999999999999", "%ZZ", "[]", "null"),
      fc.string({ maxLength: 20 }),
      fc.constantFrom(300, 5_000).map((n) => "z".repeat(n)),
    );
    return fc.tuple(this.validDraft(op), fc.constantFrom(...params), bad, fc.boolean()).map(([d, p, v, repeated]) => {
      const invalid = !schemaAccepts(this.doc, p.schema, v) && !(this.fixtures.query[p.name] ?? []).includes(v);
      const query: [string, string][] = [...d.query.filter(([n]) => n !== p.name), [p.name, v]];
      if (repeated) query.push([p.name, v]);
      const passPresented = query.some(([n, value]) => this.fixtures.passQuery?.includes(n) && this.fixtures.query[n]?.includes(value));
      return {
        ...d,
        query,
        // Percent signs go out as they are (malformed escapes included); anything else unsafe is escaped.
        ...(v.includes("%") ? { rawQuery: `${p.name}=${encodeURIComponent(v).replace(/%25/g, "%")}` } : {}),
        mutation: `query ${p.name}=${describeValue(v)}${repeated ? " (repeated)" : ""}`,
        // A paid request (or one with a pass) is judged on its payment; query values it does not use may be ignored.
        mustReject: d.mustReject || (documents422 && (invalid || repeated) && !d.mutation.includes("paid payment") && !passPresented),
      };
    });
  }

  private bodyMutation(op: Operation): fc.Arbitrary<Draft> {
    const b = op.body!;
    const schema = b.schema.$ref ? resolvePointer(this.doc, b.schema.$ref) : b.schema;
    const required: string[] = schema.required ?? [];
    const props = Object.keys(schema.properties ?? {});
    type M = { name: string; edit: (v: Record<string, unknown>) => { value: unknown } | { text: string } };
    const choices: fc.WeightedArbitrary<M>[] = [
      w(
        3,
        fc.tuple(fc.nat(), weirdValue).map(([i, x]): M => ({
          name: `nested value ${describeValue(x)}`,
          edit: (v) => {
            const paths = pathsIn(v);
            return { value: paths.length ? setAt(v, paths[i % paths.length]!, x) : x };
          },
        })),
      ),
      w(
        1,
        fc
          .tuple(fc.string({ minLength: 1, maxLength: 12 }), weirdValue)
          .map(([k, x]): M => ({ name: `unknown field ${JSON.stringify(k)}`, edit: (v) => ({ value: { ...v, [k]: x } }) })),
      ),
      w(
        2,
        fc.constantFrom<M>(
          { name: "__proto__ key", edit: (v) => ({ text: withLeadingMember(jsonText(v), '"__proto__":{"title":"x","admin":true}') }) },
          { name: "constructor.prototype key", edit: (v) => ({ text: withLeadingMember(jsonText(v), '"constructor":{"prototype":{"admin":true}}') }) },
          { name: "body is an array", edit: (v) => ({ value: [v] }) },
          { name: "body is a string", edit: () => ({ text: '"x"' }) },
          { name: "body is a number", edit: () => ({ text: "1e20" }) },
          { name: "body is null", edit: () => ({ text: "null" }) },
          { name: "body is empty", edit: () => ({ text: "" }) },
          { name: "body is whitespace", edit: () => ({ text: "   " }) },
          { name: "malformed JSON (trailing comma)", edit: (v) => ({ text: `${jsonText(v).slice(0, -1)},}` }) },
          { name: "malformed JSON (single quotes)", edit: () => ({ text: "{'title': 'x'}" }) },
          { name: "malformed JSON (unclosed)", edit: (v) => ({ text: jsonText(v).slice(0, -1) }) },
          { name: "byte-order mark", edit: (v) => ({ text: `\ufeff${jsonText(v)}` }) },
          { name: "duplicate keys", edit: (v) => ({ text: withLeadingMember(jsonText(v), `${JSON.stringify(props[0] ?? "a")}:[1,2,3]`) }) },
          { name: "deep nesting 3000 (whole body)", edit: () => ({ text: deepNesting(3000, "object").text }) },
        ),
      ),
      w(
        1,
        fc
          .integer({ min: 2, max: 40 })
          .map((n): M => ({ name: `truncated JSON`, edit: (v) => ({ text: jsonText(v).slice(0, Math.max(1, jsonText(v).length - n)) }) })),
      ),
    ];
    if (required.length)
      choices.push(
        w(
          1,
          fc.constantFrom(...required).map((k): M => ({ name: `missing required ${k}`, edit: (v) => ({ value: deleteAt(v, k) }) })),
        ),
      );
    if (props.length) {
      choices.push(
        w(
          4,
          fc
            .tuple(fc.constantFrom(...props), weirdValue)
            .map(([k, x]): M => ({ name: `${k} = ${describeValue(x)}`, edit: (v) => ({ value: { ...v, [k]: x } }) })),
        ),
        w(
          1,
          fc
            .tuple(fc.constantFrom(...props), fc.integer({ min: 1, max: 5_000 }))
            .map(([k, d]): M => ({ name: `${k} nested ${d} deep`, edit: (v) => ({ value: { ...v, [k]: deepNesting(d, d % 2 ? "array" : "object") } }) })),
        ),
        w(
          1,
          fc
            .tuple(fc.constantFrom(...props), fc.string({ maxLength: 8 }))
            .map(([k, x]): M => ({ name: `${k} with a NUL character`, edit: (v) => ({ value: { ...v, [k]: `${x}\u0000${x}` } }) })),
        ),
      );
    }
    // Mostly one thing wrong in the documented example (which the service accepts), so the mutation reaches the service's logic.
    return fc.tuple(this.validDraft(op), fc.oneof(...choices), fc.nat(2), fc.nat(1_000_000)).map(([d, m, n, k]) => {
      const drawn = d.body && "value" in d.body ? d.body.value : {};
      const value = (n < 2 && isPlainObject(b.example) ? freshPlaceholders(b.example, k) : drawn) as Record<string, unknown>;
      const edited = m.edit(isPlainObject(value) ? value : {});
      const text = "text" in edited ? edited.text : jsonText(edited.value);
      return { ...d, body: { text }, mutation: `body: ${m.name}`, mustReject: d.mustReject || this.bodyMustBeRefused(op, text) };
    });
  }

  /** True when no correct server could accept this JSON text as the operation's body. */
  private bodyMustBeRefused(op: Operation, text: string): boolean {
    if (Buffer.byteLength(text) > MAX_BODY_BYTES) return true;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // An empty body is "no body"; a BOM is tolerated by some parsers.
      return text.trim() !== "" && !text.startsWith("\ufeff");
    }
    if (!isPlainObject(parsed)) return true;
    return !this.validator.at(op.body!.pointer)(parsed);
  }

  private mediaMutation(op: Operation): fc.Arbitrary<Draft> {
    type M = { name: string; contentType?: string; encoding?: Draft["encoding"]; reject: boolean };
    const media = fc.constantFrom<M>(
      { name: "Content-Type application/json; charset=utf-8", contentType: "application/json; charset=utf-8", reject: false },
      { name: "Content-Type application/json;charset=UTF-8", contentType: "application/json;charset=UTF-8", reject: false },
      { name: "Content-Type APPLICATION/JSON", contentType: "APPLICATION/JSON", reject: false },
      { name: "Content-Type application/json; charset=iso-8859-1", contentType: "application/json; charset=iso-8859-1", reject: true },
      { name: "Content-Type application/json; charset=utf-16", contentType: "application/json; charset=utf-16", reject: true },
      { name: "Content-Type application/json; charset=latin1", contentType: "application/json; charset=latin1", reject: true },
      { name: "Content-Type text/plain", contentType: "text/plain", reject: true },
      { name: "Content-Type text/plain; charset=utf-8", contentType: "text/plain; charset=utf-8", reject: true },
      { name: "Content-Type application/x-www-form-urlencoded", contentType: "application/x-www-form-urlencoded", reject: true },
      { name: "Content-Type multipart/form-data", contentType: "multipart/form-data; boundary=xyz", reject: true },
      { name: "Content-Type application/xml", contentType: "application/xml", reject: true },
      { name: "Content-Type application/octet-stream", contentType: "application/octet-stream", reject: true },
      { name: "Content-Type application/problem+json", contentType: "application/problem+json", reject: false },
      { name: "Content-Type garbage", contentType: ";;;", reject: false },
      { name: "no Content-Type", reject: false },
      { name: "Content-Encoding gzip (valid)", contentType: "application/json", encoding: { header: "gzip", payload: "gzip" }, reject: false },
      { name: "Content-Encoding gzip, corrupt body", contentType: "application/json", encoding: { header: "gzip", payload: "garbage" }, reject: true },
      { name: "Content-Encoding deflate, corrupt body", contentType: "application/json", encoding: { header: "deflate", payload: "garbage" }, reject: true },
      { name: "Content-Encoding br, corrupt body", contentType: "application/json", encoding: { header: "br", payload: "garbage" }, reject: true },
      { name: "Content-Encoding zstd", contentType: "application/json", encoding: { header: "zstd", payload: "garbage" }, reject: true },
      { name: "Content-Encoding x-unknown", contentType: "application/json", encoding: { header: "x-unknown", payload: "garbage" }, reject: true },
      { name: "Content-Encoding gzip, gzip", contentType: "application/json", encoding: { header: "gzip, gzip", payload: "gzip" }, reject: true },
    );
    return fc.tuple(this.validDraft(op), media).map(([d, m]) => {
      const headers = { ...d.headers };
      delete headers["content-type"];
      if (m.contentType !== undefined) headers["content-type"] = m.contentType;
      return {
        ...d,
        headers,
        ...(m.encoding ? { encoding: m.encoding } : {}),
        mutation: m.name,
        mustReject: d.mustReject || m.reject,
      };
    });
  }

  private authMutation(op: Operation): fc.Arbitrary<Draft> {
    const any = this.fixtures.keys.find((k) => k.scope === "full")?.secret ?? this.fixtures.keys[0]?.secret ?? "sk_test_x";
    type A = { name: string; value?: string; reject: boolean };
    const variants: A[] = [
      { name: "no Authorization", reject: true },
      { name: "Bearer garbage", value: "Bearer garbage", reject: true },
      { name: "Bearer (empty)", value: "Bearer ", reject: true },
      { name: "Basic credentials", value: "Basic dXNlcjpwYXNz", reject: true },
      // Failures count per key prefix too: the suffixed key is the revoked one, so the keys in use stay usable.
      { name: "valid-looking key with a suffix", value: `Bearer ${this.fixtures.revokedKey ?? "sk_test_0000000000000000000000000000"}x`, reject: true },
      { name: "a live-looking unknown key", value: "Bearer sk_live_0000000000000000000000000000", reject: true },
      { name: "8 KiB token", value: `Bearer ${"a".repeat(8_000)}`, reject: true },
      { name: "lowercase bearer with a valid key", value: `bearer ${any}`, reject: false },
      { name: "two spaces after Bearer", value: `Bearer  ${any}`, reject: false },
      { name: "Bearer with a tab", value: `Bearer\t${any}`, reject: false },
    ];
    if (this.fixtures.revokedKey) variants.push({ name: "revoked key", value: `Bearer ${this.fixtures.revokedKey}`, reject: true });
    for (const { scope, mode, secret } of this.fixtures.keys) {
      variants.push({
        name: `${mode} key of scope ${scope}`,
        value: `Bearer ${secret}`,
        reject: SCOPE_RANK[scope] < SCOPE_RANK[op.minimumScope ?? "read_only"],
      });
    }
    return fc.tuple(this.validDraft(op), fc.constantFrom(...variants)).map(([d, a]) => {
      const headers = { ...d.headers };
      delete headers.authorization;
      if (a.value !== undefined) headers.authorization = a.value;
      return { ...d, headers, mutation: `auth: ${a.name}`, mustReject: d.mustReject || a.reject };
    });
  }

  private headerMutation(op: Operation): fc.Arbitrary<Draft> {
    type H = { name: string; set: Record<string, string>; reject: boolean };
    const variants = fc.oneof(
      fc.constantFrom<H>(
        { name: "Accept text/html", set: { accept: "text/html" }, reject: false },
        { name: "Accept image/svg+xml", set: { accept: "image/svg+xml" }, reject: false },
        { name: "Accept garbage", set: { accept: ";;;, q=abc" }, reject: false },
        { name: "X-Request-Id garbage", set: { "x-request-id": "\u00ff\u00fe<script>" }, reject: false },
        { name: "X-Request-Id 2000 chars", set: { "x-request-id": "r".repeat(2_000) }, reject: false },
        { name: "traceparent garbage", set: { traceparent: "00-zz-zz-zz" }, reject: false },
        { name: "X-Forwarded-For garbage", set: { "x-forwarded-for": "%ZZ, ::::, 300.1.1.1" }, reject: false },
        { name: "Idempotency-Key on any route", set: { "idempotency-key": "k" }, reject: false },
        { name: "headers over 16 KiB", set: { "x-padding": "p".repeat(17 * 1024) }, reject: true },
        { name: "Range header", set: { range: "bytes=0-10" }, reject: false },
        { name: "If-None-Match", set: { "if-none-match": '"x"' }, reject: false },
      ),
      fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.string({ unit: "binary-ascii", maxLength: 40 })).map(([n, v]) => ({
        name: `random header ${n}`,
        set: { [`x-${n}`]: v.replace(/[^\t\x20-\x7e]/g, "") },
        reject: false,
      })),
    );
    const idempotency = op.parameters.some((p) => p.name.toLowerCase() === "idempotency-key")
      ? fc.constantFrom<H>(
          { name: "Idempotency-Key empty", set: { "idempotency-key": "" }, reject: true },
          { name: "Idempotency-Key 300 chars", set: { "idempotency-key": "i".repeat(300) }, reject: true },
          { name: "Idempotency-Key with a space", set: { "idempotency-key": "a b" }, reject: true },
          { name: "Idempotency-Key Latin-1", set: { "idempotency-key": "cl\u00e9" }, reject: true },
        )
      : undefined;
    return fc.tuple(this.validDraft(op), idempotency ? fc.oneof(variants, idempotency) : variants).map(([d, h]) => ({
      ...d,
      headers: { ...d.headers, ...h.set },
      mutation: `header: ${h.name}`,
      mustReject: d.mustReject || h.reject,
    }));
  }

  private paymentMutation(op: Operation): fc.Arbitrary<Draft> {
    const valid = this.fixtures.payments.map((p) => p.header);
    const decodedValid = valid.map((h) => JSON.parse(Buffer.from(h, "base64").toString("utf8")) as Record<string, unknown>);
    const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
    const garbage = fc.oneof(
      fc
        .string({ unit: "binary-ascii", minLength: 1, maxLength: 200 })
        .map((s) => ({ name: "random text", value: s.replace(/[^\x20-\x7e]/g, "A") || "A", reject: true })),
      fc.jsonValue({ maxDepth: 3 }).map((v) => ({ name: "base64 of random JSON", value: b64(JSON.stringify(v)), reject: true })),
      fc.constantFrom(
        { name: "empty", value: "", reject: true },
        { name: "base64 of deep nesting", value: b64(deepNesting(4_000, "array").text), reject: true },
        { name: "base64 of invalid UTF-8", value: b64(Buffer.from([0xc3, 0x28, 0xa0, 0xa1])), reject: true },
        { name: "base64url alphabet", value: "eyJ4NDAyVmVyc2lvbiI6Mn0_-w", reject: true },
      ),
    );
    const mutatedReal = decodedValid.length
      ? fc.tuple(fc.constantFrom(...decodedValid), fc.nat(), weirdValue).map(([p, i, w]) => {
          const paths = pathsIn(p);
          const path = paths[i % paths.length]!;
          return { name: `paid payment with ${path.join(".")} = ${describeValue(w)}`, value: b64(jsonText(setAt(p, path, w))), reject: false };
        })
      : garbage;
    const overflow = decodedValid.length
      ? fc
          .tuple(fc.constantFrom(...decodedValid), fc.constantFrom("value", "validAfter", "validBefore"), fc.constantFrom(UINT256_OVERFLOW, "9".repeat(78)))
          .map(([p, field, n]) => ({
            name: `paid payment with authorization.${field} = ${n.length}-digit uint overflow`,
            value: b64(jsonText(setAt(p, ["payload", "authorization", field], n))),
            reject: false,
          }))
      : garbage;
    return fc.tuple(this.validDraft(op), fc.oneof(garbage, mutatedReal, overflow), fc.constantFrom("payment-signature", "x-payment")).map(([d, m, name]) => {
      const headers = { ...d.headers };
      delete headers["payment-signature"];
      delete headers["x-payment"];
      headers[name] = m.value;
      return { ...d, headers, mutation: `${name}: ${m.name}`, mustReject: d.mustReject || m.reject };
    });
  }

  // -- writing

  write(op: Operation, d: Draft): FuzzCase {
    let path = op.template.replace(/\{([^}]+)\}/g, (_, name: string) => d.rawParams[name] ?? encodeURIComponent(d.params[name] ?? ""));
    const q = d.query.filter(([n]) => !(d.rawQuery && d.rawQuery.startsWith(`${n}=`))).map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`);
    if (d.rawQuery) q.push(d.rawQuery);
    if (q.length) path += `?${q.join("&")}`;
    const headers = { ...d.headers };
    let body: Buffer | undefined;
    if (d.body) {
      body = "bytes" in d.body ? d.body.bytes : Buffer.from("text" in d.body ? d.body.text : jsonText(d.body.value), "utf8");
      if (d.encoding) {
        headers["content-encoding"] = d.encoding.header;
        body = d.encoding.payload === "gzip" ? gzipSync(body) : Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, ...body.subarray(0, 64)]);
      }
    }
    const req: HttpRequest = { method: op.method, path, headers, ...(body !== undefined ? { body } : {}) };
    // How fast-check prints a counterexample: the request, not the whole operation.
    const show = () => `${op.id} (${d.mutation}${d.mustReject ? ", must be refused" : ""})\n${formatRequest(req)}`;
    return { op, req, mutation: d.mutation, mustReject: d.mustReject, [fc.toStringMethod]: show } as FuzzCase;
  }

  /** The same request with another method (for the 405 rule). */
  wrongMethod(op: Operation, method: string): FuzzCase {
    // A known path: a fixture's value, else the first a parameter's enum allows (`{chain}`: base), else any.
    const firstAllowed = (p: Parameter) => ((p.schema as { enum?: unknown[] }).enum ?? []).map(String)[0];
    const params = Object.fromEntries(
      op.parameters.filter((p) => p.in === "path").map((p) => [p.name, this.existing(op, p.name)[0] ?? firstAllowed(p) ?? "x"]),
    );
    const c = this.write(op, {
      params,
      rawParams: {},
      query: [],
      headers: { accept: "application/json", "x-forwarded-for": "198.51.100.1" },
      mutation: "",
      mustReject: true,
    });
    return { ...c, req: { ...c.req, method }, mutation: `wrong method ${method}`, probe: "wrong-method" };
  }
}

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>): fc.WeightedArbitrary<T> => ({ weight, arbitrary });

function withLeadingMember(text: string, member: string): string {
  if (!text.startsWith("{")) return text;
  return text === "{}" ? `{${member}}` : `{${member},${text.slice(1)}`;
}

function safeDecode(v: string): string | undefined {
  try {
    return decodeURIComponent(v);
  } catch {
    return undefined;
  }
}

/** Whether a query value (a string) is acceptable for the parameter's schema (integers and booleans coerced). */
function schemaAccepts(doc: Doc, schema: Schema, value: string): boolean {
  const s = schema.$ref ? resolvePointer(doc, schema.$ref) : schema;
  let v: unknown = value;
  if (s.type === "integer" || s.type === "number") v = /^-?[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : value;
  if (s.type === "boolean") v = value === "true" ? true : value === "false" ? false : value;
  return compileLoose(s)(v);
}

const looseCache = new WeakMap<Schema, ValidateFn>();
let looseAjv: AjvLike | undefined;
function compileLoose(schema: Schema): ValidateFn {
  let v = looseCache.get(schema);
  if (!v) {
    looseAjv ??= newAjv();
    v = looseAjv.compile(schema);
    looseCache.set(schema, v);
  }
  return v;
}

export function describeValue(v: unknown): string {
  if (v instanceof Raw) return v.text.length > 40 ? `${v.text.slice(0, 12)}…(${v.text.length} chars)` : v.text;
  if (typeof v === "string") return v.length > 40 ? `"${v.slice(0, 12).replaceAll("\u0000", "\\u0000")}…" (${v.length} chars)` : JSON.stringify(v);
  const t = JSON.stringify(v) ?? String(v);
  return t.length > 40 ? `${t.slice(0, 30)}…` : t;
}

// ---- Checking answers ---------------------------------------------------------------

/** Responses every operation may give, by the global rules (see openapi.ts). */
function globalRule(c: FuzzCase, status: number): string | undefined {
  if (status === 400) return "BadRequest";
  if (status === 431) return "HeadersTooLarge";
  if ((status === 413 || status === 415) && c.req.body !== undefined) return status === 413 ? "PayloadTooLarge" : "UnsupportedMediaType";
  if (status === 405 && c.probe === "wrong-method") return "MethodNotAllowed";
  if (status === 404 && c.probe === "unrouted") return "NotFound";
  return undefined;
}

/** A 502 problem document of type upstream-failed: the seller's server failed, not this service. */
function isUpstreamFailure(res: HttpResponse): boolean {
  try {
    return /\/problems\/upstream-failed$/.test(String((JSON.parse(res.text) as { type?: unknown }).type));
  } catch {
    return false;
  }
}

function mediaTypeOf(contentType: string | undefined): string | undefined {
  return contentType?.split(";")[0]?.trim().toLowerCase() || undefined;
}

export class Checker {
  constructor(
    private readonly doc: Doc,
    private readonly validator: Validator,
  ) {}

  /** Every rule the answer breaks (empty when it conforms). */
  violations(c: FuzzCase, res: HttpResponse): string[] {
    const v: string[] = [];
    const status = res.status;
    // A seller's server that failed is documented where an operation calls one (502 upstream-failed), not ours to fix.
    if (status >= 500 && !(status === 502 && isUpstreamFailure(res) && this.documentedResponse(c, status))) return [`server error ${status}`];
    if (c.mustReject && status < 400) v.push(`accepted (${status}) a request that must be refused`);
    if (c.probe === "wrong-method" && status !== 405) v.push(`a wrong method answered ${status}, not 405`);
    if (c.probe === "unrouted" && status !== 404 && status !== 400) v.push(`an unknown path answered ${status}, not 404`);
    const documented = this.documentedResponse(c, status);
    if (!documented) {
      v.push(`status ${status} is not documented for ${c.op.id}`);
      return v;
    }
    for (const [name, h] of Object.entries(documented.headers)) {
      const value = res.headers[name];
      if (value === undefined) {
        if (h.required) v.push(`header ${name} missing on ${status}`);
      } else if (h.schema && !compileLoose(h.schema)(value)) v.push(`header ${name}: ${JSON.stringify(value.slice(0, 80))} does not match its schema`);
    }
    if (!documented.content) {
      if (status === 204 && res.text.length > 0) v.push("a 204 with a body");
      return v;
    }
    const media = mediaTypeOf(res.headers["content-type"]);
    const documentedTypes = Object.keys(documented.content);
    if (!media || !documented.content[media]) {
      v.push(`Content-Type ${res.headers["content-type"] ?? "(none)"} is not documented for ${status} (documented: ${documentedTypes.join(", ")})`);
      return v;
    }
    if (!documented.content[media]!.schema) return v;
    let body: unknown = res.text;
    if (media.endsWith("json")) {
      try {
        body = JSON.parse(res.text);
      } catch {
        v.push(`the ${media} body is not JSON`);
        return v;
      }
    }
    const errors = this.validator.errors(`${documented.pointer}/content/${escapePointer(media)}/schema`, body);
    if (errors) v.push(`${status} ${media} body does not match its schema: ${errors}`);
    if (media === "application/problem+json" && isPlainObject(body) && body.status !== status)
      v.push(`problem status ${String(body.status)} differs from HTTP ${status}`);
    return v;
  }

  documentedResponse(c: FuzzCase, status: number): DocumentedResponse | undefined {
    const own = c.op.responses[String(status)];
    if (own) return own;
    const rule = globalRule(c, status);
    if (!rule) return undefined;
    const r = this.doc.components?.responses?.[rule];
    if (!r) throw new Error(`the document has no components.responses.${rule} (global rule)`);
    const headers: DocumentedResponse["headers"] = {};
    for (const [name, h] of Object.entries<any>(r.headers ?? {})) headers[name.toLowerCase()] = { required: Boolean(h.required), schema: h.schema };
    return { pointer: `/components/responses/${rule}`, description: r.description, headers, content: r.content };
  }
}

// ---- Running --------------------------------------------------------------------------

export interface Failure {
  operation: string;
  kind: string;
  mutation: string;
  violations: string[];
  request: HttpRequest;
  response?: HttpResponse;
  error?: string;
  seed?: number;
  path?: string;
}

export interface RunStats {
  requests: number;
  /** "POST /v1/checkouts" → "201" → count */
  statuses: Record<string, Record<string, number>>;
}

/** Failures grouped by operation, rule and mutation kind; the smallest request of each group is kept. */
export class Findings {
  readonly groups = new Map<string, { first: Failure; count: number }>();
  readonly stats: RunStats = { requests: 0, statuses: {} };

  record(c: FuzzCase, res: HttpResponse | undefined, violations: string[], where: { kind: string; seed?: number; path?: string }, error?: string): void {
    this.stats.requests++;
    const status = res ? String(res.status) : "no answer";
    const byOp = (this.stats.statuses[c.op.id] ??= {});
    byOp[status] = (byOp[status] ?? 0) + 1;
    if (violations.length === 0) return;
    for (const rule of violations) {
      const key = `${where.kind} | ${c.op.id} | ${normaliseRule(rule)} | ${mutationFamily(c.mutation)}`;
      const failure: Failure = {
        operation: c.op.id,
        kind: where.kind,
        mutation: c.mutation,
        violations,
        request: c.req,
        ...(res ? { response: res } : {}),
        ...(error ? { error } : {}),
        ...(where.seed !== undefined ? { seed: where.seed } : {}),
        ...(where.path !== undefined ? { path: where.path } : {}),
      };
      const g = this.groups.get(key);
      if (!g) this.groups.set(key, { first: failure, count: 1 });
      else {
        g.count++;
        if (requestSize(failure.request) < requestSize(g.first.request)) g.first = failure;
      }
    }
  }

  /** Distinct failures, of one kind of run (scripted, valid, mutated, wrong-method, unrouted) or all. */
  failures(kind?: string): { key: string; first: Failure; count: number }[] {
    return [...this.groups.entries()]
      .map(([key, g]) => ({ key, ...g }))
      .filter((f) => kind === undefined || f.first.kind === kind)
      .sort((a, b) => a.key.localeCompare(b.key));
  }

  report(kind?: string, limit = 60): string {
    const all = this.failures(kind);
    const lines = [`${all.length} distinct conformance failures${kind ? ` (${kind})` : ""}:`];
    for (const f of all.slice(0, limit)) lines.push("", `● ${f.key}  (×${f.count})`, formatFailure(f.first));
    if (all.length > limit) lines.push("", `… and ${all.length - limit} more`);
    return lines.join("\n");
  }

  coverage(): string {
    return Object.entries(this.stats.statuses)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([op, s]) =>
          `${op.padEnd(34)} ${Object.entries(s)
            .sort()
            .map(([k, n]) => `${k}×${n}`)
            .join(" ")}`,
      )
      .join("\n");
  }
}

function normaliseRule(rule: string): string {
  return rule
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\/\d+(?=[/\s]|$)/g, "/N")
    .slice(0, 200);
}

function mutationFamily(m: string): string {
  return m
    .replace(/ = .*$/, " = …")
    .replace(/\d+ deep/, "N deep")
    .replace(/"[^"]*"/g, '"…"')
    .replace(/: raw .*$/, ": raw")
    .replace(/(path parameter \w+): (?!raw).*$/, "$1: value")
    .replace(/(query \w+)=.*$/, "$1=…")
    .replace(/random header .*/, "random header")
    .replace(/paid payment with .*/, "paid payment mutated");
}

const requestSize = (r: HttpRequest) => r.path.length + (r.body?.length ?? 0) + JSON.stringify(r.headers).length;

export function formatRequest(r: HttpRequest): string {
  const headers = Object.entries(r.headers)
    .filter(([k]) => k !== "x-forwarded-for")
    .map(([k, v]) => `    ${k}: ${truncate(v, 120)}`);
  const body = r.body === undefined ? "" : `\n    (${r.body.length} bytes) ${truncate(printable(r.body), 300)}`;
  return `  ${r.method} ${truncate(r.path, 200)}\n${headers.join("\n")}${body}`;
}

function formatFailure(f: Failure): string {
  const res = f.response
    ? `  → ${f.response.status} ${f.response.headers["content-type"] ?? "(no content-type)"} ${truncate(f.response.text, 300)}`
    : `  → no answer: ${f.error}`;
  const replay = f.seed !== undefined ? `\n  replay: C402_FUZZ_ONLY='${f.operation}:${f.kind}' C402_FUZZ_SEED=${f.seed} C402_FUZZ_PATH=${f.path}` : "";
  return `  ${f.violations.join("\n  ")}\n  mutation: ${f.mutation}\n${formatRequest(f.request)}\n${res}${replay}`;
}

function printable(b: Buffer): string {
  const isText = !b.subarray(0, 64).some((x) => x < 9 || (x > 13 && x < 32));
  return isText ? b.toString("utf8").replaceAll("\u0000", "\\u0000") : `<binary ${b.subarray(0, 24).toString("hex")}…>`;
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);

export interface FuzzerOptions {
  baseUrl: string;
  runs: number;
  seed: number;
  fixtures: Fixtures;
  /** Operations run in parallel. */
  concurrency?: number;
  /** Only "<operation id>:<valid|mutated>" (replay). */
  only?: string;
  /** Replay one case (fast-check path) and shrink it. */
  path?: string;
}

export class Fuzzer {
  readonly ops: Operation[];
  readonly validator: Validator;
  readonly checker: Checker;
  factory: RequestFactory;
  readonly findings = new Findings();

  constructor(
    readonly doc: Doc,
    readonly options: FuzzerOptions,
  ) {
    loopbackTarget(options.baseUrl);
    this.ops = operationsOf(doc);
    this.validator = new Validator(doc);
    this.checker = new Checker(doc, this.validator);
    this.factory = new RequestFactory(doc, this.validator, options.fixtures);
  }

  /** The setup creates the fixtures through this fuzzer (so its answers are checked), then hands them over. */
  useFixtures(fixtures: Fixtures): void {
    this.options.fixtures = fixtures;
    this.factory = new RequestFactory(this.doc, this.validator, fixtures);
  }

  op(id: string): Operation {
    const op = this.ops.find((o) => o.id === id);
    if (!op) throw new Error(`the document has no operation ${id}`);
    return op;
  }

  /** Sends one case, checks the answer, records it; returns the violations. */
  async exchange(c: FuzzCase, where: { kind: string; seed?: number; path?: string }): Promise<{ res?: HttpResponse; violations: string[] }> {
    let res: HttpResponse | undefined;
    try {
      res = await this.sendFromLoopback(c.req);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      // Node refusing to write the request is the fuzzer's fault, not the service's.
      const violations = [code.startsWith("ERR_") ? `the fuzzer could not send this request (${code})` : `no answer: ${(err as Error).message}`];
      this.findings.record(c, undefined, violations, where, (err as Error).message);
      return { violations };
    }
    const violations = this.checker.violations(c, res);
    this.findings.record(c, res, violations, where);
    return { res, violations };
  }

  private sent = 0;
  private ownAddresses = true;

  /**
   * Each request leaves from its own loopback address (127.77.x.y) when the
   * system has them (Linux routes all of 127.0.0.0/8): the service limits
   * requests and failed authentications per client address, and the fuzzer
   * must neither be throttled into testing only the limiter nor leave
   * 127.0.0.1 throttled for the suite's other tests. Elsewhere (macOS has
   * only 127.0.0.1) it falls back to the default address.
   */
  private async sendFromLoopback(req: HttpRequest): Promise<HttpResponse> {
    const { host } = loopbackTarget(this.options.baseUrl);
    if (this.ownAddresses && /^127\./.test(host)) {
      const n = this.sent++;
      try {
        return await send(this.options.baseUrl, req, { localAddress: `127.77.${(n >> 8) & 255}.${n & 255 || 1}` });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EADDRNOTAVAIL") throw err;
        this.ownAddresses = false;
      }
    }
    return send(this.options.baseUrl, req);
  }

  /** One scripted request (the setup flows), checked like any other. */
  async scripted(opId: string, req: { path: string; headers?: Record<string, string>; body?: Buffer }): Promise<HttpResponse> {
    const op = this.op(opId);
    const headers = {
      accept: "application/json",
      "x-forwarded-for": "198.51.100.200",
      ...(req.body ? { "content-type": "application/json" } : {}),
      ...req.headers,
    };
    const c: FuzzCase = {
      op,
      req: { method: op.method, path: req.path, headers, ...(req.body ? { body: req.body } : {}) },
      mutation: "scripted",
      mustReject: false,
    };
    const { res, violations } = await this.exchange(c, { kind: "scripted" });
    if (!res) throw new Error(`${opId} ${req.path}: ${violations.join("; ")}`);
    return res;
  }

  /** The property of one operation: `runs` generated requests, every answer conforming. */
  async property(op: Operation, kind: "valid" | "mutated"): Promise<void> {
    const id = `${op.id}:${kind}`;
    if (this.options.only && this.options.only !== id) return;
    const arb = kind === "valid" ? this.factory.valid(op) : this.factory.mutated(op);
    const seed = (this.options.seed + hash(id)) | 0;
    const started = Date.now();
    if (process.env.C402_FUZZ_DEBUG) process.stderr.write(`fuzz: ${id} (seed ${seed})\n`);
    if (this.options.path !== undefined) {
      // Replay: fast-check regenerates the case at `path` (the same mutation; the fixtures' ids are new) and shrinks it.
      await fc.assert(
        fc.asyncProperty(arb, async (c) => {
          const { violations } = await this.exchange(c, { kind });
          if (violations.length) throw new Error(`${violations.join("; ")}\n${formatRequest(c.req)}`);
        }),
        { seed, path: this.options.path, numRuns: 1 },
      );
      return;
    }
    let run = 0;
    await fc.assert(
      fc.asyncProperty(arb, async (c) => {
        await this.exchange(c, { kind, seed: this.options.seed, path: String(run++) });
        return true;
      }),
      { seed, numRuns: this.options.runs, endOnFailure: true },
    );
    if (process.env.C402_FUZZ_DEBUG) process.stderr.write(`fuzz: ${id} done in ${Date.now() - started} ms\n`);
  }

  /** The deterministic sweep of every operation (see RequestFactory.sweep), `concurrency` requests at a time. */
  async sweep(): Promise<void> {
    if (this.options.only) return; // replaying one property
    const cases = this.ops.flatMap((op) => this.factory.sweep(op));
    let next = 0;
    await Promise.all(
      Array.from({ length: 2 * (this.options.concurrency ?? 4) }, async () => {
        while (next < cases.length) await this.exchange(cases[next++]!, { kind: "sweep" });
      }),
    );
  }

  /** A known path with a method it does not document answers 405 with Allow (global rule). */
  async wrongMethods(): Promise<void> {
    if (this.options.only) return; // replaying one property
    const byPath = new Map<string, Operation[]>();
    for (const op of this.ops) byPath.set(op.template, [...(byPath.get(op.template) ?? []), op]);
    for (const [, ops] of byPath) {
      const documented = new Set(ops.map((o) => o.method));
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"].filter((m) => !documented.has(m))) {
        const c = this.factory.wrongMethod(ops[0]!, method);
        const { res } = await this.exchange(c, { kind: "wrong-method" });
        const allow = res?.headers.allow;
        if (res?.status === 405 && allow) {
          const listed = new Set(allow.split(",").map((m) => m.trim().toUpperCase()));
          const missing = [...documented].filter((m) => !listed.has(m));
          if (missing.length) this.findings.record(c, res, [`Allow (${allow}) lacks ${missing.join(", ")}`], { kind: "wrong-method" });
          if (listed.has(method)) this.findings.record(c, res, [`Allow (${allow}) lists the refused ${method}`], { kind: "wrong-method" });
        }
      }
    }
  }

  /** Paths no operation documents answer 404 (or 400 for a malformed escape, 405 for a known path's other method). */
  async unroutedPaths(runs: number): Promise<void> {
    if (this.options.only) return; // replaying one property
    const templates = this.ops.map((o) => ({
      op: o,
      re: new RegExp(`^${o.template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}/?$`, "i"),
    }));
    const segment = fc.oneof(
      fc.constantFrom(
        "v1",
        "c",
        "r",
        "x402",
        "checkouts",
        "keys",
        "test",
        "prepare",
        "auth",
        "wallet",
        "health",
        "docs",
        "admin",
        "v2",
        "..",
        "%2e%2e",
        "%ZZ",
        "chk_AAAAAAAAAAAAAAAAAAAAAAAA",
      ),
      fc.stringMatching(/^[a-z0-9_-]{1,12}$/),
    );
    const arb = fc.tuple(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.constantFrom("GET", "POST", "DELETE"), fc.boolean());
    const seed = (this.options.seed + hash("unrouted")) | 0;
    let run = 0;
    const unrouted: Operation = { id: "(unrouted paths)", method: "GET", template: "/", parameters: [], responses: {}, secured: false };
    await fc.assert(
      fc.asyncProperty(arb, async ([segments, method, slash]) => {
        const path = `/${segments.join("/")}${slash ? "/" : ""}`;
        const decoded = safeDecode(path);
        const matches = decoded === undefined ? [] : templates.filter((t) => t.re.test(decoded.replace(/\/+$/, "") || "/"));
        const same = matches.find((t) => t.op.method === method);
        const probe: FuzzCase["probe"] = same ? undefined : matches.length ? "wrong-method" : "unrouted";
        const op = same?.op ?? matches[0]?.op ?? unrouted;
        const c: FuzzCase = {
          op,
          req: {
            method,
            path,
            headers: { accept: "application/json", "x-forwarded-for": "198.51.100.2" },
            ...(method === "POST" ? { body: Buffer.from("{}") } : {}),
          },
          mutation: `unrouted path (${method})`,
          mustReject: false,
          ...(probe ? { probe } : {}),
        };
        if (same) return true; // a documented operation: the operation properties cover it
        if (c.req.body) c.req.headers["content-type"] = "application/json";
        await this.exchange(c, { kind: "unrouted", seed: this.options.seed, path: String(run++) });
        return true;
      }),
      { seed, numRuns: runs, endOnFailure: true },
    );
  }

  /** The property of every operation, `concurrency` operations at a time. */
  async all(kind: "valid" | "mutated"): Promise<void> {
    const jobs = this.ops.map((op) => () => this.property(op, kind));
    const concurrency = this.options.concurrency ?? 4;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < jobs.length) await jobs[next++]!();
      }),
    );
  }
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
