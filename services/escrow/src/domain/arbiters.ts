import { checkEvmAddress, checkSolanaAddress, type AddressCheck } from "@c402/chain-addresses";
import type { FieldError } from "@c402/problems";

/**
 * Arbiters (spec, Escrow create fields): the wallet that rules on an
 * escalated escrow, one per chain family. Terms freeze the arbiter at
 * create; it is resolved explicit on the create first, then the account's
 * escrow setting, then the service default. A family with no arbiter offers
 * no escrow rail.
 */

export const ARBITER_FAMILIES = ["evm", "svm"] as const;
export type ArbiterFamily = (typeof ARBITER_FAMILIES)[number];
export type PerFamily<T> = Record<ArbiterFamily, T>;

/** An arbiter's address checked for its family: EVM answered checksummed (as payout wallets), Solana base58 of 32 bytes. */
export function checkArbiter(family: ArbiterFamily, text: string): AddressCheck {
  return family === "evm" ? checkEvmAddress(text) : checkSolanaAddress(text);
}

/**
 * Whether this deployment runs escrow on a family: Base (EVM) through the
 * escrow contract; Solana needs an on-chain program this codebase cannot
 * build (no SBF toolchain; docs/architecture.md), so no Solana escrow rail is
 * ever offered.
 */
export const ESCROW_FAMILY_SUPPORT: PerFamily<{ offered: true } | { offered: false; reason: string }> = {
  evm: { offered: true },
  svm: { offered: false, reason: "Solana escrow is not offered by this deployment: it needs an on-chain program this service does not run." },
};

export type ArbiterSource = "create" | "account" | "service";

export interface EscrowRail {
  family: ArbiterFamily;
  /** undefined: none named anywhere. */
  arbiter?: string;
  source?: ArbiterSource;
  offered: boolean;
  /** Why it is not offered ("" when it is). */
  reason: string;
}

export interface ArbiterInputs {
  /** Named on the create (request fields arbiter_evm, arbiter_svm); unchecked text. */
  explicit: Partial<PerFamily<string | undefined>>;
  /** The account's escrow settings (already checked when stored). */
  account: PerFamily<string | null>;
  /** The service's defaults (ESCROW_DEFAULT_ARBITER_EVM, …; checked at start). */
  service: Partial<PerFamily<string | undefined>>;
  /** A platform account creating for a sub-seller: only an arbiter named on the create counts. */
  forSubSeller: boolean;
}

const FIELD: PerFamily<string> = { evm: "arbiter_evm", svm: "arbiter_svm" };

/**
 * The rails of an escrow checkout: the arbiter of each family by the
 * resolution order, and whether its escrow rail is offered. Refused (every
 * reason at once): an explicit arbiter that is not an address of its family;
 * an explicit Solana arbiter (no Solana escrow here); a sub-seller's create
 * naming no arbiter; terms that would offer no rail at all.
 */
export function resolveArbiters(input: ArbiterInputs): { ok: true; rails: EscrowRail[] } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const rails: EscrowRail[] = [];
  for (const family of ARBITER_FAMILIES) {
    const support = ESCROW_FAMILY_SUPPORT[family];
    const given = input.explicit[family];
    let found: { arbiter: string; source: ArbiterSource } | undefined;
    if (given !== undefined) {
      const checked = checkArbiter(family, given);
      if (!checked.ok) errors.push({ field: FIELD[family], reason: checked.reason });
      else if (!support.offered) errors.push({ field: FIELD[family], reason: support.reason });
      else found = { arbiter: checked.address, source: "create" };
    } else if (!input.forSubSeller) {
      const fromAccount = input.account[family];
      const fromService = input.service[family];
      if (fromAccount !== null) found = { arbiter: fromAccount, source: "account" };
      else if (fromService !== undefined) found = { arbiter: fromService, source: "service" };
    }
    const arbiter = found?.arbiter;
    const source = found?.source;
    const offered = arbiter !== undefined && support.offered;
    const reason = offered ? "" : !support.offered ? support.reason : "No arbiter is named for this chain family, so it offers no escrow rail.";
    rails.push({ family, ...(arbiter !== undefined ? { arbiter } : {}), ...(source ? { source } : {}), offered, reason });
  }
  if (errors.length) return { ok: false, errors };
  if (input.forSubSeller && ARBITER_FAMILIES.every((f) => input.explicit[f] === undefined)) {
    return {
      ok: false,
      errors: [{ field: FIELD.evm, reason: "is required: a platform creating an escrow checkout for a sub-seller must name the arbiter on the create" }],
    };
  }
  if (!rails.some((r) => r.offered)) {
    return {
      ok: false,
      errors: [
        {
          field: FIELD.evm,
          reason:
            "is required: no arbiter is named for Base (the create, the account's escrow_arbiter_evm and the service default name none), and a chain with no arbiter offers no escrow rail",
        },
      ],
    };
  }
  return { ok: true, rails };
}
