#!/usr/bin/env node
// The local Solana devnet for embedded mode and manual use: litesvm behind a
// JSON-RPC server on loopback, presenting itself as Solana devnet with devnet
// USDC at its real mint (see ../README.md). Prints one line
// `SOLANA_DEVNET_READY {json}` when it serves; stops on SIGTERM/SIGINT.
//
// Environment: SOLANA_DEVNET_PORT (default: the OS picks a free port), SOLANA_DEVNET_HOST (a
// loopback address, default 127.0.0.1), SOLANA_DEVNET_BLOCK_TIME_MS (default 400; 0: blocks only
// through surfnet_advanceBlocks), SOLANA_DEVNET_LOG_ERRORS=1 (log the devnet's own failures to
// stderr; quiet by default).
// The package is TypeScript sources (as every package here): tsx compiles them on the fly.
require("tsx/cjs/api").register();
const { startSolanaDevnet } = require("../src/index.ts");

async function main() {
  const devnet = await startSolanaDevnet({
    port: Number(process.env.SOLANA_DEVNET_PORT || 0),
    host: process.env.SOLANA_DEVNET_HOST || "127.0.0.1",
    blockTimeMs: process.env.SOLANA_DEVNET_BLOCK_TIME_MS ? Number(process.env.SOLANA_DEVNET_BLOCK_TIME_MS) : undefined,
    onInternalError:
      process.env.SOLANA_DEVNET_LOG_ERRORS === "1" ? (method, err) => process.stderr.write(`solana-devnet: ${method}: ${err?.stack ?? err}\n`) : undefined,
  });

  console.log(
    `SOLANA_DEVNET_READY ${JSON.stringify({ url: devnet.url, network: devnet.network, genesisHash: devnet.genesisHash, usdcMint: devnet.usdcMint, usdcDecimals: devnet.usdcDecimals })}`,
  );

  const stop = () => {
    void devnet.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err) => {
  process.stderr.write(`solana-devnet: ${err?.stack ?? err}\n`);
  process.exit(1);
});
