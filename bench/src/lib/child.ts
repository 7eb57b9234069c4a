import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { dirname, join } from "node:path";
import type { Server } from "node:http";
import { freePort as freePortOf } from "../../../deploy/local/src/ports";
import { instrumentRpc, rpcStats, type RpcStats } from "./rpc-stats";

/**
 * Each system under test runs in its own Node process, so the load generator
 * (this process) never shares an event loop with the server it measures. The
 * parent and a child talk over the fork IPC channel: the child sends
 * `{ type: "ready", info }` once it serves and stops on `{ type: "stop" }`
 * (or when the parent goes away).
 */

export interface Child<T> {
  info: T;
  pid: number;
  /** The child's chain RPC accounting since the last reset (empty unless BENCH_RPC_STATS=1). */
  rpcStats(reset: boolean): Promise<RpcStats>;
  /** The CPU time the child's process has used so far, in milliseconds (user + system). */
  cpuMs(): Promise<number>;
  /** Starts a V8 CPU profile of the child's main thread; the returned function stops it and writes it to `file`. */
  profile(file: string): Promise<() => Promise<void>>;
  stop(): Promise<void>;
}

type Message<T> =
  | { type: "ready"; info: T }
  | { type: "failed"; error: string }
  | { type: "rpc-stats"; stats: RpcStats }
  | { type: "profiling" }
  | { type: "profiled" }
  | { type: "cpu"; ms: number };

/** BENCH_CPU_PROF_DIR=dir: the exec arguments that make a child write V8 CPU profiles (one per thread) to dir/<name> when it exits (open them in Chrome DevTools). */
export function profileArgs(name: string): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${join(dir, name)}`] : [];
}

/** Starts a child script (TypeScript, through the tsx loader this process runs under). */
export function startChild<T>(file: string, env: Record<string, string>, opts: { execArgv?: string[]; timeoutMs?: number } = {}): Promise<Child<T>> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const child = fork(file, [], {
    env: { ...process.env, ...env },
    execArgv: [...process.execArgv, ...(opts.execArgv ?? [])],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send({ type: "stop" });
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${file} did not become ready in ${timeoutMs} ms`));
    }, timeoutMs);
    child.on("message", (m: Message<T>) => {
      if (m.type === "ready") {
        clearTimeout(timer);
        // One request, and the child's first answer of the given type, over the IPC channel.
        const ask = <K extends Message<T>["type"]>(request: object, answer: K) =>
          new Promise<Extract<Message<T>, { type: K }>>((done) => {
            const onMessage = (r: Message<T>) => {
              if (r.type !== answer) return;
              child.off("message", onMessage);
              done(r as Extract<Message<T>, { type: K }>);
            };
            child.on("message", onMessage);
            child.send(request);
          });
        const rpc = async (reset: boolean) => (await ask({ type: "rpc-stats", reset }, "rpc-stats")).stats;
        const cpuMs = async () => (await ask({ type: "cpu" }, "cpu")).ms;
        const profile = async (file: string) => {
          await ask({ type: "profile-start" }, "profiling");
          return async () => void (await ask({ type: "profile-stop", file }, "profiled"));
        };
        resolve({ info: m.info, pid: child.pid!, rpcStats: rpc, cpuMs, profile, stop });
      } else if (m.type === "failed") {
        clearTimeout(timer);
        void stop();
        reject(new Error(`${file} failed to start: ${m.error}`));
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited (${code ?? signal}) before it was ready`));
    });
  });
}

/** A CPU profile of a window of the child's life (the timed part of a run), through the inspector. */
const profiler = {
  session: undefined as Session | undefined,
  start(done: () => void): void {
    const session = (this.session ??= new Session());
    session.connect();
    session.post("Profiler.enable", () => session.post("Profiler.start", () => done()));
  },
  stop(file: string, done: () => void): void {
    const session = this.session;
    if (!session) return done();
    session.post("Profiler.stop", (err, result) => {
      if (!err) {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, JSON.stringify(result.profile));
      }
      session.disconnect();
      done();
    });
  },
};

/** The child side: start, report ready, stop on request or when the parent disappears. */
export function serveChild<T>(start: () => Promise<{ info: T; stop(): Promise<void> }>): void {
  if (process.env.BENCH_RPC_STATS === "1") instrumentRpc();
  const started = start();
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    try {
      // A stop that arrives while starting waits for the start, so nothing is left behind.
      const system = await started.catch(() => undefined);
      await system?.stop();
    } finally {
      process.exit(code);
    }
  };
  process.on("message", (m: { type?: string; reset?: boolean; file?: string }) => {
    if (m?.type === "stop") void shutdown(0);
    if (m?.type === "rpc-stats") process.send?.({ type: "rpc-stats", stats: rpcStats(m.reset === true) });
    if (m?.type === "cpu") {
      const { user, system } = process.cpuUsage();
      process.send?.({ type: "cpu", ms: (user + system) / 1000 });
    }
    if (m?.type === "profile-start") profiler.start(() => process.send?.({ type: "profiling" }));
    if (m?.type === "profile-stop" && m.file) profiler.stop(m.file, () => process.send?.({ type: "profiled" }));
  });
  process.on("disconnect", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));
  process.on("SIGINT", () => void shutdown(0));
  started.then(
    ({ info }) => process.send?.({ type: "ready", info }),
    (err: unknown) => {
      process.send?.({ type: "failed", error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      void shutdown(1);
    },
  );
}

export { freePort } from "../../../deploy/local/src/ports";

/**
 * Serves an HTTP server of a child on a free loopback port, keeping callers'
 * sockets alive (no side should pay a TCP handshake per call): its base URL
 * and how to stop it.
 */
export async function listenOnLoopback(server: Server): Promise<{ info: { url: string }; stop(): Promise<void> }> {
  server.keepAliveTimeout = 65_000;
  const port = await freePortOf();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    info: { url: `http://127.0.0.1:${port}` },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
