import { chainOfFamily, OFFERED_CHAINS, PAYOUT_CHAINS, payoutChange, type PayoutChain } from "@c402/chain-addresses";
import type { catalogV1, identityV1 } from "@c402/contracts";

/**
 * The public JSON shapes of payout wallets (GET, PUT /v1/account/wallets and
 * its preview) and of a checkout's payout rails. Chains are named as the
 * facilitator's families (base, solana, stellar). `offered` says whether the
 * checkout's faces quote the chain to buyers in this build: every family, each
 * where the deployment settles it (Solana behind its exposure switch, ADR 15;
 * Stellar where it is configured, ADR 17).
 */

export const PAYOUTS_NOTE =
  "Checkouts copy the standing wallets at create (base as pay_to, the others as payout rails) when pay_to is omitted; later changes leave existing checkouts alone. Base, Solana and Stellar rails are offered to buyers, each where this deployment settles it (a checkout with a platform cut is paid on Solana through POST /c/{id}/prepare's two-transfer transaction, and not on Stellar, whose x402 clients sign one transfer).";

const offered = (chain: PayoutChain) => OFFERED_CHAINS.includes(chain);

/** A checkout's rails, base (pay_to) first; an older catalog that sends none still has its pay_to. */
export function payoutRailsView(c: Pick<catalogV1.CheckoutSummary, "payTo" | "payoutRails">) {
  const rails = c.payoutRails?.length ? c.payoutRails : [{ chainFamily: "eip155", address: c.payTo }];
  return rails.flatMap((r) => {
    const chain = chainOfFamily(r.chainFamily);
    return chain ? [{ chain, address: r.address, offered: offered(chain) }] : [];
  });
}

/**
 * The wallets a checkout's platform cut is paid to, by chain ({base, solana}),
 * frozen at create: {} without a cut. An older catalog that sends no fee
 * rails still has its platform_fee_to (base).
 */
export function platformFeeWalletsView(s: Pick<catalogV1.CheckoutSettings, "platformFeeTo" | "platformFeeRails"> | undefined) {
  const feeTo = s?.platformFeeTo;
  const rails = s?.platformFeeRails?.length ? s.platformFeeRails : feeTo ? [{ chainFamily: "eip155", address: feeTo }] : [];
  const wallets: Partial<Record<PayoutChain, string>> = {};
  for (const r of rails) {
    const chain = chainOfFamily(r.chainFamily);
    if (chain) wallets[chain] = r.address;
  }
  return wallets;
}

/** The account's wallets: the standing one per chain, and the wallets a sign-in verified. */
export function payoutWalletsView(wallets: readonly identityV1.PayoutWallet[]) {
  const standing: Record<string, { address: string; verified: boolean; offered: boolean } | null> = {};
  for (const chain of PAYOUT_CHAINS) standing[chain] = null;
  const verified: { chain: PayoutChain; address: string }[] = [];
  for (const w of wallets) {
    const chain = chainOfFamily(w.chainFamily);
    if (!chain) continue;
    if (w.isDefault) standing[chain] = { address: w.address, verified: w.verified, offered: offered(chain) };
    if (w.verified) verified.push({ chain, address: w.address });
  }
  return { object: "payout_wallets", wallets: standing, verified_wallets: verified, note: PAYOUTS_NOTE };
}

/** The answer of a PUT (what is now stored) or of a preview (what a PUT would store; nothing written). */
export function payoutWalletsChangeView(r: identityV1.PutPayoutWalletsResponse, preview: boolean) {
  const changes: Record<string, string> = {};
  for (const c of r.changes) {
    const chain = chainOfFamily(c.chainFamily);
    if (chain) changes[chain] = payoutChange(c.before ?? null, c.after ?? null);
  }
  return { ...payoutWalletsView(r.wallets), ...(preview ? { object: "payout_wallets_preview" } : {}), changed: r.changed, changes };
}
