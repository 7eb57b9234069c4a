/**
 * Pays a checkout URL with the official x402 client (@x402/fetch 2.27, unmodified)
 * from the demo buyer wallet, and prints the settlement and the response.
 *
 *   npm run -s buyer:pay-official -- http://127.0.0.1:4020/c/<id>
 */
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { demoWallet } from "./demo-wallet";

async function main() {
  const url = process.argv[2];
  if (!url) throw new Error("usage: buyer:pay-official <checkout url>");
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: demoWallet(process.env.BUYER_WALLET_FILE ?? ".data/demo-buyer-wallet.json") });
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
