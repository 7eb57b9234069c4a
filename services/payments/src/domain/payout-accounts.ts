import { invalid, ProblemError } from "@c402/problems";
import type { SvmChain } from "@c402/svm-chain";

/** A payout wallet of one chain family (CAIP-2 namespace: eip155, solana, stellar). */
export interface PayoutRail {
  chainFamily: string;
  address: string;
}

/** Where payments to a payout wallet land on the network this run settles its chain on, and whether it exists. */
export interface PayoutAccountCheck extends PayoutRail {
  network: string;
  asset: string;
  account: string;
  exists: boolean;
}

const SOLANA_FAMILY = "solana";

/**
 * Whether payout wallets can be paid: a buyer's Solana payment is one
 * TransferChecked to the associated USDC account of `payTo` (ADR 15), which
 * must already exist; the service never creates it (its rent would be the
 * service's to pay, for any account a seller names). So a Solana rail is
 * checked on the network this run settles Solana on, and only while it does
 * (SOLANA_ENABLED). An EVM rail is paid through the checkout's split
 * contract, and Stellar does not settle here yet: neither is checked.
 */
export class PayoutAccounts {
  constructor(private readonly solana: SvmChain | undefined) {}

  /** One answer per rail that is checked, in the order given; 503 `unavailable` when the chain's RPC does not answer. */
  async check(rails: readonly PayoutRail[]): Promise<PayoutAccountCheck[]> {
    const solana = this.solana;
    if (!solana) return [];
    const checked = rails.filter((r) => r.chainFamily === SOLANA_FAMILY);
    return Promise.all(checked.map(async (rail) => ({ ...rail, ...(await this.solanaAccount(solana, rail.address)) })));
  }

  private async solanaAccount(chain: SvmChain, wallet: string): Promise<Omit<PayoutAccountCheck, keyof PayoutRail>> {
    let account: string;
    try {
      account = chain.usdcAccountOf(wallet);
    } catch {
      // Callers send stored or checked addresses; anything else is the caller's mistake, never a failure of ours.
      throw invalid([{ field: "address", reason: "is not a Solana address (base58 of a 32-byte public key)" }]);
    }
    let exists: boolean;
    try {
      exists = await chain.tokenAccountExists(wallet);
    } catch {
      // Nothing was decided: the caller must not go on as if the account were there (or were not).
      throw new ProblemError("unavailable", {
        message: `The ${chain.network} network did not answer whether the payout wallet's USDC account exists; nothing was changed.`,
        help: { fix: "Retry in a few seconds.", retry_is_safe: true },
        retryAfterSeconds: 5,
        extensions: { network: chain.network },
      });
    }
    return { network: chain.network, asset: chain.usdcMint, account, exists };
  }
}
