/**
 * Pays a checkout URL with the official x402 client (@x402/fetch 2.27, unmodified)
 * from the demo buyer wallet, and prints the settlement and the response. With
 * --solana it pays the checkout's Solana requirement (@x402/svm 2.27) from the
 * demo Solana wallet, through the local Solana devnet's RPC.
 *
 *   npm run -s buyer:pay-official -- http://127.0.0.1:4020/c/<id> [--solana]
 */
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { toClientSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { demoWallet } from "./demo-wallet";
import { DEMO_BUYER_SOLANA_WALLET, demoSolanaWallet, localSolanaDevnet } from "./demo-solana-wallet";

async function main() {
  const url = process.argv[2];
  if (!url) throw new Error("usage: buyer:pay-official <checkout url>");
  const client = new x402Client();
  if (process.argv.includes("--solana")) {
    // The scheme is given the local devnet's RPC: left to itself it would ask the public Solana devnet.
    const signer = toClientSvmSigner(await demoSolanaWallet(process.env.BUYER_SOLANA_WALLET_FILE ?? DEMO_BUYER_SOLANA_WALLET));
    client.register("solana:*", new ExactSvmScheme(signer, { rpcUrl: (await localSolanaDevnet()).url }));
  } else {
    registerExactEvmScheme(client, { signer: demoWallet(process.env.BUYER_WALLET_FILE ?? ".data/demo-buyer-wallet.json") });
  }
  const res = await wrapFetchWithPayment(fetch, client)(url, { headers: { accept: "application/json" } });
  const header = res.headers.get("PAYMENT-RESPONSE");
  process.stdout.write(
    `${JSON.stringify({ status: res.status, settlement: header ? decodePaymentResponseHeader(header) : null, body: await res.json() }, null, 2)}\n`,
  );
  if (!res.ok) process.exit(1);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
