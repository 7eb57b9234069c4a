import type { Compilable, CompiledQuery, Kysely, QueryResult } from "kysely";
import { prepareOnPostgres } from "./prepared-statements";

/**
 * A statement of a hot path, built and compiled by kysely once per database
 * and shape of values, then run with each call's values put where the first
 * call's were. kysely builds an immutable tree, runs the schema plugin over
 * it and compiles it on every call, for a text that never changes: on the paid
 * path that was about a tenth of the process's time (issue 16).
 *
 * `build` gets stand-ins for the values, one for each leaf of `values` (nested
 * plain objects are walked; a Buffer, Date, string, number, boolean, bigint,
 * null or array is a leaf), so it must only place them (in `values`, `where`,
 * `sql` templates…), never compute with them or pass one where kysely expects
 * a list. An undefined leaf is left undefined (kysely leaves its column out),
 * so it is part of the shape: another shape is built and kept apart.
 *
 * On PostgreSQL each text also runs as a named prepared statement (see
 * usePreparedStatements); PGlite prepares every statement already.
 */
export function reusableStatement<V extends object, R>(build: (db: Kysely<any>, values: V) => Compilable<R>) {
  const kept = new WeakMap<Kysely<any>, Map<string, CompiledQuery<R>>>();
  return (db: Kysely<any>, values: V): Promise<QueryResult<R>> => {
    const shape = shapeOf(values);
    let byShape = kept.get(db);
    if (!byShape) kept.set(db, (byShape = new Map()));
    let compiled = byShape.get(shape);
    if (!compiled) {
      compiled = build(db, standIns(values) as V).compile();
      prepareOnPostgres(compiled.sql);
      if (byShape.size >= MAX_SHAPES) byShape.clear();
      byShape.set(shape, compiled);
    }
    const parameters = compiled.parameters.map((p) => (p instanceof StandIn ? valueAt(values, p.path) : p));
    return db.executeQuery<R>({ ...compiled, parameters });
  };
}

/** Shapes kept per database and statement: a statement has one or two; a bound all the same. */
const MAX_SHAPES = 16;

/** Where a value goes, until the statement runs. */
class StandIn {
  constructor(readonly path: readonly string[]) {}
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

function standIns(value: unknown, path: string[] = []): unknown {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return new StandIn(path);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, standIns(v, [...path, k])]));
}

/** The keys of the values, nested, with the undefined ones marked: what the statement's text depends on. */
function shapeOf(value: unknown): string {
  if (value === undefined) return "u";
  if (!isPlainObject(value)) return "v";
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}:${shapeOf(v)}`)
    .join(",")}}`;
}

function valueAt(values: unknown, path: readonly string[]): unknown {
  let v = values;
  for (const key of path) v = (v as Record<string, unknown>)[key];
  return v;
}
