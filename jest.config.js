/** Unit and integration tests of every package and service. Suites that need
 * PostgreSQL, Redis or Kafka run when that infrastructure is reachable (and
 * fail, never skip, when CI=true). The black-box suite lives in test-e2e/; the
 * rolling restart and the failure drills of the distributed processes
 * (deploy/local/test, a dozen processes) run alone after this one:
 * scripts/test.mjs. */
const swc = ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "commonjs" } }];

module.exports = {
  testEnvironment: "node",
  transform: { "^.+\\.(t|j)sx?$": swc },
  testMatch: [
    "<rootDir>/packages/*/test/**/*.test.ts",
    "<rootDir>/services/*/test/**/*.test.ts",
    "<rootDir>/deploy/embedded/test/**/*.test.ts",
    "<rootDir>/deploy/files/test/**/*.test.ts",
    "<rootDir>/examples/*/test/**/*.test.ts",
  ],
  testTimeout: 30_000,
  maxWorkers: 2,
  globalSetup: "<rootDir>/packages/testkit/src/global-setup.ts",
  // G20: every test file checks that its connections stayed on loopback.
  setupFilesAfterEnv: ["<rootDir>/packages/testkit/src/loopback-only.ts"],
};
