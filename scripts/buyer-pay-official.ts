/**
 * Pays a checkout URL with the official x402 client (@x402/fetch 2.27, unmodified)
 * from the demo buyer wallet, and prints the settlement and the response. With
 * --solana it pays the checkout's Solana requirement (@x402/svm 2.27) from the
 * demo Solana wallet, through the local Solana devnet's RPC. With --stellar it pays
 * the checkout's Stellar requirement (@x402/stellar 2.9) from the demo Stellar
 * wallet, through the service's Soroban RPC stand-in (its CA trusted in this
 * process, stellar.org lookups refused).
 *
 *   npm run -s buyer:pay-official -- http://127.0.0.1:4020/c/<id> [--solana | --stellar]
 */
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment } from "@x402/fetch";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme } from "@x402/stellar/exact/client";
import { toClientSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { demoWallet } from "./demo-wallet";
import { DEMO_BUYER_SOLANA_WALLET, demoSolanaWallet, localSolanaDevnet } from "./demo-solana-wallet";
import { DEMO_BUYER_STELLAR_WALLET, demoStellarWallet, localStellarStandin } from "./demo-stellar-wallet";
import { refuseStellarOrgLookups, trustCertificateInThisProcess } from "@c402/stellar-standin";

async function main() {
  const url = process.argv[2];
  if (!url) throw new Error("usage: buyer:pay-official <checkout url>");
  const client = new x402Client();
  if (process.argv.includes("--solana")) {
    // The scheme is given the local devnet's RPC: left to itself it would ask the public Solana devnet.
    const signer = toClientSvmSigner(await demoSolanaWallet(process.env.BUYER_SOLANA_WALLET_FILE ?? DEMO_BUYER_SOLANA_WALLET));
    client.register("solana:*", new ExactSvmScheme(signer, { rpcUrl: (await localSolanaDevnet()).url }));
  } else if (process.argv.includes("--stellar")) {
    // The client asks Horizon (on the internet) how long ledgers take, and uses 5 s when it cannot: refuse the lookup.
    refuseStellarOrgLookups();
    // The scheme is given the stand-in's RPC (left to itself it would ask the public testnet's), whose
    // certificate a test authority issued: trust it in this process.
    const standin = await localStellarStandin();
    trustCertificateInThisProcess(standin.ca);
    const buyer = demoStellarWallet(process.env.BUYER_STELLAR_WALLET_FILE ?? DEMO_BUYER_STELLAR_WALLET);
    client.register("stellar:*", new ExactStellarScheme(createEd25519Signer(buyer.secret(), standin.network), { url: standin.url }));
    // @x402/core 2.27's spend controls allow only the assets a scheme names as defaults, and @x402/stellar 2.9
    // names none: allow Stellar's USDC, up to 1 USDC a payment (7 decimals).
    client.setSpendControls({ allowedAssets: [{ network: standin.network, asset: standin.usdc, maxAmountPerPayment: "10000000" }] });
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
