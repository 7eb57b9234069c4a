/**
 * Distributed mode from the built image (deploy/docker/build-and-start.sh): every
 * program of the service list runs as the image runs it, its ENTRYPOINT and built
 * file (dist/<program>.cjs) as the image's USER, in its WORKDIR and environment,
 * chrooted into the image's root filesystem, against this machine's PostgreSQL,
 * Kafka and Redis on loopback; the chain is the devchain image's. Waits until the
 * gateway's deep health check passes (every service SERVING, database, bus,
 * cache) and each container's own HEALTHCHECK passes, then stops everything
 * (SIGTERM, as `docker stop`) and exits 0; exits 1 on any failure.
 *
 *   tsx deploy/local/src/run-image.ts --rootfs DIR --config FILE [--devchain-rootfs DIR --devchain-config FILE] [--log-dir DIR]
 *
 * --rootfs: the runtime image's mounted root filesystem, which the caller has made
 * read-only with a tmpfs on /tmp, /proc and /dev (as compose's read_only + tmpfs);
 * --config: its config as `buildah inspect --format '{{json .Docker.Config}}'`
 * prints it (Env, User, WorkingDir, Entrypoint, Cmd, Healthcheck). Environment as
 * run.ts: POSTGRES_ADMIN_URL, KAFKA_BROKERS, REDIS_URL. Each run uses a database
 * of its own, dropped at the end. No secret is printed.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { join } from "node:path";
import { builtFile, GATEWAY } from "@c402/topology";
import { startLocalCluster, type ProgramCommand } from "./cluster";
import { waitUntilHealthy } from "./health-wait";
import { freePort } from "./ports";
import { dropDatabase } from "./provision";

/** How long the whole system may take to be healthy from the image (each service migrates first). */
const START_TIMEOUT_MS = 240_000;
/** How long one container HEALTHCHECK may run (the Dockerfile's --timeout). */
const HEALTHCHECK_TIMEOUT_MS = 10_000;

/** The part of an image's config that says how its container runs. */
interface ImageConfig {
  Env?: string[];
  User?: string;
  WorkingDir?: string;
  Entrypoint?: string[];
  Cmd?: string[];
  Healthcheck?: { Test?: string[] };
}

interface Image {
  rootfs: string;
  config: ImageConfig;
}

function readImage(rootfs: string, configFile: string): Image {
  return { rootfs, config: JSON.parse(readFileSync(configFile, "utf8")) as ImageConfig };
}

