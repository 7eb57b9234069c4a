import { fulfillmentV1 } from "@c402/contracts";
import { openPostgres, type ServiceDatabase } from "@c402/db";
import { newId } from "@c402/ids";
import { createClient } from "@c402/rpc";
import { StellarChain } from "@c402/stellar-chain";
import { refuseStellarOrgLookups, startStellarStandin, trustCertificateInThisProcess, type StellarStandin } from "@c402/stellar-standin";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import { Keypair } from "@stellar/stellar-sdk";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme } from "@x402/stellar/exact/client";
import { PAYMENTS_SCHEMA } from "../../src";
import { requirementsFor, type CheckoutForPayment } from "../../src/domain/requirements";
import { LiveStellarSettlement, type LiveStellarSettlementOptions } from "../../src/domain/settlement/live-stellar";
import { PaidOnDelivery } from "../../src/domain/settlement/paid-on-delivery";
import { originDelivery } from "../../src/rpc/origin-delivery";
import { freshPaymentsDatabase, type OnePaymentInput } from "./rail-saga";

/** Where the Stellar saga of a test runs: a PostgreSQL database and the Soroban RPC stand-in, with the service's account. */
export interface StellarSagaConfig {
  databaseUrl: string;
  rpcUrl: string;
  network: string;
  usdcContract: string;
  /** The service's account (S…): the settlement's source and fee payer. */
  accountSecret: string;
  /** The stand-in's test CA: the chain trusts it for its own connections only. */
  caCertificatePem: string;
  subjectSecret: string;
  settleTimeoutMs: number;
  pollIntervalMs: number;
  /** The shortest a ledger takes (the stand-in's ledger interval; default the network's 5 s). */
  ledgerSeconds?: number;
  /** host:port of a fulfillment service: with it, relay checkouts are paid only on delivery through it. */
  fulfillmentAddress?: string;
}

/** The JSON argument of fixtures/stellar-saga-process.ts: one payment to submit. */
export type StellarSagaInput = OnePaymentInput<StellarSagaConfig>;

/** A payments process's Stellar settlement, as the service builds it, on the test's database and stand-in (and fulfillment, when given). */
export async function openStellarSaga(config: StellarSagaConfig): Promise<{
  saga: LiveStellarSettlement;
  chain: StellarChain;
  database: ServiceDatabase;
  options: LiveStellarSettlementOptions;
  close(): Promise<void>;
}> {
  const database: ServiceDatabase = openPostgres({ url: config.databaseUrl, schema: PAYMENTS_SCHEMA });
  const chain = new StellarChain({
    network: config.network,
    rpcUrl: config.rpcUrl,
    usdcContract: config.usdcContract,
    accountSecret: config.accountSecret,
    caCertificatePem: config.caCertificatePem,
    pollIntervalMs: config.pollIntervalMs,
    ...(config.ledgerSeconds !== undefined ? { ledgerSeconds: config.ledgerSeconds } : {}),
  });
  const fulfillment = config.fulfillmentAddress ? createClient(fulfillmentV1.FulfillmentService, config.fulfillmentAddress) : undefined;
  const now = () => new Date();
  const options: LiveStellarSettlementOptions = {
    db: database.db,
    chains: new Map([[chain.network, chain]]),
    subjectSecret: config.subjectSecret,
    settleTimeoutMs: config.settleTimeoutMs,
    onCommitted: () => {},
    now,
    ...(fulfillment
      ? { paidOnDelivery: new PaidOnDelivery({ db: database.db, delivery: originDelivery(fulfillment), settleTimeoutMs: config.settleTimeoutMs, now }) }
      : {}),
  };
  return {
    saga: new LiveStellarSettlement(options),
    chain,
    database,
    options,
    close: async () => {
      fulfillment?.close();
      await database.close();
    },
  };
}

