#!/usr/bin/env node
// The Stellar Soroban RPC stand-in for local runs and manual use: HTTPS on loopback, presenting
// itself as Stellar testnet (or pubnet) with USDC's real asset contract (see ../README.md).
// Prints one line `STELLAR_STANDIN_READY {json}` when it serves; stops on SIGTERM/SIGINT.
//
// Environment: STELLAR_STANDIN_PORT (default: the OS picks a free port), STELLAR_STANDIN_HOST (a
// loopback address, default 127.0.0.1), STELLAR_STANDIN_NETWORK (stellar:testnet, the default, or
// stellar:pubnet), STELLAR_STANDIN_LEDGER_MS (default 1000; 0: ledgers close only through
// standin_closeLedger), STELLAR_STANDIN_CA_FILE (write the test CA certificate there, for the
// clients' NODE_EXTRA_CA_CERTS), STELLAR_STANDIN_LOG_ERRORS=1 (log the stand-in's own failures to
// stderr; quiet by default).
// Cheats over JSON-RPC (named params): standin_fundAccount, standin_mintUsdc, standin_closeLedger,
// standin_failNextTransaction {source?} (the next transaction from that account lands FAILED).
// The package is TypeScript sources (as every package here): tsx compiles them on the fly.
require("tsx/cjs/api").register();
const { writeFileSync } = require("node:fs");
const { isStellarNetwork, startStellarStandin } = require("../src/index.ts");

async function main() {
  const network = process.env.STELLAR_STANDIN_NETWORK || "stellar:testnet";
  if (!isStellarNetwork(network)) throw new Error(`STELLAR_STANDIN_NETWORK must be stellar:testnet or stellar:pubnet, not ${network}`);
  const standin = await startStellarStandin({
    network,
    port: Number(process.env.STELLAR_STANDIN_PORT || 0),
    host: process.env.STELLAR_STANDIN_HOST || "127.0.0.1",
    ledgerMs: process.env.STELLAR_STANDIN_LEDGER_MS ? Number(process.env.STELLAR_STANDIN_LEDGER_MS) : undefined,
    onInternalError:
      process.env.STELLAR_STANDIN_LOG_ERRORS === "1" ? (method, err) => process.stderr.write(`stellar-standin: ${method}: ${err?.stack ?? err}\n`) : undefined,
  });
  const caFile = process.env.STELLAR_STANDIN_CA_FILE || undefined;
  if (caFile) writeFileSync(caFile, standin.caCertificatePem);

  console.log(
    `STELLAR_STANDIN_READY ${JSON.stringify({ url: standin.url, network: standin.network, networkPassphrase: standin.networkPassphrase, usdc: standin.usdc, caFile, caCertificatePem: standin.caCertificatePem })}`,
  );

  const stop = () => {
    void standin.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err) => {
  process.stderr.write(`stellar-standin: ${err?.stack ?? err}\n`);
  process.exit(1);
});
