import { spawnSync } from "node:child_process";
import { join } from "node:path";

/** The failpoint contract, in real processes: only the armed one fires, nothing runs after it, a typo is refused. */
const FAILPOINTS = join(__dirname, "../src/index.ts");

function run(armed: string) {
  const script = `const { failpoint } = require(${JSON.stringify(FAILPOINTS)}); failpoint("after-claim"); console.log("passed after-claim"); failpoint("after-sign"); console.log("survived");`;
  return spawnSync(process.execPath, ["--import", "tsx", "-e", script], {
    cwd: join(__dirname, "../../.."),
    env: { ...process.env, C402_FAILPOINT: armed },
    encoding: "utf8",
  });
}

describe("failpoints", () => {
  it("kills the process with SIGKILL at the armed failpoint only, before anything after it", () => {
    const r = run("after-sign");
    expect(r.signal).toBe("SIGKILL");
    expect(r.stdout).toBe("passed after-claim\n");
    expect(r.stderr).toContain("failpoint after-sign: SIGKILL");
  });

  it("refuses an unknown failpoint name at load, so a typo cannot make a crash test pass vacuously", () => {
    const r = run("after-sing");
    expect(r.status).not.toBe(0);
    expect(r.signal).toBeNull();
    expect(r.stderr).toContain("C402_FAILPOINT=after-sing is not a failpoint");
  });

  it("ends only the worker thread at an armed thread failpoint, and refuses one on the main thread", () => {
    const worker = `require(${JSON.stringify(FAILPOINTS)}).threadFailpoint("database-thread-exit"); console.log("thread survived");`;
    const script = [
      `const { Worker } = require("node:worker_threads");`,
      `const thread = new Worker(${JSON.stringify(worker)}, { eval: true, execArgv: ["--require", require.resolve("tsx/cjs")] });`,
      `thread.on("exit", (code) => {`,
      `  console.log("thread exited with " + code);`,
      `  try { require(${JSON.stringify(FAILPOINTS)}).threadFailpoint("database-thread-exit"); } catch (err) { console.log(err.message); }`,
      `});`,
    ].join("\n");
    const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script], {
      cwd: join(__dirname, "../../.."),
      env: { ...process.env, C402_FAILPOINT: "database-thread-exit" },
      encoding: "utf8",
    });
    expect(r.stderr).toContain("failpoint database-thread-exit: thread exit");
    expect(r.stdout).toBe("thread exited with 70\nfailpoint database-thread-exit is for a worker thread\n");
    expect(r.status).toBe(0);
  });
});
