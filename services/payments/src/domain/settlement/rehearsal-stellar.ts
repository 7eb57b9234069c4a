import {
  decodeExactStellarPayment,
  DEFAULT_LEDGER_SECONDS,
  DEFAULT_MAX_FEE_STROOPS,
  networkPassphraseOf,
  payerAuthEntry,
  STELLAR_TESTNET,
  stellarUnitsFromUsdc,
  StellarPaymentRejected,
  StellarRejection,
  verifyExactStellarPaymentWithoutChain,
  type ExactStellarPayment,
  type ExactStellarPolicy,
  type StellarAuthEntry,
} from "@c402/stellar-chain";
import { isStellarPayload, STELLAR_NETWORKS, type AnyPaymentPayload, type PaymentRequirements } from "@c402/x402";
import type { PaymentRow } from "../../store/payments-store";
import type { PresentedPayment } from "../payment-row";
import { singleTransferAmounts, type CheckoutForPayment, type Rail } from "../requirements";
import { requirementOf, stellarPaymentKey, stellarPresentedPayment, stellarRejected } from "./live-stellar";
import type { RehearsalFamily } from "./rehearsal-family";

/** The deployment's live Stellar rail, as its rehearsal needs it. */
export interface StellarRehearsalSettings {
  /** The live rail's network and USDC contract: the rehearsal derives its own (testnet) from them. */
  network: string;
  usdcContract: string;
  /** Every account of the service's on Stellar (the settlement account, channels): none may appear in a rehearsal payment either. */
  serviceAccounts: readonly string[];
}

/**
 * Where Stellar rehearsals are quoted: always `stellar:testnet`, the network
 * the buyer's own RPC can simulate the transfer on (the official client
 * builds its payment by simulating it), with the live rail's USDC contract
 * when the live rail is on testnet, else Circle's testnet USDC.
 */
export function rehearsalStellarNetwork(live: { network: string; usdcContract: string }): { network: string; usdcContract: string } {
  return { network: STELLAR_TESTNET, usdcContract: live.network === STELLAR_TESTNET ? live.usdcContract : STELLAR_NETWORKS[STELLAR_TESTNET].usdc };
}

/**
 * Stellar rehearsals (ADR 5): the live requirement's shape (the price in
 * the token's 7 decimals, one transfer to the seller, fees sponsored,
 * ADR 17) on testnet. Unlike EVM's and Solana's, what the buyer signs is a
 * valid testnet authorization, of a token with no value: the service never
 * submits it. It is held to the live checks with no chain asked (no
 * simulation, no ledger read) and the payer's signature verified here for
 * the testnet passphrase, so rehearsals work whatever the deployment's RPC
 * is, and move nothing.
 */
export class StellarRehearsal implements RehearsalFamily {
  readonly rail: Rail;
  private readonly policy: ExactStellarPolicy;
  private readonly networkPassphrase: string;

  constructor(
    live: StellarRehearsalSettings,
    private readonly now: () => Date,
  ) {
    const { network, usdcContract } = rehearsalStellarNetwork(live);
    this.networkPassphrase = networkPassphraseOf(network);
    // The ledger figures are never used: no ledger is read (verifyExactStellarPaymentWithoutChain).
    this.policy = { serviceAccounts: live.serviceAccounts, usdcContract, maxFeeStroops: DEFAULT_MAX_FEE_STROOPS, ledgerSeconds: DEFAULT_LEDGER_SECONDS };
    this.rail = {
      network,
      asset: usdcContract,
      extra: { areFeesSponsored: true, rehearsal: true },
      // As live (ADR 17): not with a platform cut (one transfer to the seller cannot carry it).
      payTo: (checkout) => (checkout.platform ? undefined : checkout.payoutAddresses?.stellar),
      amounts: singleTransferAmounts,
      tokenUnits: stellarUnitsFromUsdc,
    };
  }

  payerOf(payload: AnyPaymentPayload): string | undefined {
    if (!isStellarPayload(payload)) return undefined;
    try {
      return this.paymentOf(payload).payer;
    } catch {
      return undefined;
    }
  }

  /** As live, the payer's authorization (its address and nonce), in test mode. */
  keyOf(payload: AnyPaymentPayload, requirement: PaymentRequirements) {
    return { ...stellarPaymentKey(requirement, this.paymentOf(payload)), test_mode: true };
  }

  async verify(payload: AnyPaymentPayload, requirement: PaymentRequirements, checkout: CheckoutForPayment): Promise<PresentedPayment> {
    const payment = this.paymentOf(payload);
    asBuyersProblem(() => verifyExactStellarPaymentWithoutChain(payment, requirementOf(requirement), this.policy));
    const presented = stellarPresentedPayment(checkout, requirement, payment);
    // No ledger is read: the requirement's timeout from its presentation stands in for the authorization's last
    // ledger, so a relay rehearsal's origin gets the time an EVM one gets (ADR 9).
    const validBefore = BigInt(Math.floor(this.now().getTime() / 1000) + requirement.maxTimeoutSeconds);
    return { ...presented, key: { ...presented.key, test_mode: true }, validBefore };
  }

  /**
   * The very authorization recorded (the payer's entry, signature included,
   * and the call it authorizes), for the same checkout; the envelope around
   * it (source, fee, resources), which a relayer could vary, is ignored.
   */
  assertRedeliverable(row: PaymentRow, checkoutId: string, payload: AnyPaymentPayload): void {
    const presented = this.paymentOf(payload);
    const recorded = asBuyersProblem(() => decodeExactStellarPayment(String(row.authorization.transaction), this.networkPassphrase));
    const [mine, theirs] = [payerAuthEntry(presented), payerAuthEntry(recorded)];
    const sameSignature = mine !== undefined && theirs !== undefined && signatureOf(mine).equals(signatureOf(theirs));
    const sameCall = sameSignature && mine.entry.toXDR().equals(theirs.entry.toXDR()) && presented.hostFunction.toXDR().equals(recorded.hostFunction.toXDR());
    if (sameSignature && !sameCall) {
      throw stellarRejected(StellarRejection.signatureInvalid, "The payer's signature does not cover this payment: it was changed after it was signed.");
    }
    if (!sameSignature || row.checkout_id !== checkoutId) {
      throw stellarRejected("invalid_exact_stellar_payload_authorization_already_used", "This authorization has already paid for something else.");
    }
  }

  alreadyUsed() {
    return stellarRejected("invalid_exact_stellar_payload_authorization_already_used", "This authorization has already been presented.");
  }

  /** The payload's transaction, decoded for testnet (another family's payload, or an undecodable one, is the buyer's problem). */
  private paymentOf(payload: AnyPaymentPayload): ExactStellarPayment {
    if (!isStellarPayload(payload)) throw stellarRejected("invalid_payload", "This network takes a Stellar transaction, not an authorization.");
    return asBuyersProblem(() => decodeExactStellarPayment(payload.payload.transaction, this.networkPassphrase));
  }
}

/** What `act` answers; a refusal of the chain adapter's becomes the buyer's problem, with its reason. */
function asBuyersProblem<T>(act: () => T): T {
  try {
    return act();
  } catch (err) {
    if (err instanceof StellarPaymentRejected) throw stellarRejected(err.reason, err.message);
    throw err;
  }
}

/** The signature value of an address-credential entry (its XDR): what the payer signed with. */
function signatureOf(entry: StellarAuthEntry): Buffer {
  return entry.entry.credentials().address().signature().toXDR();
}
