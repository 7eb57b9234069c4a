import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAILPOINT_ENV } from "@c402/failpoints";
import { waitUntilHealthy } from "../../local/src/health-wait";
import { freePort, portIsFree } from "../../local/src/ports";
import { spawnEmbeddedProcess } from "./embedded-process";
import { json, rehearsalSale } from "./seller";

/**
 * The embedded process whose database thread dies (a thread failpoint: the
 * thread ends, as after an uncaught error or running out of memory): it logs
 * the loss as fatal and ends with code 1, for its supervisor to start it
 * again, rather than run on answering every request with an error; and it
 * leaves no devchain behind. Once while it starts, once while it serves a
 * payment, which after the restart goes through once.
 */
interface LogLine {
  level: number;
  msg: string;
  reason?: string;
  err?: { message: string };
}

/** A child whose output is kept, and its exit code once it has ended (killed after 90 s). */
function watch(child: ChildProcess) {
  const out = { stdout: "", stderr: "" };
  child.stdout!.on("data", (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (out.stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  const exited = new Promise<number | null>((resolveExit) => child.once("close", resolveExit)).finally(() => clearTimeout(timer));
  const logLines = () =>
    out.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogLine);
  return { out, exited, logLines };
}

const FATAL = 60;
const lossLogged = expect.objectContaining({
  level: FATAL,
  msg: "the embedded database stopped: every statement fails from now on",
  err: expect.objectContaining({ message: "the embedded database's thread exited (code 70)" }),
});

describe("the embedded process when its database thread dies", () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), "c402-lost-db-"))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it("while starting: logs the loss as fatal, exits with code 1 and stops its devchain", async () => {
    const [port, devchainPort] = [await freePort(), await freePort()];
    const child = spawnEmbeddedProcess({
      port,
      dataDir,
      env: { DEVCHAIN_PORT: String(devchainPort), [FAILPOINT_ENV]: "database-thread-exit" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const { out, exited, logLines } = watch(child);

    expect(await exited).toBe(1);
    expect(out.stderr).toContain("failpoint database-thread-exit: thread exit");
    expect(logLines().filter((entry) => entry.level === FATAL)).toEqual([lossLogged]);
    expect(await portIsFree(devchainPort)).toBe(true);
  }, 120_000);

  it("while serving a payment: no goods without the sale, shuts down with code 1; restarted, the same payment is sold once", async () => {
    const [port, devchainPort] = [await freePort(), await freePort()];
    const base = `http://127.0.0.1:${port}`;
    const child = spawnEmbeddedProcess({
      port,
      dataDir,
      env: { DEVCHAIN_PORT: String(devchainPort), LOG_LEVEL: "info", [FAILPOINT_ENV]: "database-thread-exit-at-payment" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const { out, exited, logLines } = watch(child);
    await waitUntilHealthy(base, child, 60_000);
    const { auth, face, payment } = await rehearsalSale(base, { title: "Lost", price_usd: "0.10", payload: "goods" });

    const paid = await fetch(face, { headers: { "payment-signature": payment } }).then(
      async (res) => ({ status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() }),
      (err: Error) => ({ status: 0, retryAfter: null, body: err.message }),
    );
    // The buyer is told the service is unavailable and to retry shortly (retry_is_safe), and gets no goods.
    expect(paid.status).toBe(503);
    expect(paid.retryAfter).toBe("5");
    const problem = JSON.parse(paid.body);
    expect(problem.type).toMatch(/\/problems\/unavailable$/);
    expect(problem.help.retry_is_safe).toBe(true);
    expect(paid.body).not.toContain("goods");
    expect(await exited).toBe(1);
    expect(out.stderr).toContain("failpoint database-thread-exit-at-payment: thread exit");
    const lines = logLines();
    expect(lines.filter((entry) => entry.level === FATAL)).toEqual([lossLogged]);
    expect(lines).toContainEqual(expect.objectContaining({ msg: "shutting down", reason: "database lost" }));
    expect(await portIsFree(devchainPort)).toBe(true);
    expect(await portIsFree(port)).toBe(true);

    // Restarted on the same data, without the failpoint: no sale was recorded, and the buyer's retry is sold once.
    const again = spawnEmbeddedProcess({ port, dataDir, stdio: ["ignore", "ignore", "inherit"] });
    try {
      await waitUntilHealthy(base, again, 60_000);
      expect((await json(`${base}/v1/receipts?test_mode=true`, { headers: auth })).body.receipts).toEqual([]);
      const retried = await json(face, { headers: { "payment-signature": payment } });
      expect(retried.status).toBe(200);
      expect(retried.body.fulfillment.payload).toBe("goods");
      const ledger = await json(`${base}/v1/receipts?test_mode=true`, { headers: auth });
      expect(ledger.body.receipts.map((r: { id: string }) => r.id)).toEqual([retried.body.receipt.id]);
    } finally {
      const stopped = new Promise((r) => again.once("exit", r));
      again.kill("SIGTERM");
      await stopped;
    }
  }, 180_000);
});
