import { CHAIN_FAMILIES, type ChainFamily, type LiveNetworks } from "../http/rails";

/**
 * GET /health/facilitator: what each chain family settles right now, in one
 * stable shape. Every family always carries the same four keys:
 *  - `networks`: the CAIP-2 ids it settles live (what /x402/{family}/supported lists);
 *  - `available`: whether its facilitator can verify and settle a live payment now;
 *  - `settles`: `live` (on-chain), `rehearsal-only` (only simulated rehearsals:
 *    no live network is configured) or `none`;
 *  - `reason`: why it is not available, null when it is.
 * `status` is `degraded` when the payments service did not answer (then no
 * family is available), else `ok`: a family this deployment does not build is
 * a fact of the deployment, not a fault.
 */

export type Settles = "live" | "rehearsal-only" | "none";

export interface ChainHealth {
  networks: string[];
  available: boolean;
  settles: Settles;
  reason: string | null;
}

const NAMES: Record<ChainFamily, string> = { base: "Base (EVM)", solana: "Solana", stellar: "Stellar" };

/** Rehearsals settle simulated on an EVM network, so the base family always has them while payments answers. */
const REHEARSES: Record<ChainFamily, boolean> = { base: true, solana: false, stellar: false };

function notBuilt(family: ChainFamily): string {
  return `${NAMES[family]} settlement is not available on this deployment yet.`;
}

function chainOf(family: ChainFamily, answer: LiveNetworks): ChainHealth {
  const networks = answer[family];
  if (networks.length > 0) return { networks, available: true, settles: "live", reason: null };
  if (REHEARSES[family]) {
    return {
      networks,
      available: false,
      settles: "rehearsal-only",
      reason:
        "No live network is configured in this run: the facilitator settles nothing and an armed live face answers 503; rehearsals still settle simulated.",
    };
  }
  return { networks, available: false, settles: "none", reason: notBuilt(family) };
}

/** A family while payments does not answer: its last known networks, nothing settles. */
function unreachable(family: ChainFamily, lastKnown: LiveNetworks | undefined): ChainHealth {
  const networks = lastKnown?.[family] ?? [];
  const built = REHEARSES[family] || networks.length > 0;
  return {
    networks,
    available: false,
    settles: "none",
    reason: built ? "The payments service did not answer: nothing settles until it is back." : notBuilt(family),
  };
}

/** `answer`: what payments said now, or undefined when it did not answer (then `lastKnown` names the networks). */
export function facilitatorHealthView(answer: LiveNetworks | undefined, lastKnown: LiveNetworks | undefined, checkedAt: Date) {
  const chains = Object.fromEntries(CHAIN_FAMILIES.map((family) => [family, answer ? chainOf(family, answer) : unreachable(family, lastKnown)])) as Record<
    ChainFamily,
    ChainHealth
  >;
  return { status: answer ? ("ok" as const) : ("degraded" as const), checked_at: checkedAt.toISOString(), chains };
}
