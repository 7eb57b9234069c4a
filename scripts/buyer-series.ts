/**
 * A minimal series buyer (ADR 20), with the demo wallet: it buys a recurring
 * series through the checkout's prepare and pay, signing period 0 and every
 * held period as a wallet does, and cancels a series from its buyer view.
 *
 *   npm run -s buyer:series -- pay http://127.0.0.1:4020/c/<id>            # period 0 paid now, the later periods held
 *   npm run -s buyer:series -- cancel http://127.0.0.1:4020/schedule/<id>  # stop the charging (an EIP-191 signature)
 *   npm run -s buyer:series -- cancel-onchain http://127.0.0.1:4020/schedule/<id>  # void every held authorization on chain
 */
import { encodeHeader } from "@c402/x402";
import { parseSignature, type Hex } from "viem";
import { demoWallet } from "./demo-wallet";
import { postJson, signable, type TypedDataJson } from "./wallet-requests";

const walletFile = process.env.BUYER_WALLET_FILE ?? ".data/demo-buyer-wallet.json";

interface Prepared {
  typed_data: TypedDataJson;
  payload_stub: { payload: { signature: string } };
}

async function signedPayload(account: ReturnType<typeof demoWallet>, prepared: Prepared) {
  const signature = await account.signTypedData(signable(prepared.typed_data));
  return { ...prepared.payload_stub, payload: { ...prepared.payload_stub.payload, signature } };
}

async function pay(face: string) {
  const account = demoWallet(walletFile);
  const prepared = await postJson(`${face}/prepare`, { payer: account.address });
  const held = (prepared.schedule ?? []) as (Prepared & { period: number; valid_after: number })[];
  if (held.length === 0) throw new Error(`${face} is not a series (its prepare answered no schedule[])`);
  process.stderr.write(
    `signing period 0 and ${held.length} held period(s) of ${prepared.payload_stub.accepted.amount} atomic USDC each from ${account.address}\n`,
  );
  const period0 = await signedPayload(account, prepared as Prepared);
  const schedule = await Promise.all(held.map((p) => signedPayload(account, p)));
  return postJson(`${face}/pay`, { schedule }, { "PAYMENT-SIGNATURE": encodeHeader(period0 as never) });
}

async function cancel(view: string, onchain: boolean) {
  const account = demoWallet(walletFile);
  const r = await fetch(view, { headers: { accept: "application/json" } });
  const series = (await r.json()) as { cancel: null | { message: string; onchain: { nonce: string; typed_data: TypedDataJson }[] } };
  if (!r.ok || !series.cancel) throw new Error(`${view} answered ${r.status}: ${JSON.stringify(series)}`);
  if (!onchain) return postJson(`${view}/cancel`, { signature: await account.signMessage({ message: series.cancel.message }) });
  const authorizations = await Promise.all(
    series.cancel.onchain.map(async ({ nonce, typed_data }) => {
      const { v, r: sigR, s } = parseSignature((await account.signTypedData(signable(typed_data))) as Hex);
      return { nonce, signature: { v: Number(v), r: sigR, s } };
    }),
  );
  return postJson(`${view}/cancel`, { authorizations });
}

async function main() {
  const [command, url] = process.argv.slice(2);
  if (!url || !["pay", "cancel", "cancel-onchain"].includes(command as string)) {
    throw new Error("usage: buyer:series pay <checkout face url> | cancel <schedule url> | cancel-onchain <schedule url>");
  }
  const answer = command === "pay" ? await pay(url) : await cancel(url, command === "cancel-onchain");
  process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
