import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../src/ports";

/**
 * A redis-server of a test's own on a free loopback port, to kill and start
 * again (never the machine's on 6379: other suites use it). Nothing is saved:
 * a restart comes back empty, as a cache restarted without persistence does.
 */
export interface OwnRedis {
  url: string;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "c402-redis-"));
  let child: ChildProcess | undefined;
  const gone = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once("exit", () => r())));
  const start = async () => {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--logfile", join(dir, "redis.log")];
    child = spawn("redis-server", args, { stdio: "ignore" });
    await acceptsConnections(port, child);
  };
  const kill = async () => {
    const c = child as ChildProcess;
    c.kill("SIGKILL");
    await gone(c);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    async stop() {
      if (child) await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function acceptsConnections(port: number, child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited (${child.exitCode})`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server on ${port} did not start within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
