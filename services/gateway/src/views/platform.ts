import { breakdown, formatUsd } from "@c402/money";

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
