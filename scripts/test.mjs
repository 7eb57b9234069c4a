#!/usr/bin/env node
// Runs every suite: the unit and integration tests (PostgreSQL, Redis and
// Kafka suites run when reachable; with CI=true they must be), the rolling
// restart of two replicas of every distributed process under load and the
// failure drills (Redis, Kafka, PostgreSQL and a service killed under load;
// alone: they run a dozen processes, and other suites' timings must not share the
// machine with them), then the black-box e2e suite against embedded mode and, when PostgreSQL, Redis and
// Kafka are all reachable, against distributed mode (Debian's chromium is
// installed first when missing: one e2e test clicks through a real browser). Prints one summary line.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { e2eModes } from "./e2e-modes.mjs";
import { ensureChromium } from "./ensure-chromium.mjs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, ".ci-out");
mkdirSync(out, { recursive: true });
const env = { ...process.env, NODE_OPTIONS: "--experimental-vm-modules --no-warnings", KAFKAJS_NO_PARTITIONER_WARNING: "1" };
const jest = join(root, "node_modules/.bin/jest");
const extraArgs = process.argv.slice(2);

const totals = { passed: 0, failed: 0, skipped: 0 };
const runs = [];
function runJest(name, args, runEnv) {
  const file = join(out, `${name}.json`);
  const r = spawnSync(jest, [...args, "--json", `--outputFile=${file}`, ...extraArgs], { cwd: root, env: runEnv, stdio: "inherit" });
  if (existsSync(file)) {
    const j = JSON.parse(readFileSync(file, "utf8"));
    totals.passed += j.numPassedTests;
    totals.failed += j.numFailedTests + (j.numRuntimeErrorTestSuites ?? 0);
    totals.skipped += j.numPendingTests + (j.numTodoTests ?? 0);
    runs.push(`${name}: ${j.numPassedTests} passed, ${j.numFailedTests} failed, ${j.numPendingTests} skipped`);
  } else {
    totals.failed += 1;
    runs.push(`${name}: did not run (exit ${r.status})`);
  }
  return r.status === 0;
}

env.TEST_KAFKA_BROKERS ??= "127.0.0.1:19092"; // deploy/kafka/kafka.sh's default
const { modes } = await e2eModes(env);

let ok = runJest("unit-and-integration", [], env);
ok = runJest("rollout", ["--runInBand", "--testMatch", "<rootDir>/deploy/local/test/**/*.test.ts"], env) && ok;
// The e2e suite drives a real browser (the OAuth consent): Debian's chromium, installed here when missing.
ensureChromium();
for (const mode of modes) ok = runJest(`e2e-${mode}`, ["-c", "test-e2e/jest.config.js"], { ...env, E2E_MODE: mode }) && ok;

const summary = `tests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}`;
writeFileSync(join(out, "summary.txt"), `${summary}\n`);
console.log(`\n${runs.join("\n")}\n${summary}`);
process.exit(ok && totals.failed === 0 ? 0 : 1);
