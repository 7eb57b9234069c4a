import { fulfillmentV1 } from "@c402/contracts";
import { openPostgres, type ServiceDatabase } from "@c402/db";
import { createClient } from "@c402/rpc";
import { startSolanaDevnet, type SolanaDevnet } from "@c402/solana-devnet";
import { newId } from "@c402/ids";
import { generateKeyPairSigner } from "@solana/kit";
import { SvmChain } from "@c402/svm-chain";
import { PAYMENTS_SCHEMA } from "../../src";
import type { CheckoutForPayment } from "../../src/domain/requirements";
import { LiveSvmSettlement } from "../../src/domain/settlement/live-svm";
import { PaidOnDelivery } from "../../src/domain/settlement/paid-on-delivery";
import { originDelivery } from "../../src/rpc/origin-delivery";
import { freshPaymentsDatabase, type OnePaymentInput } from "./rail-saga";

/** Where the Solana saga of a kill -9 test runs: a PostgreSQL database and a devnet with the service's fee payer. */
export interface SvmSagaConfig {
  databaseUrl: string;
  rpcUrl: string;
  network: string;
  usdcMint: string;
  feePayerKey: string;
  subjectSecret: string;
  settleTimeoutMs: number;
  /** host:port of a fulfillment service: relay checkouts are then paid only on delivery through it. */
  fulfillmentAddress?: string;
}

/** The JSON argument of fixtures/svm-saga-process.ts: one payment to submit. */
export type SvmSagaInput = OnePaymentInput<SvmSagaConfig>;

/** A payments process's Solana settlement, as the service builds it, on the test's database and devnet (and fulfillment, when given). */
export async function openSvmSaga(config: SvmSagaConfig): Promise<{ saga: LiveSvmSettlement; database: ServiceDatabase; close(): Promise<void> }> {
  const database = openPostgres({ url: config.databaseUrl, schema: PAYMENTS_SCHEMA });
  const chain = await SvmChain.create({ network: config.network, rpcUrl: config.rpcUrl, usdcMint: config.usdcMint, feePayerSecret: config.feePayerKey });
  const fulfillment = config.fulfillmentAddress ? createClient(fulfillmentV1.FulfillmentService, config.fulfillmentAddress) : undefined;
  const now = () => new Date();
  const saga = new LiveSvmSettlement({
    db: database.db,
    chains: new Map([[chain.network, chain]]),
    subjectSecret: config.subjectSecret,
    settleTimeoutMs: config.settleTimeoutMs,
    onCommitted: () => {},
    now,
    ...(fulfillment
      ? { paidOnDelivery: new PaidOnDelivery({ db: database.db, delivery: originDelivery(fulfillment), settleTimeoutMs: config.settleTimeoutMs, now }) }
      : {}),
  });
  return {
    saga,
    database,
    async close() {
      fulfillment?.close();
      await database.close();
    },
  };
}

/** What a Solana saga test runs on: a devnet, a migrated payments database, the service's fee payer funded there, and the saga. */
export interface SvmRig {
  devnet: SolanaDevnet;
  /** The test's own connection to the payments schema (to read rows and the outbox). */
  database: ServiceDatabase;
  config: SvmSagaConfig;
  saga: LiveSvmSettlement;
  feePayer: string;
  close(): Promise<void>;
}

export async function openSvmRig(subjectSecret: string): Promise<SvmRig> {
  const devnet = await startSolanaDevnet();
  const { url: databaseUrl, database, close: closeDatabase } = await freshPaymentsDatabase();
  const feePayer = await devnet.fundedKeyPair(10_000_000_000n);
  const config: SvmSagaConfig = {
    databaseUrl,
    rpcUrl: devnet.url,
    network: devnet.network,
    usdcMint: devnet.usdcMint,
    feePayerKey: feePayer.secretKey,
    subjectSecret,
    settleTimeoutMs: 10_000,
  };
  const opened = await openSvmSaga(config);
  return {
    devnet,
    database,
    config,
    saga: opened.saga,
    feePayer: feePayer.address,
    async close() {
      await opened.close();
      await closeDatabase();
      await devnet.close();
    },
  };
}

/** A fresh Solana wallet with its USDC account (empty) on the devnet: a seller or platform that can be paid. */
export async function payableSolanaWallet(devnet: SolanaDevnet): Promise<string> {
  const address = (await generateKeyPairSigner()).address;
  await devnet.setTokenBalance(address, 0n);
  return address;
}

/** An armed, reusable checkout of `priceAtomic` whose seller has a payable Solana wallet (its EVM pay_to a placeholder). */
export async function solanaSellingCheckout(
  devnet: SolanaDevnet,
  over: Partial<CheckoutForPayment> = {},
): Promise<{ checkout: CheckoutForPayment; seller: string }> {
  const seller = await payableSolanaWallet(devnet);
  const checkout: CheckoutForPayment = {
    id: newId("checkout"),
    accountId: "acc_solana",
    title: "Solana goods",
    priceAtomic: 300_000n,
    payTo: "0x2222222222222222222222222222222222222222",
    armed: true,
    reusable: true,
    status: "open",
    payoutAddresses: { solana: seller },
    ...over,
  };
  return { checkout, seller };
}
