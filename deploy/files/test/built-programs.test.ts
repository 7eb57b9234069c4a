import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { callerDigest, grpcHealth } from "@c402/rpc";
import { describeWith, freshPostgresDatabase, infraAvailable } from "@c402/testkit";
import { builtFile, programs, SERVICES } from "@c402/topology";

/**
 * What the image runs: the programs `npm run build` bundles (scripts/build.ts),
 * started with plain `node`, away from the workspace, with nothing installed
 * but what dist/package.json names. So the image needs no compiler and no
 * development dependency, and a dependency left out of dist/package.json
 * fails here, not in a cluster.
 */
const root = resolve(__dirname, "../../..");

describeWith("postgres")("the built programs (npm run build)", () => {
  const dir = mkdtempSync(join(tmpdir(), "c402-built-"));
  const dist = join(dir, "dist");
  const env = (vars: Record<string, string>) => ({ PATH: process.env.PATH ?? "", NODE_PATH: join(dir, "node_modules"), LOG_LEVEL: "info", ...vars });
  const run = (program: string, args: string[], vars: Record<string, string>) =>
    spawnSync(process.execPath, ["--enable-source-maps", join(dist, builtFile(program).replace(/^dist\//, "")), ...args], {
      cwd: dir,
      env: env(vars),
      encoding: "utf8",
      timeout: 60_000,
    });

  beforeAll(() => {
    const build = spawnSync(join(root, "node_modules/.bin/tsx"), [join(root, "scripts/build.ts"), "--out", dist], {
      cwd: root,
      encoding: "utf8",
      timeout: 240_000,
    });
    expect(build.stderr).toBe("");
    expect(build.status).toBe(0);
    // Only what dist/package.json names (what `npm install --omit=dev` puts in the image), linked from the workspace's copies.
    const manifest = JSON.parse(readFileSync(join(dist, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    for (const name of Object.keys(manifest.dependencies)) {
      const installed = dirname(createRequire(join(root, "services/gateway/package.json")).resolve(`${name}/package.json`));
      mkdirSync(dirname(join(dir, "node_modules", name)), { recursive: true });
      symlinkSync(installed, join(dir, "node_modules", name));
    }
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("builds one file per program of the service list: each service, the gateway and the topics job", () => {
    expect(Object.keys(programs()).sort()).toEqual([...SERVICES.map((s) => s.name), "gateway", "create-topics"].sort());
    const manifest = JSON.parse(readFileSync(join(dist, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["@grpc/grpc-js", "grpc-health-check", "swagger-ui-dist"]);
    for (const version of Object.values(manifest.dependencies)) expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("each service's built file migrates its schema (--migrate, the migration Job) with nothing but its dependencies' runtime files", async () => {
    const database = await freshPostgresDatabase();
    try {
      for (const s of SERVICES) {
        const migrated = run(s.name, ["--migrate"], { DATABASE_URL: database.url });
        expect({ service: s.name, status: migrated.status, err: migrated.stderr }).toEqual({ service: s.name, status: 0, err: "" });
        expect(migrated.stdout).toContain('"msg":"schema up to date"');
      }
    } finally {
      await database.drop();
    }
  }, 120_000);

  it("the gateway's built file loads and refuses to start without its settings, naming them (not a missing module)", () => {
    const gateway = run("gateway", [], {});
    expect(gateway.status).toBe(1);
    expect(`${gateway.stdout}${gateway.stderr}`).toMatch(/invalid configuration[\s\S]*REDIS_URL is required/);
    expect(`${gateway.stdout}${gateway.stderr}`).not.toMatch(/Cannot find module/);
  });

  (infraAvailable("kafka") ? it : it.skip)("the topics job's built file creates the topics and exits 0", () => {
    const job = run("create-topics", [], { KAFKA_BROKERS: infraAvailable("kafka") as string, KAFKA_TOPIC_PARTITIONS: "1" });
    expect({ status: job.status, err: job.stderr }).toEqual({ status: 0, err: "" });
  });

  (infraAvailable("kafka") ? it : it.skip)(
    "a service's built file serves gRPC (grpc.health.v1 SERVING) and stops cleanly on SIGTERM",
    async () => {
      const database = await freshPostgresDatabase();
      const grpcPort = 40_000 + Math.floor(Math.random() * 20_000);
      const child = spawn(process.execPath, [join(dist, "identity.cjs")], {
        cwd: dir,
        env: env({
          DATABASE_URL: database.url,
          KAFKA_BROKERS: infraAvailable("kafka") as string,
          GRPC_PORT: String(grpcPort),
          METRICS_PORT: "0",
          RPC_CALLERS: `gateway:${callerDigest("t".repeat(40))}`,
          BASE_URL: "http://127.0.0.1:4020",
          DATA_DIR: join(dir, "identity-data"),
          GRANT_KEYRING: `t1:${randomBytes(32).toString("base64")}`,
        }),
        stdio: "ignore",
      });
      try {
        let status = "UNREACHABLE";
        for (let i = 0; i < 120 && status !== "SERVING"; i++) {
          if (child.exitCode !== null) throw new Error(`identity exited with ${child.exitCode}`);
          status = await grpcHealth(`127.0.0.1:${grpcPort}`, "", 1_000);
          if (status !== "SERVING") await new Promise((r) => setTimeout(r, 250));
        }
        expect(status).toBe("SERVING");
        const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
        child.kill("SIGTERM");
        expect(await exited).toBe(0);
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
        await database.drop();
      }
    },
    90_000,
  );
});
