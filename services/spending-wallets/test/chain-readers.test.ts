import { startDevchain, type RunningDevchain } from "@c402/devchain";
import { startSolanaDevnet, type SolanaDevnet } from "@c402/solana-devnet";
import { address } from "@solana/kit";
import { createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { evmChainReader, solanaChainReader } from "../src/chain/chain-readers";
import { generateWallet } from "../src/domain/wallet-keys";

/** The JSON-RPC readers against the local chains: what GetBalance, the engine's balance check and SelfCheck read. */
describe("chain readers", () => {
  describe("solana (the local devnet)", () => {
    let devnet: SolanaDevnet;
    beforeAll(async () => {
      devnet = await startSolanaDevnet({ port: 0 });
    });
    afterAll(() => devnet?.close());

    it("reads a wallet's USDC (0 before its token account exists) and lamports; ping answers", async () => {
      const reader = solanaChainReader({ network: devnet.network, rpcUrl: devnet.url, usdcMint: devnet.usdcMint });
      const wallet = generateWallet("solana").address;
      expect(await reader.usdcOf(wallet)).toBe(0n);
      expect(await reader.nativeOf(wallet)).toBe(0n);
      await devnet.setTokenBalance(address(wallet), 1_250_000n);
      await devnet.airdrop(address(wallet), 1_000_000_000n); // above the rent-exempt minimum
      expect(await reader.usdcOf(wallet)).toBe(1_250_000n);
      expect(await reader.nativeOf(wallet)).toBe(1_000_000_000n);
      await expect(reader.ping(1_000)).resolves.toBeUndefined();
    });

    it("ping fails when nothing answers", async () => {
      const reader = solanaChainReader({ network: devnet.network, rpcUrl: "http://127.0.0.1:9", usdcMint: devnet.usdcMint });
      await expect(reader.ping(500)).rejects.toThrow();
    });
  });

  describe("base (the devchain)", () => {
    let devchain: RunningDevchain;
    beforeAll(async () => {
      devchain = await startDevchain({ port: 0 });
    }, 120_000);
    afterAll(() => devchain?.stop());

    it("reads a wallet's USDC at the network's USDC and its ETH; ping answers", async () => {
      const reader = evmChainReader({ network: devchain.network, rpcUrl: devchain.url, usdc: devchain.usdc });
      const wallet = generateWallet("base").address;
      expect(await reader.usdcOf(wallet)).toBe(0n);
      expect(await reader.nativeOf(wallet)).toBe(0n);
      // The devchain's first development account (the well-known "test … junk" phrase) holds ETH.
      const funder = createWalletClient({
        account: privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"),
        transport: http(devchain.url),
      });
      const chainId = Number(devchain.network.split(":")[1]);
      await funder.sendTransaction({
        to: wallet as `0x${string}`,
        value: 12_345n,
        chain: {
          id: chainId,
          name: "devchain",
          nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
          rpcUrls: { default: { http: [devchain.url] } },
        },
      });
      expect(await reader.nativeOf(wallet)).toBe(12_345n);
      await expect(reader.ping(2_000)).resolves.toBeUndefined();
    }, 60_000);
  });
});
