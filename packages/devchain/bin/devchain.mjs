#!/usr/bin/env node
// The local EVM chain for embedded mode and tests: Hardhat 3's EDR network
// served over JSON-RPC on loopback (Hardhat's CLI refuses Node 20, so its
// `node` task is run from code), then the test USDC placed at the canonical
// Base Sepolia USDC address, Multicall3 at its canonical address, the split
// factory and the escrow at fixed addresses, and demo accounts funded. Prints one line
// `DEVCHAIN_READY {json}` when it serves; stops on SIGTERM/SIGINT.
//
// Environment: DEVCHAIN_PORT (default 8545; 0: the OS picks a free one), DEVCHAIN_HOST (the
// address it binds, default 127.0.0.1; 0.0.0.0 in a container other containers call),
// DEVCHAIN_CHAIN_ID (default 84532), DEVCHAIN_MINT_USDC (atomic units minted
// to each demo account, default 1000 USDC), DEVCHAIN_LOG_CALLS=1 (log every JSON-RPC call and
// transaction to stderr, as Hardhat's node does; off by default: the node decodes and prints
// each one, which costs it more than many calls themselves).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const contractsDir = dirname(require.resolve("@c402/evm-contracts/package.json"));
const artifact = (name) => JSON.parse(readFileSync(join(contractsDir, "artifacts", `${name}.json`), "utf8"));
const layout = JSON.parse(readFileSync(new URL("../layout.json", import.meta.url), "utf8"));

function portBusy(p) {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(true));
    s.listen(p, "127.0.0.1", () => s.close(() => resolve(false)));
  });
}

// DEVCHAIN_PORT=0 lets the OS pick a free port as the server binds (never picked first and bound
// later: another devchain could take it meanwhile, and this one would then set up and announce the
// other's chain). Unset means 8545, or an OS-picked port when 8545 is taken (a second embedded
// instance must be able to run beside the first).
const explicit = process.env.DEVCHAIN_PORT !== undefined && process.env.DEVCHAIN_PORT !== "";
const requestedPort = explicit ? Number(process.env.DEVCHAIN_PORT) : 8545;
const port = requestedPort === 0 || (!explicit && (await portBusy(requestedPort))) ? 0 : requestedPort;
const chainId = Number(process.env.DEVCHAIN_CHAIN_ID ?? layout.chainId);
const mintEach = BigInt(process.env.DEVCHAIN_MINT_USDC ?? 1_000_000_000n);

// Hardhat wants a project root; give it a scratch one so nothing lands in the repo.
const root = mkdtempSync(join(tmpdir(), "c402-devchain-"));
writeFileSync(join(root, "package.json"), JSON.stringify({ name: "c402-devchain-scratch", private: true, type: "module" }));
const { createHardhatRuntimeEnvironment } = await import("hardhat/hre");
const hre = await createHardhatRuntimeEnvironment(
  {
    networks: {
      node: {
        type: "edr-simulated",
        chainId,
        // Without it every automined block adds a second and chain time runs ahead of the wall clock.
        allowBlocksWithSameTimestamp: true,
        mining: { auto: true, interval: 0 },
      },
    },
    paths: { artifacts: join(root, "artifacts"), cache: join(root, "cache") },
  },
  {},
  root,
);

// The node task prints its banner and accounts; keep stdout for our own lines. Its banner names
// the port its own server bound: nothing is sent to the URL before that, so the setup below can
// only ever reach this chain.
const print = console.log;
let announceListening;
const listening = new Promise((resolve) => (announceListening = resolve));
console.log = (...args) => {
  const line = args.join(" ");
  const bound = /JSON-RPC server at http:\/\/[^/]+:(\d+)\//.exec(line);
  if (bound) announceListening(Number(bound[1]));
  process.stderr.write(`${line}\n`);
};
const serving = hre.tasks.getTask("node").run({ port, hostname: process.env.DEVCHAIN_HOST || "127.0.0.1" });
serving.catch((err) => {
  process.stderr.write(`devchain: ${err?.stack ?? err}\n`);
  process.exit(1);
});
const url = `http://127.0.0.1:${await listening}`;

async function rpc(method, params = []) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

for (let i = 0; ; i++) {
  try {
    await rpc("eth_chainId");
    break;
  } catch (err) {
    if (i > 600) throw err;
    await new Promise((r) => setTimeout(r, 50));
  }
}
// RPC logging costs a fifth of the latency.
await rpc("hardhat_setLoggingEnabled", [false]);

const { encodeFunctionData } = await import("viem");
const accounts = await rpc("eth_accounts");
const deployer = accounts[0];
async function send(to, data) {
  const hash = await rpc("eth_sendTransaction", [{ from: deployer, to, data }]);
  const receipt = await rpc("eth_getTransactionReceipt", [hash]);
  if (!receipt || receipt.status !== "0x1") throw new Error(`setup transaction to ${to} failed`);
}

const usdc = artifact("TestUSDC");
await rpc("hardhat_setCode", [layout.usdc, usdc.deployedBytecode]);
await send(layout.usdc, encodeFunctionData({ abi: usdc.abi, functionName: "initialize", args: [layout.usdcName, layout.usdcVersion] }));
await rpc("hardhat_setCode", [layout.multicall3, artifact("Multicall3").deployedBytecode]);
await rpc("hardhat_setCode", [layout.splitFactory, artifact("SplitFactory").deployedBytecode]);
// The escrow's constructor never runs here: initialize gives it the token (callable once).
const escrow = artifact("C402Escrow");
await rpc("hardhat_setCode", [layout.escrow, escrow.deployedBytecode]);
await send(layout.escrow, encodeFunctionData({ abi: escrow.abi, functionName: "initialize", args: [layout.usdc] }));
const demo = accounts.slice(0, layout.demoAccounts);
for (const a of demo) await send(layout.usdc, encodeFunctionData({ abi: usdc.abi, functionName: "mint", args: [a, mintEach] }));

if (process.env.DEVCHAIN_LOG_CALLS !== "1") await rpc("hardhat_setLoggingEnabled", [false]);

print(`DEVCHAIN_READY ${JSON.stringify({ url, chainId, network: `eip155:${chainId}`, ...layout, demoAccounts: demo, feeWallet: demo[demo.length - 1] })}`);

const stop = () => {
  rmSync(root, { recursive: true, force: true });
  process.exit(0);
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
