/**
 * The embedded database's own thread (a worker started by PGliteThread): PGlite
 * opened here, every statement run here, one at a time in the order they
 * arrive. See pglite-thread-session.ts for why and for the messages.
 */
import { parentPort, workerData } from "node:worker_threads";
import { threadFailpoint, threadFailpointArmed } from "@c402/failpoints";
import { parseBytea, serializeBytea } from "./pglite-bytea";
import { PGliteStatements } from "./pglite-statements";
import { describeThreadError, type ThreadReply, type ThreadRequest } from "./pglite-thread-messages";

async function open(dataDir: string | undefined) {
  const { PGlite, types, protocol, parse } = await import("@electric-sql/pglite");
  const pglite = await PGlite.create(dataDir, {
    parsers: { [types.INT8]: (v: string) => BigInt(v), [types.BYTEA]: parseBytea },
    serializers: { [types.BYTEA]: serializeBytea },
  });
  // A new WAL segment is made by writing 16 MiB of zeros, which in memory means growing the
  // file through a dozen copies (30,000 inserts into a bare PGlite: 5.4 s with, 5.0 s without);
  // off, it is sized at once. Its point, space reserved ahead on disk, does not apply to either store.
  await pglite.exec("set wal_init_zero = off");
  return { pglite, statements: new PGliteStatements(pglite, { serialize: protocol.serialize, parseResults: parse.parseResults }) };
}

const port = parentPort;
if (!port) throw new Error("pglite-thread.ts runs as a worker thread (PGliteThread.open)");
const opened = open((workerData as { dataDir?: string }).dataDir);
opened.then(
  () => port.postMessage({ kind: "ready" } satisfies ThreadReply),
  (err: unknown) => port.postMessage({ kind: "failed", error: describeThreadError(err) } satisfies ThreadReply),
);

// One statement at a time, in arrival order: the session is a single PostgreSQL backend.
let previous: Promise<void> = Promise.resolve();
port.on("message", (request: ThreadRequest) => {
  previous = previous.then(() => answer(request));
});

/** The statement that records a payment (the payments store's insert, its schema named as forSchema names it), where database-thread-exit-at-payment fires. */
const PAYMENT_INSERT = 'insert into "payments"."payments" ';
const exitAtPayment = threadFailpointArmed("database-thread-exit-at-payment");

async function answer(request: ThreadRequest): Promise<void> {
  const { pglite, statements } = await opened;
  if (request.kind === "close") {
    await pglite.close();
    port!.postMessage({ kind: "closed" } satisfies ThreadReply);
    port!.close();
    return;
  }
  threadFailpoint("database-thread-exit");
  if (exitAtPayment && request.sql.includes(PAYMENT_INSERT)) threadFailpoint("database-thread-exit-at-payment");
  let reply: ThreadReply;
  try {
    const { rows, affectedRows, command } = await statements.query(request.sql, request.params);
    // Only what the dialect reads crosses back: PGlite's field list would be copied for nothing.
    reply = { kind: "result", id: request.id, result: { rows, affectedRows, command } };
  } catch (err) {
    reply = { kind: "error", id: request.id, error: describeThreadError(err) };
  }
  port!.postMessage(reply);
}
