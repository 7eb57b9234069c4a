import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import type { CheckoutForPayment } from "../../src/domain/requirements";
import type { StellarSagaConfig } from "./stellar-saga";

/** Where a Stellar relay saga runs: the Stellar saga's rig with fulfillment, and the stand-in's ledger interval. */
export type StellarRelaySagaConfig = StellarSagaConfig & { ledgerSeconds: number; fulfillmentAddress: string };

/** The JSON argument of fixtures/stellar-relay-process.ts: one payment to submit (the price as a string). */
export interface StellarRelaySagaInput extends StellarRelaySagaConfig {
  checkout: Omit<CheckoutForPayment, "priceAtomic"> & { priceAtomic: string };
  payload: AnyPaymentPayload;
  requirement: PaymentRequirements;
  /** How long the buyer's request waits (its caller's deadline). */
  answerWithinMs: number;
}

export const STELLAR_RELAY_RESULT_PREFIX = "STELLAR_RELAY_RESULT ";
