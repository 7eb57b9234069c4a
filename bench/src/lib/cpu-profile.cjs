/**
 * Preloaded (NODE_OPTIONS=--require) into every process of the distributed
 * system when BENCH_CPU_PROF_DIR is set (Node refuses --cpu-prof in
 * NODE_OPTIONS). Writes <dir>/<entry file path>.<pid>.cpuprofile (open it in
 * Chrome DevTools):
 *  - by default, of the whole life of a service, when it exits;
 *  - with BENCH_CPU_PROF_WINDOW=1, of a window only: the first SIGUSR2 starts
 *    the profiler, the next stops it and writes the profile, so a benchmark can
 *    profile its timed run without start-up (tsx compiling every module) in it.
 * The tsx launchers in front of each service are not profiled, but they too
 * take SIGUSR2 (which would otherwise end them), so the benchmark can signal
 * the whole process group.
 */
const dir = process.env.BENCH_CPU_PROF_DIR;
const windowed = process.env.BENCH_CPU_PROF_WINDOW === "1";
const entry = process.argv[1] ?? "";
const profiled = Boolean(dir && entry && !entry.includes("node_modules"));
if (dir && windowed && !profiled) process.on("SIGUSR2", () => undefined);
if (profiled) {
  const inspector = require("node:inspector");
  const { mkdirSync, writeFileSync } = require("node:fs");
  const { join, relative } = require("node:path");
  const session = new inspector.Session();
  session.connect();
  session.post("Profiler.enable");
  let running = false;
  const start = () => {
    session.post("Profiler.start");
    running = true;
  };
  // An in-process session answers synchronously, so the profile is written within an exit handler.
  const stopAndWrite = () => {
    if (!running) return;
    running = false;
    session.post("Profiler.stop", (err, result) => {
      if (err) return;
      const name = relative(process.cwd(), entry).replace(/[/\\]/g, "-");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${name}.${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  };
  if (windowed) process.on("SIGUSR2", () => (running ? stopAndWrite() : start()));
  else {
    start();
    process.on("exit", stopAndWrite);
  }
}
