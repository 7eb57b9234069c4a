import { chainOfFamily, checkPayoutAddress } from "@c402/chain-addresses";
import type { paymentsV1 } from "@c402/contracts";
import { platformFeeBpsAtCreate } from "@c402/money";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import type { ServiceClients } from "../http/deps";

/**
 * A checkout takes a payout rail only where a buyer can pay it. A Solana
 * payment is one transfer to the associated USDC account of the seller's
 * wallet (ADR 15), a Stellar one a transfer the seller's account receives
 * through its USDC trustline (ADR 17); the service never creates either (the
 * rent or reserve would be the service's to pay, for any account a seller
 * names), so a wallet without one is refused before the checkout takes it, at
 * create and when a rail is added. The same holds for the platform's fee wallet on Solana, which a
 * checkout with a platform cut takes from the platform account's standing
 * wallets. Only payments reads the chains: it says which rails it checks (none
 * on a chain it does not settle) and whether their accounts exist.
 */

/** A payout wallet of one chain family (CAIP-2 namespace), as identity and catalog store it. */
export interface PayoutRail {
  chainFamily: string;
  address: string;
  /** What the checkout pays the wallet: the seller's sale (absent), or the platform's cut. */
  takes?: "platform-fee";
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
  const checked = distinctWallets(rails.filter(needsAccount));
  if (checked.length === 0) return;
  const { checks } = await payments.checkPayoutAccounts({ rails: checked.map(({ chainFamily, address }) => ({ chainFamily, address })) });
  const missing = checks.find((c) => !c.exists);
  if (missing)
    throw payoutAccountMissing(
      missing,
      checked.find((r) => r.chainFamily === missing.chainFamily && r.address === missing.address),
    );
}

/** One question per wallet: a platform's own Solana wallet can be both its payout rail and its fee wallet (the payout named first). */
function distinctWallets(rails: readonly PayoutRail[]): PayoutRail[] {
  return rails.filter((r, i) => rails.findIndex((o) => o.chainFamily === r.chainFamily && o.address === r.address) === i);
}

/**
 * The wallets a checkout create takes from the account's standing ones
 * (catalog copies the default one per chain): its payout rails when
 * `pay_to` is omitted (a `pay_to` sent is its only rail, EVM: none to
 * check), and the platform's fee wallets when the create takes a platform cut
 * (catalog's rule, @c402/money platformFeeBpsAtCreate, frozen beside
 * platform_fee_to). Identity is asked only what the body leaves open.
 */
export async function railsTakenAtCreate(
  identity: ServiceClients["identity"],
  accountId: string,
  sent: { payTo: string | undefined; platformFeeBps: number | undefined },
): Promise<PayoutRail[]> {
  const takesPayoutRails = sent.payTo === undefined;
  const takesFeeWallets = sent.platformFeeBps !== 0 && (await takesPlatformCut(identity, accountId, sent.platformFeeBps));
  if (!takesPayoutRails && !takesFeeWallets) return [];
  const { wallets } = await identity.getPayoutWallets({ accountId });
  const standing = wallets.filter((w) => w.isDefault).map(({ chainFamily, address }) => ({ chainFamily, address }));
  return [...(takesPayoutRails ? standing : []), ...(takesFeeWallets ? standing.map((w) => ({ ...w, takes: "platform-fee" as const })) : [])];
}

/** Whether catalog will freeze a platform cut on the checkout: a fee above 0 and the fee wallet it is paid to (else catalog refuses the create). */
async function takesPlatformCut(identity: ServiceClients["identity"], accountId: string, sentBps: number | undefined): Promise<boolean> {
  const { settings } = await identity.getPlatformSettings({ accountId });
  if (!settings?.platformAccount || !settings.platformFeeTo) return false;
  return platformFeeBpsAtCreate(sentBps, settings) > 0;
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

function payoutAccountMissing(missing: paymentsV1.PayoutAccountCheck, rail: PayoutRail | undefined): ProblemError {
  const chain = chainOfFamily(missing.chainFamily) ?? missing.chainFamily;
  const wallet =
    rail?.takes === "platform-fee"
      ? `platform fee wallet ${missing.address} (your standing ${chain} payout wallet, which takes this checkout's platform cut on ${chain})`
      : `payout wallet ${missing.address}`;
  const common = { chain, address: missing.address, network: missing.network, asset: missing.asset };
  if (chain === "stellar")
    return new ProblemError("payout-account-missing", {
      message:
        `The ${chain} ${wallet} has no USDC trustline on ${missing.network} (asset ${missing.asset}), so no buyer could pay it. ` +
        `The service never creates a trustline for you.`,
      help: {
        fix:
          `Add a trustline to ${missing.asset} on the account ${missing.address} (it sets aside 0.5 XLM of the account's own balance): ` +
          `"add asset" USDC in a Stellar wallet app, or submit a ChangeTrust operation for ${missing.asset} on ${missing.network}; then retry.`,
        retry_is_safe: false,
      },
      extensions: common,
    });
  return new ProblemError("payout-account-missing", {
    message:
      `The ${chain} ${wallet} has no USDC account on ${missing.network}: its associated token account ` +
      `${missing.account} does not exist, so no buyer could pay it. The service never creates that account for you.`,
    help: {
      fix:
        `Create the USDC account ${missing.account} (about 0.002 SOL of rent, paid by you and returned if you close it): receive any amount ` +
        `of USDC (mint ${missing.asset}) at ${missing.address} from a wallet app, which creates it, or run ` +
        `\`spl-token create-account ${missing.asset} --owner ${missing.address}\` against ${missing.network}; then retry.`,
      retry_is_safe: false,
    },
    extensions: { ...common, token_account: missing.account },
  });
}
