import { CHAIN_FAMILY, chainOfFamily, checkPayoutAddress, PAYOUT_CHAINS, type PayoutChain } from "@c402/chain-addresses";
import { invalid, ProblemError } from "@c402/problems";

/**
 * A checkout's payout rails: one address per chain family. The EVM rail is
 * `pay_to` (immutable, what the faces quote); the others live in
 * `payout_rails`. A checkout copies the account's standing wallets at create
 * (a snapshot: later changes to the account's wallets leave it alone) and
 * gains rails only additively afterwards. Which chains' rails buyers are
 * offered: @c402/chain-addresses OFFERED_CHAINS.
 */

const EVM_FAMILY = CHAIN_FAMILY.base;

/** A standing wallet of the account, as identity answers it. */
export interface AccountWallet {
  chainFamily: string;
  address: string;
  isDefault: boolean;
}

/** The account's standing EVM wallet, which an omitted pay_to takes; 422 naming pay_to when it has none. */
export function standingPayTo(wallets: readonly AccountWallet[]): string {
  const evm = wallets.filter((w) => w.chainFamily === EVM_FAMILY);
  const wallet = evm.find((w) => w.isDefault) ?? evm[0];
  if (!wallet) throw invalid([{ field: "pay_to", reason: "is required: this account has no standing EVM payout wallet" }]);
  return wallet.address;
}

/** The account's standing wallets of the other families, copied onto a checkout that inherits the account's payouts. */
export function inheritedRails(wallets: readonly AccountWallet[]): Record<string, string> {
  const rails: Record<string, string> = {};
  for (const w of wallets) if (w.isDefault && w.chainFamily !== EVM_FAMILY && chainOfFamily(w.chainFamily)) rails[w.chainFamily] = w.address;
  return rails;
}

/**
 * The rails a new checkout gets. A pay_to sent is its only rail (the seller
 * named where it pays; more can be added later). Omitted, which needs
 * inherit_account_payouts (accountTermsOf), the account's standing wallet
 * of each chain is copied: EVM as pay_to, the others as rails. Copied now:
 * later changes to the account's wallets leave the checkout alone.
 */
export function payoutsAtCreate(wallets: readonly AccountWallet[], payTo: string | null): { payTo: string; rails: Record<string, string> } {
  if (payTo !== null) return { payTo, rails: {} };
  return { payTo: standingPayTo(wallets), rails: inheritedRails(wallets) };
}

/**
 * The platform's fee wallets beside its EVM one (platform_fee_to) that a
 * checkout with a cut freezes: the creating platform account's standing
 * wallet of each other chain (Solana), copied like the payout rails. None
 * without a cut; a chain with no standing wallet gets none (payments then
 * does not offer that chain for the checkout).
 */
export function platformFeeRailsAtCreate(wallets: readonly AccountWallet[], terms: { platformFeeTo: string | null }): Record<string, string> {
  return terms.platformFeeTo !== null ? inheritedRails(wallets) : {};
}

/** Every fee wallet of a checkout's platform cut, EVM (platform_fee_to) first; none without a cut. */
export function platformFeeRailsOf(c: { platform_fee_to: string | null; platform_fee_rails: Readonly<Record<string, string>> }) {
  return c.platform_fee_to === null ? [] : railsOf({ pay_to: c.platform_fee_to, payout_rails: c.platform_fee_rails });
}

/** Every rail of a checkout, EVM (pay_to) first, then by family in the API's order. */
export function railsOf(c: { pay_to: string; payout_rails: Readonly<Record<string, string>> }): { chainFamily: string; address: string }[] {
  const rails = [{ chainFamily: EVM_FAMILY, address: c.pay_to }];
  for (const chain of PAYOUT_CHAINS) {
    const family = CHAIN_FAMILY[chain];
    const address = c.payout_rails[family];
    if (family !== EVM_FAMILY && address !== undefined) rails.push({ chainFamily: family, address });
  }
  return rails;
}

/**
 * The rail a POST /v1/checkouts/{id}/payouts adds, checked against the
 * checkout: 422 for an address its chain refuses (naming `address`) or an
 * unknown chain (naming `chain`); 409 for a void checkout, and for a chain
 * that already has an address (rails are additive only: never replaced).
 * Answers the rails with the new one.
 */
export function withAddedRail(
  current: { pay_to: string; payout_rails: Readonly<Record<string, string>>; voided_at: Date | null },
  chainFamily: string,
  text: string,
): { rails: Record<string, string>; chain: PayoutChain; address: string } {
  const chain = chainOfFamily(chainFamily);
  if (!chain) throw invalid([{ field: "chain", reason: `must be one of ${PAYOUT_CHAINS.join(", ")}` }]);
  const checked = checkPayoutAddress(chain, text);
  if (!checked.ok) throw invalid([{ field: "address", reason: checked.reason }]);
  if (current.voided_at) throw new ProblemError("conflict", "A voided checkout cannot gain a payout rail; restore it first.");
  const existing = chainFamily === EVM_FAMILY ? current.pay_to : current.payout_rails[chainFamily];
  if (existing !== undefined) {
    throw new ProblemError("conflict", {
      message: `This checkout already pays out on ${chain} (to ${existing}); payout rails are additive only.`,
      help: { fix: "Create a new checkout to pay out to another address on this chain.", retry_is_safe: false },
      extensions: { chain, address: existing },
    });
  }
  return { rails: { ...current.payout_rails, [chainFamily]: checked.address }, chain, address: checked.address };
}
