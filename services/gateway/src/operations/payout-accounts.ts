import { chainOfFamily, checkPayoutAddress } from "@c402/chain-addresses";
import type { paymentsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import type { ServiceClients } from "../http/deps";

/**
 * A checkout takes a payout rail only where a buyer can pay it. A Solana
 * payment is one transfer to the associated USDC account of the seller's
 * wallet (ADR 15); the service never creates that account (its rent would be
 * the service's to pay, for any account a seller names), so a wallet without
 * one is refused before the checkout takes it, at create and when a rail is
 * added. Only payments reads the chains: it says which rails it checks (none
 * while Solana is off) and whether their accounts exist.
 */

/** A payout wallet of one chain family (CAIP-2 namespace), as identity and catalog store it. */
export interface PayoutRail {
  chainFamily: string;
  address: string;
}

/**
 * Whether payments is asked about a rail. The EVM rail is paid through the
 * checkout's split contract: no account to look for. An address its chain
 * refuses is refused by catalog, with the reason: no account to look for either.
 */
function needsAccount(rail: PayoutRail): boolean {
  const chain = chainOfFamily(rail.chainFamily);
  return chain !== undefined && chain !== "base" && checkPayoutAddress(chain, rail.address).ok;
}

/**
 * Throws 422 `payout-account-missing` when a rail's receiving account does not
 * exist on the network payments settles its chain on, 503 `unavailable` when
 * that network does not answer (nothing is created unverified).
 */
export async function ensurePayoutAccounts(payments: ServiceClients["payments"], rails: readonly PayoutRail[]): Promise<void> {
  const checked = rails.filter(needsAccount);
  if (checked.length === 0) return;
  const { checks } = await payments.checkPayoutAccounts({ rails: checked });
  const missing = checks.find((c) => !c.exists);
  if (missing) throw payoutAccountMissing(missing);
}

/**
 * The rails a checkout created with `pay_to` omitted copies: the account's
 * standing wallet of each chain (catalog copies the default one per chain).
 * A `pay_to` sent is the checkout's only rail (EVM): none to check.
 */
export async function railsTakenAtCreate(identity: ServiceClients["identity"], accountId: string, payTo: string | undefined): Promise<PayoutRail[]> {
  if (payTo !== undefined) return [];
  const { wallets } = await identity.getPayoutWallets({ accountId });
  return wallets.filter((w) => w.isDefault).map(({ chainFamily, address }) => ({ chainFamily, address }));
}

/**
 * Before a rail is added to a checkout (POST /v1/checkouts/{id}/payouts):
 * another account's checkout stays 404, and a chain the checkout already pays
 * out on stays catalog's 409, before the wallet is looked at.
 */
export async function ensureAddedRailPayable(
  clients: Pick<ServiceClients, "catalog" | "payments">,
  accountId: string,
  checkoutId: string,
  rail: PayoutRail,
): Promise<void> {
  if (!needsAccount(rail)) return;
  const { checkout } = await clients.catalog.getCheckout({ checkoutId, accountId });
  if (answered(checkout, "checkout").payoutRails.some((r) => r.chainFamily === rail.chainFamily)) return;
  await ensurePayoutAccounts(clients.payments, [rail]);
}

function payoutAccountMissing(missing: paymentsV1.PayoutAccountCheck): ProblemError {
  const chain = chainOfFamily(missing.chainFamily) ?? missing.chainFamily;
  return new ProblemError("payout-account-missing", {
    message:
      `The ${chain} payout wallet ${missing.address} has no USDC account on ${missing.network}: its associated token account ` +
      `${missing.account} does not exist, so no buyer could pay it. The service never creates that account for you.`,
    help: {
      fix:
        `Create the USDC account ${missing.account} (about 0.002 SOL of rent, paid by you and returned if you close it): receive any amount ` +
        `of USDC (mint ${missing.asset}) at ${missing.address} from a wallet app, which creates it, or run ` +
        `\`spl-token create-account ${missing.asset} --owner ${missing.address}\` against ${missing.network}; then retry.`,
      retry_is_safe: false,
    },
    extensions: { chain, address: missing.address, network: missing.network, asset: missing.asset, token_account: missing.account },
  });
}
