/**
 * Sets an address's devnet USDC balance on the local Solana devnet (creating
 * its token account), with the devnet's surfnet_setTokenAccount cheat. A
 * seller's wallet needs its token account before it can be paid (the service
 * never creates one: ADR 15); a buyer needs USDC. Local devnet only.
 *
 *   npm run -s solana:fund -- <address> [usdc, default 10]
 * The devnet URL comes from the running service's /health?deep=true
 * (C402_URL, default http://127.0.0.1:4020) or from SOLANA_DEVNET_URL.
 */
import { parseUsd } from "@c402/money";
import { localSolanaDevnet } from "./demo-solana-wallet";

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

async function main() {
  const [address, amount = "10"] = process.argv.slice(2);
  if (!address) throw new Error("usage: solana:fund <address> [usdc]");
  const devnet = await localSolanaDevnet();
  await rpc(devnet.url, "surfnet_setTokenAccount", [address, devnet.usdc, { amount: Number(parseUsd(amount)) }]);
  process.stdout.write(`set ${address}'s devnet USDC to ${amount} (${parseUsd(amount)} atomic units)\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
