/** Black-box suite over HTTP. The target (embedded or distributed, from
 * E2E_MODE) is started by the global setup on free ports and stopped after. */
const swc = ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "commonjs" } }];

module.exports = {
  rootDir: __dirname,
  testEnvironment: "node",
  transform: { "^.+\\.(t|j)sx?$": swc },
  // oauth4webapi ships ESM only: compile it with the tests.
  transformIgnorePatterns: ["/node_modules/(?!\\.pnpm/oauth4webapi@|oauth4webapi/)"],
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  globalSetup: "<rootDir>/src/global-setup.ts",
  // G20: every test file checks that its connections stayed on loopback.
  setupFilesAfterEnv: ["<rootDir>/../packages/testkit/src/loopback-only.ts"],
  globalTeardown: "<rootDir>/src/global-teardown.ts",
  testTimeout: 60_000,
  maxWorkers: 1,
  // Suites that move the local chain's clock (*.clock.test.ts) run last (src/sequencer.js).
  testSequencer: "<rootDir>/src/sequencer.js",
};
