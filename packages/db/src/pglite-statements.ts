import type { PGlite, parse as pgliteParse, protocol as pgliteProtocol } from "@electric-sql/pglite";
import type { StatementResult } from "./pglite-dialect";
import { STALE_STATEMENT } from "./prepared-statements";

/** What the statement cache needs of the PGlite module (loaded lazily by its owner). */
export interface PGliteProtocol {
  serialize: typeof pgliteProtocol.serialize;
  parseResults: typeof pgliteParse.parseResults;
}

type Session = Pick<PGlite, "execProtocol" | "query" | "exec" | "serializers" | "parsers">;
type BackendMessage = Awaited<ReturnType<PGlite["execProtocol"]>>["messages"][number];

interface Prepared {
  name: string;
  /** Type OIDs of the parameters, as the server inferred them at Parse. */
  parameterTypes: number[];
  /** The statement's RowDescription (absent for statements that return no rows). */
  rowDescription: BackendMessage | undefined;
}

/** Statements PostgreSQL can prepare and whose result shape is fixed once prepared. */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Runs each distinct SQL text as a named prepared statement of the one PGlite
 * session. `PGlite.query` parses, analyses and plans a statement on every call,
 * in six round trips into WebAssembly; a prepared statement is bound and executed
 * in one, and PostgreSQL may keep its plan. Behaviour is the same as `query`'s:
 * parameters are serialized by the types the server inferred, rows are parsed by
 * the session's parsers, errors are the server's.
 *
 * Callers must not overlap calls (the dialect's connection mutex guarantees it):
 * the protocol messages of one call are one batch ending in Sync.
 */
export class PGliteStatements {
  private readonly statements = new Map<string, Prepared>();
  private counter = 0;

  constructor(
    private readonly session: Session,
    private readonly wire: PGliteProtocol,
    private readonly maxStatements = 500,
  ) {}

  async query<R>(sql: string, params: readonly unknown[]): Promise<StatementResult<R>> {
    if (!PREPARABLE.test(sql)) {
      // Transaction control and DDL: once each, nothing to keep.
      if (params.length > 0) return this.session.query<R>(sql, params as unknown[]);
      const results = await this.session.exec(sql);
      return (results[results.length - 1] ?? { rows: [] }) as StatementResult<R>;
    }
    try {
      return await this.execute<R>(await this.prepared(sql), params);
    } catch (err) {
      if (!STALE_STATEMENT.has((err as { code?: string }).code ?? "")) throw err;
      await this.forget(sql);
      return this.execute<R>(await this.prepared(sql), params);
    }
  }

  private async prepared(sql: string): Promise<Prepared> {
    const known = this.statements.get(sql);
    if (known) {
      // Most recently used last: the Map's order is the eviction order.
      this.statements.delete(sql);
      this.statements.set(sql, known);
      return known;
    }
    if (this.statements.size >= this.maxStatements) await this.forget(this.statements.keys().next().value as string);
    const { serialize } = this.wire;
    const name = `c402_${++this.counter}`;
    const { messages } = await this.session.execProtocol(
      batch([serialize.parse({ name, text: sql }), serialize.describe({ type: "S", name }), serialize.sync()]),
      { syncToFs: false },
    );
    const parameters = messages.find((m) => m.name === "parameterDescription") as { dataTypeIDs: number[] } | undefined;
    const prepared: Prepared = {
      name,
      parameterTypes: parameters?.dataTypeIDs ?? [],
      rowDescription: messages.find((m) => m.name === "rowDescription"),
    };
    this.statements.set(sql, prepared);
    return prepared;
  }

  private async execute<R>(statement: Prepared, params: readonly unknown[]): Promise<StatementResult<R>> {
    const values = params.map((param, i): BindValue => {
      if (param === null || param === undefined) return null;
      const type = statement.parameterTypes[i] ?? 0;
      // bytea as its bytes (binary format): no hex text to build and encode.
      if (type === BYTEA && param instanceof Uint8Array) return param;
      // As PGlite.query does: the serializer of the inferred type, else the value's text.
      const serializer = this.session.serializers[type];
      return serializer ? serializer(param) : String(param);
    });
    // PGlite's syncToFs persists an IndexedDB or OPFS store; in memory and on Node's file system it has nothing to do.
    const { messages } = await this.session.execProtocol(bindExecuteSync(statement.name, values), { syncToFs: false });
    const withShape = statement.rowDescription ? [statement.rowDescription, ...messages] : messages;
    const [result] = this.wire.parseResults(withShape, this.session.parsers);
    return (result ?? { rows: [] }) as unknown as StatementResult<R>;
  }

  private async forget(sql: string): Promise<void> {
    const statement = this.statements.get(sql);
    if (!statement) return;
    this.statements.delete(sql);
    const { serialize } = this.wire;
    await this.session.execProtocol(batch([serialize.close({ type: "S", name: statement.name }), serialize.sync()]), { syncToFs: false });
  }
}

/** A parameter as it is bound: text, bytes (binary format) or NULL. */
type BindValue = string | Uint8Array | null;

/** bytea's type OID. */
const BYTEA = 17;

/** Execute (unnamed portal, every row) then Sync: fixed messages. */
const EXECUTE_SYNC = Uint8Array.of(0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4);

/**
 * Bind (the unnamed portal to `statement`, each value in text or binary
 * format, every result column in text), Execute and Sync, in one buffer sized
 * once. PGlite's own serializer grows a 256-byte buffer by copies, measures
 * each string's UTF-8 length character by character in JavaScript and keeps
 * its state in emulated private fields: on the paid path it cost as much as
 * parsing the rows back.
 */
export function bindExecuteSync(statement: string, values: readonly BindValue[]): Uint8Array {
  let bindLength = 4 + 1 + Buffer.byteLength(statement) + 1 + 2 + 2 * values.length + 2 + 2;
  for (const value of values) bindLength += 4 + (value === null ? 0 : typeof value === "string" ? Buffer.byteLength(value) : value.byteLength);
  const out = Buffer.allocUnsafeSlow(1 + bindLength + EXECUTE_SYNC.length);
  let at = out.writeUInt8(0x42, 0);
  at = out.writeInt32BE(bindLength, at);
  at = out.writeUInt8(0, at); // the unnamed portal
  at += out.write(statement, at);
  at = out.writeUInt8(0, at);
  at = out.writeInt16BE(values.length, at);
  for (const value of values) at = out.writeInt16BE(value instanceof Uint8Array ? 1 : 0, at);
  at = out.writeInt16BE(values.length, at);
  for (const value of values) {
    if (value === null) {
      at = out.writeInt32BE(-1, at);
    } else if (typeof value === "string") {
      const length = out.write(value, at + 4);
      out.writeInt32BE(length, at);
      at += 4 + length;
    } else {
      out.writeInt32BE(value.byteLength, at);
      out.set(value, at + 4);
      at += 4 + value.byteLength;
    }
  }
  at = out.writeInt16BE(0, at); // every result column in text format
  out.set(EXECUTE_SYNC, at);
  return out;
}

function batch(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
