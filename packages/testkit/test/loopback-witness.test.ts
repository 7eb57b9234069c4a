import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/**
 * G20's witness in the processes tests start: it records every connection
 * attempt outside loopback and nothing else. No test may really try such an
 * address, so the child connects on loopback and then replays the event Node
 * emits for an attempt, with a documentation address (RFC 5737).
 */
describe("the loopback witness", () => {
  const witness = resolve(__dirname, "../bin/loopback-witness.cjs");
  let dir: string;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "c402-witness-"));
    server = createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  // Asynchronous: the loopback server answering the child runs in this process.
  const run = (log: string, script: string) =>
    promisify(execFile)(process.execPath, ["--require", witness, "-e", script], {
      env: { PATH: process.env.PATH, C402_NON_LOOPBACK_LOG: log },
      timeout: 10_000,
    });

  it("records an attempt outside loopback, with the process and the address; loopback and unix socket attempts leave no line", async () => {
    const log = join(dir, "outside.log");
    await run(
      log,
      `const s = require("node:net").connect(${port}, "127.0.0.1", () => { s.emit("connectionAttempt", "203.0.113.9", 443); s.emit("connectionAttempt", "::ffff:127.0.0.2", 80); s.emit("connectionAttempt", "/tmp/some.pipe"); s.end(); });`,
    );
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d+ \S+ 203\.0\.113\.9 443$/);
  });

  it("writes nothing when every connection stays on loopback", async () => {
    const log = join(dir, "quiet.log");
    await run(log, `const s = require("node:net").connect(${port}, "127.0.0.1", () => s.end());`);
    expect(existsSync(log)).toBe(false);
  });
});
