import { fulfillmentV1 } from "@c402/contracts";
import { openPostgres, type ServiceDatabase } from "@c402/db";
import { createClient } from "@c402/rpc";
import { StellarChain } from "@c402/stellar-chain";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import { PAYMENTS_SCHEMA } from "../../src";
import type { CheckoutForPayment } from "../../src/domain/requirements";
import { LiveStellarSettlement } from "../../src/domain/settlement/live-stellar";
import { PaidOnDelivery } from "../../src/domain/settlement/paid-on-delivery";
import { originDelivery } from "../../src/rpc/origin-delivery";

/** Where a Stellar relay saga runs: a PostgreSQL database, a Soroban RPC (the stand-in, over HTTPS with its test CA) and fulfillment. */
export interface StellarRelaySagaConfig {
  databaseUrl: string;
  rpcUrl: string;
  caCertificatePem: string;
  network: string;
  usdcContract: string;
  accountSecret: string;
  /** The shortest a ledger takes (the stand-in's ledger interval). */
  ledgerSeconds: number;
  subjectSecret: string;
  settleTimeoutMs: number;
  /** host:port of a fulfillment service: relay checkouts are paid only on delivery through it. */
  fulfillmentAddress: string;
}

/** The JSON argument of fixtures/stellar-relay-process.ts: one payment to submit (the price as a string). */
export interface StellarRelaySagaInput extends StellarRelaySagaConfig {
  checkout: Omit<CheckoutForPayment, "priceAtomic"> & { priceAtomic: string };
  payload: AnyPaymentPayload;
  requirement: PaymentRequirements;
  /** How long the buyer's request waits (its caller's deadline). */
  answerWithinMs: number;
}

export const STELLAR_RELAY_RESULT_PREFIX = "STELLAR_RELAY_RESULT ";

/** A payments process's Stellar settlement with the delivery step, as the service builds it, on the test's database, stand-in and fulfillment. */
export function openStellarRelaySaga(config: StellarRelaySagaConfig): {
  saga: LiveStellarSettlement;
  chain: StellarChain;
  database: ServiceDatabase;
  close(): Promise<void>;
} {
  const database = openPostgres({ url: config.databaseUrl, schema: PAYMENTS_SCHEMA });
  const chain = new StellarChain({
    network: config.network,
    rpcUrl: config.rpcUrl,
    usdcContract: config.usdcContract,
    accountSecret: config.accountSecret,
    caCertificatePem: config.caCertificatePem,
    ledgerSeconds: config.ledgerSeconds,
    pollIntervalMs: 200,
  });
  const fulfillment = createClient(fulfillmentV1.FulfillmentService, config.fulfillmentAddress);
  const now = () => new Date();
  const saga = new LiveStellarSettlement({
    db: database.db,
    chains: new Map([[chain.network, chain]]),
    subjectSecret: config.subjectSecret,
    settleTimeoutMs: config.settleTimeoutMs,
    onCommitted: () => {},
    now,
    paidOnDelivery: new PaidOnDelivery({ db: database.db, delivery: originDelivery(fulfillment), settleTimeoutMs: config.settleTimeoutMs, now }),
  });
  return {
    saga,
    chain,
    database,
    async close() {
      fulfillment.close();
      await database.close();
    },
  };
}
