/**
 * Signs in as a seller with a wallet (the wallet bootstrap of the spec):
 * challenge -> EIP-191 signature. Every sign-in returns a fresh automation key
 * (test mode, scope full), shown once: the first creates the account and its
 * first key, a later one is how a wallet-only seller recovers access. The demo
 * wallet's private key is kept in .data/demo-seller-wallet.json so that
 * signing in again finds the same account.
 *
 *   npm run -s seller:login [-- --url http://127.0.0.1:4020]
 * Prints `export API_KEY=...` and `export SESSION=...` (eval them) and the account on stderr.
 */
import { demoWallet } from "./demo-wallet";

const args = process.argv.slice(2);
const url = (
  args[args.indexOf("--url") + 1] && args.includes("--url") ? args[args.indexOf("--url") + 1] : (process.env.C402_URL ?? "http://127.0.0.1:4020")
) as string;
const walletFile = process.env.SELLER_WALLET_FILE ?? ".data/demo-seller-wallet.json";

async function post(path: string, body: unknown, bearer?: string) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path} -> ${res.status}: ${JSON.stringify(json)}`);
  return json as Record<string, any>;
}

async function main() {
  const account = demoWallet(walletFile);
  const challenge = await post("/auth/wallet/challenge", { address: account.address, network: "eip155:8453" });
  const signature = await account.signMessage({ message: challenge.message });
  const signedIn = await post("/auth/wallet/verify", { message: challenge.message, signature });
  process.stderr.write(
    `seller wallet ${account.address}, account ${signedIn.account.id} (${signedIn.account.created ? "created; its first key" : "existing; a fresh test key"})\n`,
  );
  process.stdout.write(`export API_KEY=${signedIn.api_key.secret}\n`);
  // The session the sign-in opened: what the dashboard holds (spending wallets' management needs one).
  if (signedIn.session?.token) process.stdout.write(`export SESSION=${signedIn.session.token}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
