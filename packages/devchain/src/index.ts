import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { mnemonicToAccount } from "viem/accounts";
import layout from "../layout.json";

/** Private key of a devchain account (publicly known keys: devchain only). */
export function devchainKey(mnemonic: string, index: number): `0x${string}` {
  const key = mnemonicToAccount(mnemonic, { addressIndex: index }).getHdKey().privateKey;
  if (!key) throw new Error("no private key");
  return `0x${Buffer.from(key).toString("hex")}`;
}

/** How many of the devchain's last log lines are kept (a failed start shows them). */
const LOG_LINES_KEPT = 20;

/** What the devchain reports once it serves (see bin/devchain.mjs). */
export interface DevchainInfo {
  url: string;
  chainId: number;
  network: string;
  usdc: `0x${string}`;
  usdcName: string;
  usdcVersion: string;
  multicall3: `0x${string}`;
  splitFactory: `0x${string}`;
  /** The escrow contract (C402Escrow, ADR 18), its token the test USDC. */
  escrow: `0x${string}`;
  mnemonic: string;
  demoAccounts: `0x${string}`[];
  /** Receives the protocol fee on the devchain (the last demo account). */
  feeWallet: `0x${string}`;
}

export interface RunningDevchain extends DevchainInfo {
  stop(): Promise<void>;
}

/**
 * Starts the devchain as a child process (Hardhat 3 is ESM-only and wants
 * its own process) and resolves once it serves with every contract in place.
 */
export function startDevchain(opts: { port?: number; timeoutMs?: number; onLog?: (line: string) => void } = { port: 0 }): Promise<RunningDevchain> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, "../bin/devchain.mjs")], {
    // No port: 8545, or a free one when 8545 is taken.
    env: { ...process.env, DEVCHAIN_PORT: opts.port === undefined ? "" : String(opts.port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
    });
  return new Promise((resolve, reject) => {
    const log: string[] = [];
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`devchain did not start in time:\n${log.join("\n")}`));
    }, opts.timeoutMs ?? 60_000);
    createInterface({ input: child.stderr! }).on("line", (line) => {
      // The last lines only, for a failed start's message: the devchain may log for as long as it runs.
      if (log.push(line) > LOG_LINES_KEPT) log.shift();
      opts.onLog?.(line);
    });
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.startsWith("DEVCHAIN_READY ")) return;
      clearTimeout(timer);
      resolve({ ...(JSON.parse(line.slice("DEVCHAIN_READY ".length)) as DevchainInfo), stop });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`devchain exited (${code}):\n${log.join("\n")}`));
    });
  });
}

/**
 * The same settings for a devchain known only by its URL (a compose container):
 * its layout is fixed (packages/devchain/layout.json), so every address and
 * key follows from it without asking the chain.
 */
export function devchainSettlementAt(rpcUrl: string): ReturnType<typeof devchainSettlement> {
  const feeWallet = mnemonicToAccount(layout.mnemonic, { addressIndex: layout.demoAccounts - 1 }).address;
  return devchainSettlement({
    url: rpcUrl,
    chainId: layout.chainId,
    network: `eip155:${layout.chainId}`,
    usdc: layout.usdc as `0x${string}`,
    usdcName: layout.usdcName,
    usdcVersion: layout.usdcVersion,
    multicall3: layout.multicall3 as `0x${string}`,
    splitFactory: layout.splitFactory as `0x${string}`,
    escrow: layout.escrow as `0x${string}`,
    mnemonic: layout.mnemonic,
    demoAccounts: [],
    feeWallet,
  });
}

/**
 * The devchain account the escrow relayer signs with (ADR 19): funded, and never the
 * facilitator's (index 0; ADR 11: one sender per key), nor a demo account a test pays from.
 */
export const ESCROW_RELAYER_INDEX = 13;

/** Settlement settings for a service that settles on this devchain (fee to the last demo account). */
export function devchainSettlement(d: DevchainInfo) {
  return {
    network: d.network,
    rpcUrl: d.url,
    usdc: d.usdc,
    usdcName: d.usdcName,
    usdcVersion: d.usdcVersion,
    splitFactory: d.splitFactory,
    escrow: d.escrow,
    facilitatorKey: devchainKey(d.mnemonic, 0),
    escrowRelayerKey: devchainKey(d.mnemonic, ESCROW_RELAYER_INDEX),
    feeWallet: d.feeWallet,
    confirmations: 1,
  };
}
