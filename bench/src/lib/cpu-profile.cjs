/**
 * Preloaded (NODE_OPTIONS=--require) into every process of the distributed
 * system when BENCH_CPU_PROF_DIR is set (Node refuses --cpu-prof in
 * NODE_OPTIONS): profiles the whole life of a service and writes
 * <dir>/<entry file path>.<pid>.cpuprofile when it exits (open it in Chrome
 * DevTools). The tsx launchers in front of each service are left alone.
 */
const dir = process.env.BENCH_CPU_PROF_DIR;
const entry = process.argv[1] ?? "";
if (dir && entry && !entry.includes("node_modules")) {
  const inspector = require("node:inspector");
  const { mkdirSync, writeFileSync } = require("node:fs");
  const { join, relative } = require("node:path");
  const session = new inspector.Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.start");
  // An in-process session answers synchronously, so the profile is written within the exit handler.
  process.on("exit", () => {
    session.post("Profiler.stop", (err, result) => {
      if (err) return;
      const name = relative(process.cwd(), entry).replace(/[/\\]/g, "-");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${name}.${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