/** The image's own environment (PATH, NODE_ENV, ...): nothing of this machine's environment reaches a container. */
function imageEnv(image: Image): Record<string, string> {
  return Object.fromEntries((image.config.Env ?? []).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
}

/** argv run as a container of the image runs it: chrooted, as its USER, in its WORKDIR (env(1) of the image changes to it). */
function inImage(image: Image, argv: readonly string[]): ProgramCommand {
  const user = image.config.User || "0:0";
  return { file: "chroot", args: [`--userspec=${user}`, image.rootfs, "/usr/bin/env", `--chdir=${image.config.WorkingDir || "/"}`, ...argv], cwd: "/" };
}

/** The container's HEALTHCHECK, run inside it as the engine would; true when it exits 0. */
function healthcheckPasses(image: Image, env: Record<string, string>): boolean {
  const test = image.config.Healthcheck?.Test ?? [];
  const argv = test[0] === "CMD-SHELL" ? ["/bin/sh", "-c", test[1] as string] : test[0] === "CMD" ? test.slice(1) : undefined;
  if (!argv) throw new Error(`the image has no HEALTHCHECK (${JSON.stringify(test)})`);
  const command = inImage(image, argv);
  const result = spawnSync(command.file, command.args, { cwd: command.cwd, env, stdio: "ignore", timeout: HEALTHCHECK_TIMEOUT_MS });
  return result.status === 0;
}

async function until(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/** The devchain container: the image's ENTRYPOINT and CMD on a free loopback port, healthy by its own HEALTHCHECK's probe. */
async function startDevchainContainer(image: Image, logDir: string | undefined): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const env = { ...imageEnv(image), DEVCHAIN_HOST: "127.0.0.1", DEVCHAIN_PORT: String(port) };
  const command = inImage(image, [...(image.config.Entrypoint ?? []), ...(image.config.Cmd ?? [])]);
  const child = spawn(command.file, command.args, { cwd: command.cwd, env, stdio: logDir ? ["ignore", "pipe", "pipe"] : "inherit" });
  if (logDir) {
    mkdirSync(logDir, { recursive: true });
    const out = createWriteStream(`${logDir}/devchain.log`, { flags: "a" });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
  }
  const url = `http://127.0.0.1:${port}`;
  // The HEALTHCHECK names compose's port (8545); the same probe, at this run's port.
  const test = image.config.Healthcheck?.Test ?? [];
  const probe: Image = { ...image, config: { ...image.config, Healthcheck: { Test: test.map((arg) => arg.replace(/http:\/\/127\.0\.0\.1:\d+/, url)) } } };
  await until("the devchain container's health check", START_TIMEOUT_MS, () => {
    if (child.exitCode !== null) throw new Error(`the devchain container exited (${child.exitCode})`);
    return healthcheckPasses(probe, env);
  });
  return { url, child };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rootfs: { type: "string" },
      config: { type: "string" },
      "devchain-rootfs": { type: "string" },
      "devchain-config": { type: "string" },
      "log-dir": { type: "string" },
    },
  });
  if (!values.rootfs || !values.config)
    throw new Error("usage: run-image.ts --rootfs DIR --config FILE [--devchain-rootfs DIR --devchain-config FILE] [--log-dir DIR]");
  const runtime = readImage(values.rootfs, values.config);
  const devchainImage = values["devchain-rootfs"] && values["devchain-config"] ? readImage(values["devchain-rootfs"], values["devchain-config"]) : undefined;
  const logDir = values["log-dir"];
  const adminUrl = process.env.POSTGRES_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const database = `c402_image_${randomBytes(4).toString("hex")}`;
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

  let devchain: { url: string; child: ChildProcess } | undefined;
  let cluster: Awaited<ReturnType<typeof startLocalCluster>> | undefined;
  let exits: (readonly [string, number | null])[] = [];
  try {
    if (devchainImage) {
      devchain = await startDevchainContainer(devchainImage, logDir);
      process.stdout.write(`devchain container healthy at ${devchain.url} (${elapsed()})\n`);
    }
    const env = {
      ...imageEnv(runtime),
      LOG_LEVEL: "info",
      // identity's sign-in mails: the only writable path is /tmp (as compose's DATA_DIR).
      DATA_DIR: "/tmp/c402",
    };
    cluster = await startLocalCluster({
      adminUrl,
      database,
      kafkaBrokers: process.env.KAFKA_BROKERS ?? "127.0.0.1:19092",
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      gatewayPort: await freePort(),
      env,
      logDir,
      command: (program) => inImage(runtime, [...(runtime.config.Entrypoint ?? []), builtFile(program)]),
      ...(devchain ? { devchainUrl: devchain.url } : {}),
      // The programs see only the image's root filesystem: its /tmp (a tmpfs of this run) carries the stand-in's CA.
      stellarCaDirectory: { here: join(runtime.rootfs, "tmp"), inPrograms: "/tmp" },
    });
    const gateway = cluster.processes.find((p) => p.name === GATEWAY.name);
    if (!gateway) throw new Error("no gateway process");
    await waitUntilHealthy(cluster.gatewayUrls[0] as string, gateway.child, START_TIMEOUT_MS, { deep: true });
    process.stdout.write(`gateway ${cluster.gatewayUrls[0]}/health?deep=true: healthy, every service SERVING (${elapsed()})\n`);
    // Each container's own HEALTHCHECK: a service's grpc.health.v1 probe at its GRPC_PORT, the gateway's GET /health at its PORT.
    for (const p of cluster.processes) {
      const vars: Record<string, string> = p.name === GATEWAY.name ? { PORT: String(p.port) } : { GRPC_PORT: String(p.port) };
      if (!healthcheckPasses(runtime, { ...env, ...vars })) throw new Error(`${p.name}: the image's HEALTHCHECK fails`);
      process.stdout.write(`${p.name}: the image's HEALTHCHECK passes\n`);
    }
  } finally {
    // As `docker stop`: SIGTERM, and each program exits 0 once it has drained.
    const stopping = Date.now();
    const exited = (cluster?.processes ?? []).map((p) => exitCode(p.child).then((code) => [p.name, code] as const));
    await cluster?.stop();
    exits = await Promise.all(exited);
    if (cluster) process.stdout.write(`stopped on SIGTERM in ${Date.now() - stopping} ms, exit codes ${JSON.stringify(Object.fromEntries(exits))}\n`);
    if (devchain) {
      devchain.child.kill("SIGTERM");
      const killer = setTimeout(() => devchain?.child.kill("SIGKILL"), 10_000);
      await exitCode(devchain.child);
      clearTimeout(killer);
    }
    await dropDatabase(adminUrl, database).catch(() => undefined);
  }
  // Reached only after a healthy start (a failed one has thrown its own error).
  const unclean = exits.filter(([, code]) => code !== 0);
  if (unclean.length > 0) throw new Error(`not stopped cleanly: ${unclean.map(([name, code]) => `${name} (${code})`).join(", ")}`);
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(child.exitCode) : child.once("exit", (code) => r(code))));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
