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
  const kept = new WeakMap<Kysely<any>, Built<R>[]>();
  return (db: Kysely<any>, values: V): Promise<QueryResult<R>> => {
    let byShape = kept.get(db);
    if (!byShape) kept.set(db, (byShape = []));
    let compiled = byShape.find((built) => fits(built.shape, values))?.compiled;
    if (!compiled) {
      compiled = build(db, standIns(values) as V).compile();
      prepareOnPostgres(compiled.sql);
      if (byShape.length >= MAX_SHAPES) byShape.length = 0;
      byShape.push({ shape: shapeOf(values), compiled });
    }
    const parameters = compiled.parameters.map((p) => (p instanceof StandIn ? valueAt(values, p.path) : p));
    return db.executeQuery<R>({ ...compiled, parameters });
  };
}

/** A statement as built for one shape of values. */
interface Built<R> {
  shape: Shape;
  compiled: CompiledQuery<R>;
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

/**
 * What the statement's text depends on: the keys of the values, nested, in
 * their order, with the undefined ones marked ("u"; any other leaf is "v").
 */
type Shape = "u" | "v" | { keys: string[]; shapes: Shape[] };

function shapeOf(value: unknown): Shape {
  if (value === undefined) return "u";
  if (!isPlainObject(value)) return "v";
  const keys = Object.keys(value);
  return { keys, shapes: keys.map((k) => shapeOf(value[k])) };
}

/** Whether `value` has `shape`, checked without building anything: it runs on every call of a hot statement. */
function fits(shape: Shape, value: unknown): boolean {
  if (value === undefined) return shape === "u";
  if (!isPlainObject(value)) return shape === "v";
  if (typeof shape === "string") return false;
  let i = 0;
  for (const key in value) {
    if (key !== shape.keys[i] || !fits(shape.shapes[i] as Shape, value[key])) return false;
    i++;
  }
  return i === shape.keys.length;
}

function valueAt(values: unknown, path: readonly string[]): unknown {
  let v = values;
  for (const key of path) v = (v as Record<string, unknown>)[key];
  return v;
}
