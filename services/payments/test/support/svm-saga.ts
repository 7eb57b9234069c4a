import { openPostgres, type ServiceDatabase } from "@c402/db";
import { SvmChain } from "@c402/svm-chain";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import { PAYMENTS_SCHEMA } from "../../src";
import type { CheckoutForPayment } from "../../src/domain/requirements";
import { LiveSvmSettlement } from "../../src/domain/settlement/live-svm";

/** Where the Solana saga of a kill -9 test runs: a PostgreSQL database and a devnet with the service's fee payer. */
export interface SvmSagaConfig {
  databaseUrl: string;
  rpcUrl: string;
  network: string;
  usdcMint: string;
  feePayerKey: string;
  subjectSecret: string;
  settleTimeoutMs: number;
}

/** The JSON argument of fixtures/svm-saga-process.ts: one payment to submit (the price as a string). */
export interface SvmSagaInput extends SvmSagaConfig {
  checkout: Omit<CheckoutForPayment, "priceAtomic"> & { priceAtomic: string };
  payload: AnyPaymentPayload;
  requirement: PaymentRequirements;
}

export const SVM_SAGA_RESULT_PREFIX = "SVM_SAGA_RESULT ";

/** A payments process's Solana settlement, as the service builds it, on the test's database and devnet. */
export async function openSvmSaga(config: SvmSagaConfig): Promise<{ saga: LiveSvmSettlement; database: ServiceDatabase }> {
  const database = openPostgres({ url: config.databaseUrl, schema: PAYMENTS_SCHEMA });
  const chain = await SvmChain.create({ network: config.network, rpcUrl: config.rpcUrl, usdcMint: config.usdcMint, feePayerSecret: config.feePayerKey });
  const saga = new LiveSvmSettlement({
    db: database.db,
    chains: new Map([[chain.network, chain]]),
    subjectSecret: config.subjectSecret,
    settleTimeoutMs: config.settleTimeoutMs,
    onCommitted: () => {},
    now: () => new Date(),
  });
  return { saga, database };
}
