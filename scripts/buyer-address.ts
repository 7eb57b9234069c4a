/** Prints the demo buyer's address (the wallet kept in .data/demo-buyer-wallet.json). */
import { demoWallet } from "./demo-wallet";

process.stdout.write(`${demoWallet(process.env.BUYER_WALLET_FILE ?? ".data/demo-buyer-wallet.json").address}\n`);
