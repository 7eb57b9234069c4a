import { checkPayoutAddress } from "@c402/chain-addresses";
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
const STELLAR_FAMILY = "stellar";

/** What the Stellar check asks of the Stellar chain (a type only: stellar-sdk loads only where the rail is configured). */
export interface StellarPayoutChain {
  readonly network: string;
  /** USDC as a classic asset (USDC:ISSUER), where known. */
  readonly usdcAssetName: string | undefined;
  receivesUsdc(address: string): Promise<boolean | undefined>;
}

/**
 * Whether payout wallets can be paid, asked of the network this run settles
 * each chain on, and only while it does:
 * - a buyer's Solana payment is one TransferChecked to the associated USDC
 *   account of `payTo` (ADR 15), which must already exist;
 * - a Stellar payment is one `transfer` of USDC's asset contract, which an
 *   account (G…) receives only through its USDC trustline (a contract, C…,
 *   always can).
 * The service never creates either (the rent or reserve would be the
 * service's to pay, for any account a seller names). An EVM rail is paid
 * through the checkout's split contract: not checked.
 */
export class PayoutAccounts {
  constructor(private readonly chains: { solana?: SvmChain | undefined; stellar?: StellarPayoutChain | undefined }) {}

  /** One answer per rail that is checked, in the order given; 503 `unavailable` when the chain's RPC does not answer. */
  async check(rails: readonly PayoutRail[]): Promise<PayoutAccountCheck[]> {
    const { solana, stellar } = this.chains;
    const answers = await Promise.all(
      rails.map(async (rail): Promise<PayoutAccountCheck | undefined> => {
        if (rail.chainFamily === SOLANA_FAMILY && solana) return { ...rail, ...(await this.solanaAccount(solana, rail.address)) };
        if (rail.chainFamily === STELLAR_FAMILY && stellar) {
          const found = await this.stellarTrustline(stellar, rail.address);
          return found ? { ...rail, ...found } : undefined;
        }
        return undefined;
      }),
    );
    return answers.filter((a): a is PayoutAccountCheck => a !== undefined);
  }

  private async stellarTrustline(chain: StellarPayoutChain, wallet: string): Promise<Omit<PayoutAccountCheck, keyof PayoutRail> | undefined> {
    // Callers send stored or checked addresses; anything else is the caller's mistake, never a failure of ours.
    const address = checkPayoutAddress("stellar", wallet);
    if (!address.ok) throw invalid([{ field: "address", reason: address.reason }]);
    let receives: boolean | undefined;
    try {
      receives = await chain.receivesUsdc(wallet);
    } catch {
      throw chainUnavailable(chain.network, "whether the payout wallet has a USDC trustline");
    }
    // A token whose classic asset is unknown: nothing to look for.
    if (receives === undefined || chain.usdcAssetName === undefined) return undefined;
    return { network: chain.network, asset: chain.usdcAssetName, account: wallet, exists: receives };
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
      throw chainUnavailable(chain.network, "whether the payout wallet's USDC account exists");
    }
    return { network: chain.network, asset: chain.usdcMint, account, exists };
  }
}

function chainUnavailable(network: string, question: string): ProblemError {
  // Nothing was decided: the caller must not go on as if the account were there (or were not).
  return new ProblemError("unavailable", {
    message: `The ${network} network did not answer ${question}; nothing was changed.`,
    help: { fix: "Retry in a few seconds.", retry_is_safe: true },
    retryAfterSeconds: 5,
    extensions: { network },
  });
}
