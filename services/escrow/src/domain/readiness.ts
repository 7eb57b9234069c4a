import { ESCROW_RULING_GAS_BUDGET } from "@c402/evm-contracts";
import { ESCROW_FAMILY_SUPPORT } from "./arbiters";
import type { GasReader } from "../chain/gas-reader";
import type { EscrowSettings } from "./settings";

/**
 * Whether an account's arbiters can rule (spec, GET /v1/account/escrow/readiness).
 * A ruling on Base is a transaction the arbiter wallet sends and pays gas
 * for: its ETH balance at the current gas price says how many rulings it can
 * afford. A Solana ruling is broadcast on the service's gas.
 */

/** The gas one ruling is budgeted, as measured against the escrow contract (ADR 18). */
export const RULING_GAS = ESCROW_RULING_GAS_BUDGET;
/** The most rulings a balance is counted for (the answer's integer stays small). */
export const MAX_RULINGS_COUNTED = 1_000_000;

export interface EvmReadiness {
  arbiter: string;
  escrowOffered: true;
  network: string | null;
  gasBalance: bigint | null;
  rulingsAffordable: number | null;
  note: string;
}

export interface SvmReadiness {
  arbiter: string;
  escrowOffered: false;
  rulingsUseServiceGas: true;
  note: string;
}

export interface Readiness {
  /** null: no EVM arbiter named. */
  evm: EvmReadiness | null;
  /** null: no Solana arbiter named. */
  svm: SvmReadiness | null;
}

/** How many rulings a balance pays gas for at `gasPrice` (RULING_GAS each), at most MAX_RULINGS_COUNTED. */
export function rulingsAffordable(balance: bigint, gasPrice: bigint): number {
  const perRuling = RULING_GAS * (gasPrice > 0n ? gasPrice : 1n);
  const n = balance / perRuling;
  return n > BigInt(MAX_RULINGS_COUNTED) ? MAX_RULINGS_COUNTED : Number(n);
}

const SVM_NOTE = `Solana rulings are broadcast on the service's gas (the arbiter signs its slot only). ${
  ESCROW_FAMILY_SUPPORT.svm.offered ? "" : ESCROW_FAMILY_SUPPORT.svm.reason
}`.trim();

function evmNote(affordable: number): string {
  if (affordable === 0)
    return "This arbiter cannot pay for a ruling: send it a little ETH on the network named, or escalated escrows wait for the backstop refund.";
  return `This arbiter can pay for about ${affordable} ruling${affordable === 1 ? "" : "s"} at the current gas price (${RULING_GAS} gas each).`;
}

/**
 * The readiness of the settings' arbiters: the EVM one's balance read from
 * the chain (none when the service reads no chain, or the chain did not
 * answer: said in the note, never an error).
 */
export async function arbiterReadiness(settings: EscrowSettings, chain: GasReader | undefined): Promise<Readiness> {
  let evm: EvmReadiness | null = null;
  if (settings.arbiterEvm !== null) {
    const arbiter = settings.arbiterEvm;
    if (!chain) {
      evm = {
        arbiter,
        escrowOffered: true,
        network: null,
        gasBalance: null,
        rulingsAffordable: null,
        note: "This deployment reads no EVM network (EVM_NETWORK unset), so the arbiter's gas balance is not known.",
      };
    } else {
      try {
        const [balance, gasPrice] = await Promise.all([chain.balanceOf(arbiter), chain.gasPrice()]);
        const affordable = rulingsAffordable(balance, gasPrice);
        evm = { arbiter, escrowOffered: true, network: chain.network, gasBalance: balance, rulingsAffordable: affordable, note: evmNote(affordable) };
      } catch {
        evm = {
          arbiter,
          escrowOffered: true,
          network: chain.network,
          gasBalance: null,
          rulingsAffordable: null,
          note: "The network did not answer just now, so the arbiter's gas balance is not known: ask again shortly.",
        };
      }
    }
  }
  const svm: SvmReadiness | null =
    settings.arbiterSvm === null ? null : { arbiter: settings.arbiterSvm, escrowOffered: false, rulingsUseServiceGas: true, note: SVM_NOTE };
  return { evm, svm };
}
