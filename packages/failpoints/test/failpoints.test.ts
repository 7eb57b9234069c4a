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
});
