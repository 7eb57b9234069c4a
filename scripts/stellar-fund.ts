/**
 * Gives an address USDC on the running service's Stellar stand-in, with its
 * cheats: creates the account first when it does not exist (10,000 XLM, as
 * Friendbot gives), then adds `usdc` to its USDC trustline (creating the
 * trustline; 0 only creates it). A seller's Stellar payout wallet needs an
 * account with a USDC trustline before it can be paid; a buyer needs USDC.
 * Local stand-in only.
 *
 *   npm run -s stellar:fund -- <G… address> [usdc, default 10]
 * The stand-in comes from the running service's /health?deep=true (C402_URL,
 * default http://127.0.0.1:4020).
 */
import { Keypair, xdr } from "@stellar/stellar-base";
import { parseUsd } from "@c402/money";
import { localStellarStandin, standinRpc } from "./demo-stellar-wallet";

/** Friendbot's 10,000 XLM. */
const ACCOUNT_STROOPS = "100000000000";

async function main() {
  const [address, amount = "10"] = process.argv.slice(2);
  if (!address) throw new Error("usage: stellar:fund <G… address> [usdc]");
  const standin = await localStellarStandin();
  const accountKey = xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(address).xdrPublicKey() })).toXDR("base64");
  const { entries } = await standinRpc<{ entries: unknown[] }>(standin, "getLedgerEntries", { keys: [accountKey] });
  if (entries.length === 0) await standinRpc(standin, "standin_fundAccount", { accountId: address, stroops: ACCOUNT_STROOPS });
  // The service's amounts have 6 decimals, Stellar's USDC 7.
  const units = parseUsd(amount) * 10n;
  await standinRpc(standin, "standin_mintUsdc", { address, amount: units.toString() });
  const { balance } = await standinRpc<{ balance: string }>(standin, "standin_usdcBalance", { address });
  process.stdout.write(
    `${entries.length === 0 ? "created the account and " : ""}added ${amount} USDC (${units} units, 7 decimals) to ${address} on the ${standin.network} stand-in: balance ${balance} units\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
