import type { identityV1 } from "@c402/contracts";
import { breakdown, formatUsd, MAX_PLATFORM_FEE_BPS } from "@c402/money";

/**
 * GET /v1/platform/quote's answer, in decimal USD strings of six decimals,
 * from the same integer maths a checkout's split uses (@c402/money): the
 * platform cut comes out of the price (seller_receives + platform_cut =
 * price_usd), the protocol fee (0.5% + $0.01) goes on top for the buyer
 * (buyer_pays = price_usd + protocol_fee). Percentages round down to the
 * atomic unit.
 */
export function platformQuoteView(price: bigint, platformFeeBps: number) {
  const b = breakdown(price, { platformFeeBps });
  return {
    price_usd: formatUsd(b.price),
    platform_fee_bps: platformFeeBps,
    buyer_pays: formatUsd(b.total),
    seller_receives: formatUsd(b.providerAmount),
    platform_cut: formatUsd(b.platformAmount ?? 0n),
    protocol_fee: formatUsd(b.feeAmount),
  };
}

/** The networks a checkout of the account can settle on in this run, by the kind of fee wallet each pays: EVM (rehearsal included) and Solana. */
export interface FeeNetworks {
  evm: readonly string[];
  solana: readonly string[];
}

/**
 * GET and PUT /v1/account/platform's answer. `fee_wallets` names the wallet
 * the cut goes to on each network a checkout of this account can settle on
 * in this run: `platform_fee_to` on the EVM networks, and the account's
 * standing Solana payout wallet (which checkouts with a cut freeze) on the
 * Solana network when it has one; none without `platform_fee_to` (no cut can
 * be taken). `max_bps` is the ceiling of any platform fee.
 */
export function platformSettingsView(settings: identityV1.PlatformSettings | undefined, networks: FeeNetworks, solanaWallet: string | undefined) {
  const feeTo = settings?.platformFeeTo ?? null;
  const feeWallets = (to: string | undefined, on: readonly string[]) => (feeTo !== null && to !== undefined ? on.map((n) => [n, to] as const) : []);
  return {
    platform_account: settings?.platformAccount ?? false,
    platform_fee_bps: settings?.platformFeeBps ?? 0,
    platform_fee_to: feeTo,
    fee_wallets: Object.fromEntries([...feeWallets(feeTo ?? undefined, networks.evm), ...feeWallets(solanaWallet, networks.solana)]),
    max_bps: MAX_PLATFORM_FEE_BPS,
  };
}