/** What a Stellar saga test runs on: the stand-in (in the test's process), a migrated payments database, the service's funded account, and the saga. */
export interface StellarRig {
  standin: StellarStandin;
  /** The test's own connection to the payments schema (to read rows and the outbox). */
  database: ServiceDatabase;
  config: StellarSagaConfig;
  saga: LiveStellarSettlement;
  chain: StellarChain;
  /** The saga's options, for a test's own subclass of the settlement. */
  options: LiveStellarSettlementOptions;
  /** The service's account (G…). */
  service: string;
  close(): Promise<void>;
}

/**
 * Starts the stand-in in this process (so its ledger outlives any payments
 * process a test kills), trusts its CA here for the official client, keeps
 * the client's Horizon lookups offline, and opens the saga on a fresh
 * database. `ledgerMs`: how often a ledger closes (default 1 s).
 */
export async function openStellarRig(subjectSecret: string, opts: { ledgerMs?: number; settleTimeoutMs?: number } = {}): Promise<StellarRig> {
  const standin = await startStellarStandin({ ledgerMs: opts.ledgerMs ?? 1000 });
  const untrust = trustCertificateInThisProcess(standin.caCertificatePem);
  const horizon = refuseStellarOrgLookups();
  const { url: databaseUrl, database, close: closeDatabase } = await freshPaymentsDatabase();
  const service = Keypair.random();
  standin.fundAccount(service.publicKey());
  const config: StellarSagaConfig = {
    databaseUrl,
    rpcUrl: standin.url,
    network: standin.network,
    usdcContract: standin.usdc,
    accountSecret: service.secret(),
    caCertificatePem: standin.caCertificatePem,
    subjectSecret,
    settleTimeoutMs: opts.settleTimeoutMs ?? 15_000,
    pollIntervalMs: 200,
  };
  const opened = await openStellarSaga(config);
  return {
    standin,
    database,
    config,
    saga: opened.saga,
    chain: opened.chain,
    options: opened.options,
    service: service.publicKey(),
    async close() {
      await opened.close();
      await closeDatabase();
      horizon.restore();
      untrust();
      await standin.close();
    },
  };
}

/** A Stellar sale: a funded buyer holding `buyerUsdc` (7 decimals), a seller with a USDC trustline, a checkout paying the seller on Stellar, and its requirement. */
export interface StellarSale {
  buyer: Keypair;
  seller: Keypair;
  checkout: CheckoutForPayment;
  requirement: PaymentRequirements;
}

export function stellarSale(rig: StellarRig, over: Partial<CheckoutForPayment> = {}, buyerUsdc = 10_000_000n): StellarSale {
  const { standin } = rig;
  const buyer = Keypair.random();
  const seller = Keypair.random();
  standin.fundAccount(buyer.publicKey());
  standin.fundAccount(seller.publicKey());
  standin.mintUsdc(buyer.publicKey(), buyerUsdc);
  standin.mintUsdc(seller.publicKey(), 0n);
  const checkout: CheckoutForPayment = {
    id: newId("checkout"),
    accountId: "acc_stellar",
    title: "Stellar goods",
    priceAtomic: 250_000n,
    payTo: "0x2222222222222222222222222222222222222222",
    armed: true,
    reusable: true,
    status: "open",
    payoutAddresses: { stellar: seller.publicKey() },
    ...over,
  };
  const requirement = requirementsFor("live", checkout, rig.saga.rails()).find((r) => r.network === standin.network);
  if (!requirement) throw new Error("no Stellar requirement quoted");
  return { buyer, seller, checkout, requirement };
}

/** What the official @x402/stellar client sends for `requirement` (signed for `signedFor` when a test shows the buyer another). */
export async function officialStellarPayment(
  rig: StellarRig,
  buyer: Keypair,
  requirement: PaymentRequirements,
  signedFor: PaymentRequirements = requirement,
): Promise<AnyPaymentPayload> {
  const client = new ExactStellarScheme(createEd25519Signer(buyer.secret(), rig.standin.network), { url: rig.standin.url });
  const created = await client.createPaymentPayload(2, signedFor as Parameters<typeof client.createPaymentPayload>[1]);
  return { ...created, accepted: requirement, resource: { url: "http://127.0.0.1/c/x", description: "", mimeType: "" } } as unknown as AnyPaymentPayload;
}
