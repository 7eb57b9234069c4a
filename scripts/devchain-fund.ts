/**
 * Mints test USDC on the local devchain to any address (the devchain's test
 * USDC has an open mint). Devchain only: real networks use real USDC.
 *
 *   npm run -s devchain:fund -- <address> [usdc, default 10]
 * The devchain URL comes from the running service's /health?deep=true
 * (C402_URL, default http://127.0.0.1:4020) or from DEVCHAIN_URL.
 */
import { TestUSDC } from "@c402/evm-contracts";
import { parseUsd } from "@c402/money";
import { createPublicClient, createWalletClient, getAddress, http } from "viem";
import { mnemonicToAccount } from "viem/accounts";

async function devchain(): Promise<{ url: string; usdc: `0x${string}` }> {
  if (process.env.DEVCHAIN_URL) return { url: process.env.DEVCHAIN_URL, usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" };
  const res = await fetch(`${process.env.C402_URL ?? "http://127.0.0.1:4020"}/health?deep=true`);
  const body = (await res.json()) as { devchain?: { url: string; usdc: `0x${string}` } };
  if (!body.devchain) throw new Error("the running service reports no devchain (is it in embedded mode?)");
  return body.devchain;
}

async function main() {
  const [address, amount = "10"] = process.argv.slice(2);
  if (!address) throw new Error("usage: devchain:fund <address> [usdc]");
  const chain = await devchain();
  // A well-known devchain account pays the gas of the mint.
  const funder = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 5 });
  const wallet = createWalletClient({ account: funder, transport: http(chain.url) });
  const pub = createPublicClient({ transport: http(chain.url) });
  const hash = await wallet.writeContract({
    address: chain.usdc,
    abi: TestUSDC.abi,
    functionName: "mint",
    args: [getAddress(address), parseUsd(amount)],
    chain: null,
  });
  await pub.waitForTransactionReceipt({ hash });
  const balance = await pub.readContract({ address: chain.usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [getAddress(address)] });
  process.stdout.write(`minted ${amount} test USDC to ${getAddress(address)}; balance ${balance} atomic units\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
