import { TestUSDC } from "@c402/evm-contracts";
import { createPublicClient, createWalletClient, http, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { call } from "./http";

/** The test USDC the devchain deploys at Base Sepolia's USDC address (its mint is open). */
export const DEVCHAIN_USDC: Hex = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const DEMO_MNEMONIC = "test test test test test test test test test test test junk";

/** The devchain the service under test settles on, as a suite of buyers uses it. */
export interface DevchainWallets {
  rpcUrl: string;
  pub: PublicClient;
  balance(address: Hex): Promise<bigint>;
  /** Mints test USDC to `to` and waits for it to be mined. */
  fund(to: Hex, amount: bigint): Promise<void>;
  /** A fresh buyer holding `amount` test USDC. */
  fundedBuyer(amount?: bigint): Promise<PrivateKeyAccount>;
  /** Sends `wei` of the chain's own coin to `to` (gas for a wallet that broadcasts itself, an arbiter's ruling). */
  fundGas(to: Hex, wei: bigint): Promise<void>;
  /**
   * Moves the chain's clock `seconds` ahead and mines a block at that time (evm_increaseTime, evm_mine). Only
   * suites named *.clock.test.ts may (src/sequencer.js runs them last: afterwards what was signed for "now" has expired).
   */
  advanceClock(seconds: number): Promise<void>;
}

/**
 * The devchain of the running service (from `/health?deep=true`), with one
 * demo account of its own paying the mint transactions: each suite names a
 * different `funderIndex`, so suites running side by side never race for a
 * nonce.
 */
/**
 * Demo accounts the service itself sends from, counting their nonces in its database (ADR 11): the
 * facilitator (0) and the escrow relayer (13, ESCROW_RELAYER_INDEX). A suite that sent from one would
 * take the service's next nonce and stall its transactions.
 */
const SERVICE_SENDERS = [0, 13];

export async function devchainWallets(funderIndex: number): Promise<DevchainWallets> {
  if (SERVICE_SENDERS.includes(funderIndex)) throw new Error(`demo account ${funderIndex} is one the service sends from; fund from another`);
  const rpcUrl = (await call("GET", "/health?deep=true")).body.devchain.url as string;
  const pub = createPublicClient({ transport: http(rpcUrl) });
  const funder = createWalletClient({ account: mnemonicToAccount(DEMO_MNEMONIC, { addressIndex: funderIndex }), transport: http(rpcUrl) });
  const balance = (address: Hex) => pub.readContract({ address: DEVCHAIN_USDC, abi: TestUSDC.abi, functionName: "balanceOf", args: [address] });
  const fund = async (to: Hex, amount: bigint) => {
    const hash = await funder.writeContract({ address: DEVCHAIN_USDC, abi: TestUSDC.abi, functionName: "mint", args: [to, amount], chain: null });
    await pub.waitForTransactionReceipt({ hash });
  };
  const rpc = async (method: string, params: unknown[]) => {
    const r = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = (await r.json()) as { error?: unknown };
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  };
  return {
    rpcUrl,
    pub,
    balance,
    fund,
    async advanceClock(seconds: number) {
      await rpc("evm_increaseTime", [seconds]);
      await rpc("evm_mine", []);
    },
    async fundGas(to: Hex, wei: bigint) {
      const hash = await funder.sendTransaction({ to, value: wei, chain: null });
      await pub.waitForTransactionReceipt({ hash });
    },
    async fundedBuyer(amount = 1_000_000n) {
      const buyer = privateKeyToAccount(generatePrivateKey());
      await fund(buyer.address, amount);
      return buyer;
    },
  };
}
