/**
 * The Stellar public-testnet smoke (test-e2e/smoke/stellar-testnet.test.ts): the e2e set-up, one file, and no
 * loopback-only check, since it talks to a real Soroban RPC on purpose. Not part of `npm test`: see the README.
 */
const base = require("./jest.config.js");

module.exports = { ...base, testMatch: ["<rootDir>/smoke/stellar-testnet.test.ts"], setupFilesAfterEnv: [], testTimeout: 180_000 };
