/**
 * Prints the demo buyer's address: its EVM wallet (.data/demo-buyer-wallet.json), with --solana its
 * Solana wallet, with --stellar its Stellar account (BUYER_STELLAR_WALLET_FILE, default
 * .data/demo-buyer-stellar-wallet.json).
 */
import { demoWallet } from "./demo-wallet";
import { DEMO_BUYER_SOLANA_WALLET, demoSolanaWallet } from "./demo-solana-wallet";
import { DEMO_BUYER_STELLAR_WALLET, demoStellarWallet } from "./demo-stellar-wallet";

async function main() {
  const address = process.argv.includes("--solana")
    ? (await demoSolanaWallet(process.env.BUYER_SOLANA_WALLET_FILE ?? DEMO_BUYER_SOLANA_WALLET)).address
    : process.argv.includes("--stellar")
      ? demoStellarWallet(process.env.BUYER_STELLAR_WALLET_FILE ?? DEMO_BUYER_STELLAR_WALLET).publicKey()
      : demoWallet(process.env.BUYER_WALLET_FILE ?? ".data/demo-buyer-wallet.json").address;
  process.stdout.write(`${address}\n`);
}

void main();
