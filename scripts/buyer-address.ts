/** Prints the demo buyer's address: its EVM wallet (.data/demo-buyer-wallet.json), or with --solana its Solana wallet. */
import { demoWallet } from "./demo-wallet";
import { DEMO_BUYER_SOLANA_WALLET, demoSolanaWallet } from "./demo-solana-wallet";

async function main() {
  const address = process.argv.includes("--solana")
    ? (await demoSolanaWallet(process.env.BUYER_SOLANA_WALLET_FILE ?? DEMO_BUYER_SOLANA_WALLET)).address
    : demoWallet(process.env.BUYER_WALLET_FILE ?? ".data/demo-buyer-wallet.json").address;
  process.stdout.write(`${address}\n`);
}

void main();
