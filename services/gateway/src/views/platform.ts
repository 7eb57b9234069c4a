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

/**
 * GET and PUT /v1/account/platform's answer. `fee_wallets` names the wallet
 * the cut goes to on each network a checkout of this account can settle on
 * in this run (the fee wallet is an EVM address: the EVM networks, rehearsal
 * included); `max_bps` is the ceiling of any platform fee.
 */
export function platformSettingsView(settings: identityV1.PlatformSettings | undefined, evmNetworks: readonly string[]) {
  const feeTo = settings?.platformFeeTo ?? null;
  return {
    platform_account: settings?.platformAccount ?? false,
    platform_fee_bps: settings?.platformFeeBps ?? 0,
    platform_fee_to: feeTo,
    fee_wallets: feeTo === null ? {} : Object.fromEntries(evmNetworks.map((n) => [n, feeTo])),
    max_bps: MAX_PLATFORM_FEE_BPS,
  };
}
