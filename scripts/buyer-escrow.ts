/**
 * A minimal escrow buyer (or seller, for cancel), with the demo wallet: it
 * deposits into an escrow checkout through its face, and acts on the escrow
 * through the relayed action routes, signing typed data as a wallet does.
 *
 *   npm run -s buyer:escrow -- pay http://127.0.0.1:4020/e/<id>           # prepare, sign, pay: the goods, the escrow held
 *   npm run -s buyer:escrow -- act http://127.0.0.1:4020/e/<id> <payment_id> approve|hold|request-refund
 *
 * SIGNER_WALLET_FILE signs an action with another wallet (the seller's, for cancel).
 */
import { encodeHeader, signEscrowDeposit } from "@c402/x402";
import { parseSignature, type Hex } from "viem";
import { demoWallet } from "./demo-wallet";
import { postJson as post, signable, type TypedDataJson } from "./wallet-requests";

const walletFile = process.env.SIGNER_WALLET_FILE ?? process.env.BUYER_WALLET_FILE ?? ".data/demo-buyer-wallet.json";

async function pay(face: string) {
  const account = demoWallet(walletFile);
  const prepared = await post(`${face}/prepare`, { payer: account.address });
  const stub = prepared.payload_stub;
  process.stderr.write(`depositing ${stub.accepted.amount} atomic USDC into escrow at ${stub.accepted.payTo} from ${account.address}\n`);
  const payment = await signEscrowDeposit(account, {
    requirement: stub.accepted,
    authorization: stub.payload.authorization,
    resourceUrl: stub.resource.url,
    salt: stub.payload.salt,
  });
  return post(`${face}/pay`, undefined, { "PAYMENT-SIGNATURE": encodeHeader(payment) });
}

async function act(face: string, paymentId: string, action: string) {
  const account = demoWallet(walletFile);
  const prepared = await post(`${face}/actions/${action}?payment_id=${paymentId}`);
  if ((prepared.signer as string).toLowerCase() !== account.address.toLowerCase()) {
    throw new Error(`${action} must be signed by ${prepared.signer}, not ${account.address} (SIGNER_WALLET_FILE names another wallet)`);
  }
  const { v, r, s } = parseSignature((await account.signTypedData(signable(prepared.typed_data as TypedDataJson))) as Hex);
  return post(prepared.submit_url as string, { v: Number(v), r, s, deadline: prepared.deadline });
}

async function main() {
  const [command, face, ...rest] = process.argv.slice(2);
  if (!face || (command !== "pay" && command !== "act") || (command === "act" && rest.length !== 2)) {
    throw new Error("usage: buyer:escrow pay <escrow face url> | act <escrow face url> <payment_id> <action>");
  }
  const answer = command === "pay" ? await pay(face) : await act(face, rest[0] as string, rest[1] as string);
  process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
