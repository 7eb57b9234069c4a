import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAILPOINT_ENV } from "@c402/failpoints";
import { freePort } from "../../local/src/ports";
import { spawnEmbeddedProcess } from "./embedded-process";

/**
 * The embedded process whose database thread dies (the database-thread-exit
 * failpoint: the thread ends at its first statement, as after an uncaught
 * error or running out of memory): it logs the loss as fatal and ends with
 * code 1, for its supervisor to start it again, rather than run on answering
 * every request with an error; and it leaves no devchain behind.
 */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const probe = createServer();
    probe.once("error", () => resolveFree(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolveFree(true)));
  });
}

describe("the embedded process when its database thread dies", () => {
  let dataDir: string;
  beforeAll(() => (dataDir = mkdtempSync(join(tmpdir(), "c402-lost-db-"))));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("logs the loss as fatal, exits with code 1 and stops its devchain", async () => {
    const [port, devchainPort] = [await freePort(), await freePort()];
    const child = spawnEmbeddedProcess({
      port,
      dataDir,
      env: { DEVCHAIN_PORT: String(devchainPort), [FAILPOINT_ENV]: "database-thread-exit" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    const code = await new Promise<number | null>((resolveExit) => child.once("close", resolveExit));
    clearTimeout(timer);

    expect(code).toBe(1);
    expect(stderr).toContain("failpoint database-thread-exit: thread exit");
    const fatal = stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } })
      .filter((entry) => entry.level === 60);
    expect(fatal).toEqual([
      expect.objectContaining({
        msg: "the embedded database stopped: every statement fails from now on",
        err: expect.objectContaining({ message: "the embedded database's thread exited (code 70)" }),
      }),
    ]);
    expect(await portIsFree(devchainPort)).toBe(true);
  }, 120_000);
});
