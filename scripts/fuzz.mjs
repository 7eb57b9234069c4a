#!/usr/bin/env node
// `npm run fuzz`: the OpenAPI conformance fuzzer (G22) with the long budget,
// C402_FUZZ_RUNS (default 200) valid and 200 mutated requests per operation,
// against embedded mode and, when PostgreSQL, Redis and Kafka are all
// reachable, distributed mode (as scripts/test.mjs picks them; E2E_MODES
// overrides). A fresh seed each run unless C402_FUZZ_SEED is set. Prints one
// summary line per mode; every failure is in .ci-out/fuzz-<mode>.json.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { e2eModes } from "./e2e-modes.mjs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, ".ci-out");
mkdirSync(out, { recursive: true });
const jest = join(root, "node_modules/.bin/jest");
const runs = process.env.C402_FUZZ_RUNS ?? "200";
const seed = process.env.C402_FUZZ_SEED ?? String(Math.floor(Math.random() * 2 ** 31));

const env = {
  ...process.env,
  NODE_OPTIONS: "--experimental-vm-modules --no-warnings",
  KAFKAJS_NO_PARTITIONER_WARNING: "1",
  C402_FUZZ_RUNS: runs,
  C402_FUZZ_SEED: seed,
};
env.TEST_KAFKA_BROKERS ??= "127.0.0.1:19092";
const { all: infra, modes } = await e2eModes(env);

const lines = [];
let ok = true;
for (const mode of modes) {
  const report = join(out, `fuzz-${mode}.json`);
  const started = Date.now();
  const r = spawnSync(jest, ["-c", "test-e2e/jest.config.js", "test-e2e/test/openapi-conformance.test.ts", ...process.argv.slice(2)], {
    cwd: root,
    env: { ...env, E2E_MODE: mode, C402_FUZZ_REPORT: report },
    stdio: "inherit",
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  ok = ok && r.status === 0;
  if (existsSync(report)) {
    const j = JSON.parse(readFileSync(report, "utf8"));
    const ops = Object.keys(j.statuses).filter((k) => !k.startsWith("(")).length;
    lines.push(`${mode}: ${j.requests} requests to ${ops} operations, ${j.failures.length} distinct failures, ${seconds} s (report: ${report})`);
  } else lines.push(`${mode}: did not run (exit ${r.status})`);
}
if (!infra && !env.E2E_MODES) lines.push("distributed: skipped (PostgreSQL, Redis or Kafka not reachable)");
console.log(`\nOpenAPI fuzz, seed ${seed}, ${runs} runs per operation and kind\n${lines.join("\n")}`);
process.exit(ok ? 0 : 1);
