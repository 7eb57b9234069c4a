import type { ChildProcess } from "node:child_process";

/** The process stopped before it was healthy: a caller that picked its port may start it again on another. */
export class ExitedBeforeHealthy extends Error {}

/**
 * Resolves once the process at `base` answers its health check (`deep`: every
 * component it depends on too, `/health?deep=true`); throws ExitedBeforeHealthy
 * if it exits first, and an Error if it is not healthy within `timeoutMs`.
 */
export async function waitUntilHealthy(base: string, child: ChildProcess, timeoutMs: number, opts: { deep?: boolean } = {}): Promise<void> {
  const url = `${base}/health${opts.deep ? "?deep=true" : ""}`;
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new ExitedBeforeHealthy(`${base}: exited (${child.exitCode ?? child.signalCode}) before it was healthy`);
    }
    // A deep check answers 503 while any component is down, so its status alone says healthy.
    const ok = await fetch(url).then(
      async (r) => {
        await r.arrayBuffer();
        return r.ok;
      },
      () => false,
    );
    if (ok) return;
    if (Date.now() > until) throw new Error(`${base} is not healthy after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
