/**
 * A minimal x402 buyer: GET the checkout URL, take the 402's first
 * requirement, sign the EIP-3009 authorization, retry with PAYMENT-SIGNATURE
 * and print the goods and the receipt.
 *
 *   npm run -s buyer:pay -- http://127.0.0.1:4020/c/<id>/test
 */
import { decodeHeader, encodeHeader, signExactEvmPayment, type PaymentRequired } from "@c402/x402";
import { demoWallet } from "./demo-wallet";

const walletFile = process.env.BUYER_WALLET_FILE ?? ".data/demo-buyer-wallet.json";

async function main() {
  const url = process.argv[2];
  if (!url) throw new Error("usage: buyer:pay <checkout url>");
  const first = await fetch(url, { headers: { accept: "application/json" } });
  if (first.status !== 402) throw new Error(`expected 402, got ${first.status}: ${await first.text()}`);
  const header = first.headers.get("PAYMENT-REQUIRED");
  if (!header) throw new Error("the 402 has no PAYMENT-REQUIRED header");
  const required = decodeHeader(header) as unknown as PaymentRequired;
  const requirement = required.accepts[0];
  if (!requirement) throw new Error("the 402 lists no requirement");
  const account = demoWallet(walletFile);
  process.stderr.write(`paying ${requirement.amount} atomic USDC on ${requirement.network} to ${requirement.payTo} from ${account.address}\n`);
  const payment = await signExactEvmPayment(account, requirement, { resourceUrl: required.resource.url });
  const paid = await fetch(url, { headers: { accept: "application/json", "PAYMENT-SIGNATURE": encodeHeader(payment) } });
  const settle = paid.headers.get("PAYMENT-RESPONSE");
  process.stdout.write(`${JSON.stringify({ status: paid.status, settlement: settle ? decodeHeader(settle) : null, body: await paid.json() }, null, 2)}\n`);
  if (!paid.ok) process.exit(1);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
