import { createRequire } from "node:module";
import { extname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { DependencyUnavailableError } from "@c402/problems";
import type { PGliteSession, StatementResult } from "./pglite-dialect";
import { threadErrorToError, type ThreadReply, type ThreadRequest } from "./pglite-thread-messages";

interface Pending {
  resolve(result: StatementResult<unknown>): void;
  reject(err: Error): void;
}

/**
 * The embedded PostgreSQL on a thread of its own. PGlite runs PostgreSQL in
 * WebAssembly synchronously: on the main thread every statement, vacuum and
 * checkpoint stops the HTTP server, the gRPC services and signature checks
 * for as long as it takes, and the process uses one of the machine's cores.
 * On a worker thread (pglite-thread.ts) the database runs beside them: on the
 * embedded paid path it was a third of the main thread's time.
 *
 * Statements are sent as they come and answered in order (the thread runs
 * them one at a time); transactions are kept whole by the dialect, which
 * holds back other statements from begin to commit. A statement's parameters
 * and rows cross by structured clone (strings, numbers, bigint, Date,
 * Uint8Array, plain objects and arrays); its error keeps its fields (the
 * SQLSTATE `code`).
 */
export class PGliteThread implements PGliteSession {
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private stopped: Error | undefined;
  private ready = false;
  private closing: Promise<void> | undefined;
  private onReady: (() => void) | undefined;
  private onFailed: ((err: Error) => void) | undefined;
  private onClosed: (() => void) | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly onLost: ((reason: Error) => void) | undefined,
  ) {
    worker.on("message", (reply: ThreadReply) => this.receive(reply));
    worker.on("error", (err) => this.stop(new DependencyUnavailableError(`the embedded database's thread failed: ${err.message}`, err)));
    worker.on("exit", (code) =>
      this.stop(new DependencyUnavailableError(this.closing ? "the embedded database is closed" : `the embedded database's thread exited (code ${code})`)),
    );
  }

  /**
   * Starts the thread and opens PGlite on it (`dataDir` on disk, or in memory
   * when omitted). `onLost` hears, once, that the thread ended after it was
   * ready without being closed (an uncaught error, out of memory): every
   * statement fails from then on, so whoever owns the process should end it.
   */
  static async open(dataDir?: string, onLost?: (reason: Error) => void): Promise<PGliteThread> {
    const worker = new Worker(join(__dirname, `pglite-thread${extname(__filename)}`), {
      workerData: { dataDir },
      execArgv: [...inheritedArguments(), ...typeScriptLoader()],
    });
    const thread = new PGliteThread(worker, onLost);
    try {
      await new Promise<void>((resolve, reject) => {
        thread.onReady = () => {
          thread.ready = true;
          resolve();
        };
        thread.onFailed = reject;
      });
    } catch (err) {
      await worker.terminate();
      throw err;
    }
    return thread;
  }

  query<R>(sql: string, params: readonly unknown[]): Promise<StatementResult<R>> {
    if (this.stopped) return Promise.reject(this.stopped);
    // Sent after the close, it would reach a thread that has closed PGlite.
    if (this.closing) return Promise.reject(new DependencyUnavailableError("the embedded database is closing"));
    const id = ++this.nextId;
    const answered = new Promise<StatementResult<R>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as Pending["resolve"], reject });
    });
    if (this.pending.size === 1) this.worker.ref();
    this.worker.postMessage({ kind: "query", id, sql, params } satisfies ThreadRequest);
    return answered;
  }

  /** Closes PGlite (after every statement sent before) and ends the thread. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    if (this.stopped) return Promise.resolve();
    this.worker.ref();
    this.closing = new Promise<void>((resolve) => (this.onClosed = resolve))
      .then(() => this.worker.terminate())
      .then(() => this.stop(new DependencyUnavailableError("the embedded database is closed")));
    this.worker.postMessage({ kind: "close" } satisfies ThreadRequest);
    return this.closing;
  }

  private receive(reply: ThreadReply): void {
    switch (reply.kind) {
      case "ready":
        // From now on, only a statement waiting for its answer keeps the process alive, as a database on this thread would.
        if (this.pending.size === 0) this.worker.unref();
        this.onReady?.();
        return;
      case "failed":
        this.onFailed?.(threadErrorToError(reply.error));
        return;
      case "closed":
        this.onClosed?.();
        return;
      default: {
        const waiting = this.pending.get(reply.id);
        if (!waiting) return;
        this.pending.delete(reply.id);
        if (this.pending.size === 0) this.worker.unref();
        if (reply.kind === "result") waiting.resolve(reply.result);
        else waiting.reject(threadErrorToError(reply.error));
      }
    }
  }

  private stop(reason: Error): void {
    if (this.stopped) return;
    this.stopped = reason;
    this.onFailed?.(reason);
    this.onClosed?.();
    for (const waiting of this.pending.values()) waiting.reject(reason);
    this.pending.clear();
    // A failed open is the opener's rejection, a close its owner's doing; anything else is a loss.
    if (this.ready && !this.closing) this.onLost?.(reason);
  }
}

/**
 * This process's Node arguments (a --cpu-prof, say) but tsx's own: its ESM
 * loader, registered by `--import`, does not reach into a thread and would
 * have the thread load its entry as an ES module it cannot read.
 */
function inheritedArguments(): string[] {
  const args = process.execArgv;
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (PRELOAD.test(arg) && TSX.test(args[i + 1] ?? "")) i++;
    else if (!(PRELOAD_WITH_VALUE.test(arg) && TSX.test(arg.slice(arg.indexOf("=") + 1)))) kept.push(arg);
  }
  return kept;
}

const PRELOAD = /^(--require|-r|--import|--loader|--experimental-loader)$/;
const PRELOAD_WITH_VALUE = /^(--require|--import|--loader|--experimental-loader)=/;
/** `tsx`, or a path through its package: `tsx/esm`, `file:///…/node_modules/tsx/dist/loader.mjs`. */
const TSX = /(^|[/\\])tsx([/\\]|$)/;

/**
 * How the thread loads TypeScript (run from source): tsx's require hook,
 * preloaded. Neither a tsx process's loader nor Jest's transform (its own
 * module system) reaches a new thread.
 */
function typeScriptLoader(): string[] {
  if (extname(__filename) !== ".ts") return [];
  return ["--require", createRequire(__filename).resolve("tsx/cjs")];
}
