import { resolve } from "node:path";
import { KafkaBus, OutboxRelay } from "@c402/bus";
import { openPostgres, sql, type ServiceDatabase } from "@c402/db";
import type { FailpointName } from "@c402/failpoints";
import { resultLine, runScriptProcess, type ScriptExit } from "@c402/testkit";
import type { PaymentPayload, PaymentRequirements } from "@c402/x402";
import type { RawBuilder } from "kysely";
import { createLiveChain, type LiveChainSettings } from "../../src";
import type { SettlementOutcome } from "../../src/domain/settlement/settlement";
import type { CheckoutForPayment } from "../../src/domain/requirements";
import { liveSaga } from "./live-saga";
import { fulfillmentV1 } from "@c402/contracts";
import { createClient } from "@c402/rpc";
import { PaidOnDelivery } from "../../src/domain/settlement/paid-on-delivery";
import { originDelivery } from "../../src/rpc/origin-delivery";

/** What one payments process of the kill -9 test is built from. */
export interface SagaProcessConfig {
  databaseUrl: string;
  schema: string;
  kafkaBrokers: string[];
  chain: LiveChainSettings;
  subjectSecret: string;
  /** The relay's lease: the rows of a relay killed after publishing stay held this long. */
  outboxLeaseSeconds: number;
  /** host:port of a fulfillment service: relay checkouts are paid only on delivery through it. */
  fulfillmentAddress?: string;
  /** How long a settlement transaction waits for payments on their way to it (the service's default otherwise). */
  gatherMs?: number;
  /** How long a buyer waits for the settlement's receipt (15 s otherwise). */
  settleTimeoutMs?: number;
  /** pay: how long the buyer's request waits (its caller's deadline); the service's longest otherwise. */
  answerWithinMs?: number;
}

/** The JSON argument of test/fixtures/saga-process.ts. */
export interface SagaProcessInput extends SagaProcessConfig {
  mode: "pay" | "recover";
  /** pay: the one payment to submit. */
  payment?: SagaPayment;
  /** pay: several payments submitted at once (they may share a settlement transaction). */
  payments?: SagaPayment[];
}

/** A payment as the saga process is given it (JSON: the price as a string). */
export interface SagaPayment {
  checkout: Omit<CheckoutForPayment, "priceAtomic"> & { priceAtomic: string };
  payload: PaymentPayload;
  requirement: PaymentRequirements;
}

export interface Recovery {
  swept: number;
  published: number;
  /** From the start of the (re)built process to done. */
  ms: number;
}

/** The process's one line of output, `SAGA_RESULT {json}` on stdout. */
export interface SagaProcessResult {
  outcome?: SettlementOutcome["kind"];
  recovery?: Recovery;
}

export const SAGA_RESULT_PREFIX = "SAGA_RESULT ";

// Inside the 30 s recovery target, so a stuck recovery fails with its reason.
const RECOVERY_DEADLINE_MS = 25_000;

/**
 * The payments service's settlement parts as the distributed service builds
 * them: the store on PostgreSQL, the live settlement on the chain, the outbox
 * relay to Kafka. The relay is driven explicitly (not poked on commit) so a
 * crash point is reached deterministically.
 */
export function openSagaProcess(config: SagaProcessConfig) {
  const startedAt = performance.now();
  const database: ServiceDatabase = openPostgres({ url: config.databaseUrl, schema: config.schema, maxConnections: 4 });
  const bus = new KafkaBus({
    brokers: config.kafkaBrokers,
    clientId: "payments-g6",
    log: (level, text) => {
      if (level === "error") process.stderr.write(`${text}\n`);
    },
  });
  const relay = new OutboxRelay({ db: database.db, bus, leaseSeconds: config.outboxLeaseSeconds });
  const live = createLiveChain(config.chain);
  const fulfillment = config.fulfillmentAddress ? createClient(fulfillmentV1.FulfillmentService, config.fulfillmentAddress) : undefined;
  const settleTimeoutMs = config.settleTimeoutMs ?? 15_000;
  const saga = liveSaga(database.db, live, {
    subjectSecret: config.subjectSecret,
    settleTimeoutMs,
    ...(fulfillment
      ? { paidOnDelivery: new PaidOnDelivery({ db: database.db, delivery: originDelivery(fulfillment), settleTimeoutMs, now: () => new Date() }) }
      : {}),
    onSweepError: (err, paymentId) => process.stderr.write(`sweep could not resume ${paymentId}: ${String(err)}\n`),
    ...(config.gatherMs !== undefined ? { gatherMs: config.gatherMs } : {}),
  });
  const count = async (query: RawBuilder<{ n: number }>) => (await query.execute(database.db)).rows[0]!.n;

  return {
    saga,
    publishOutbox: async () => {
      while ((await relay.publishBatch()) > 0);
    },
    /** What a restart does: sweep until no payment is claimed, delivered or settling, relay until the outbox is drained. */
    async recover(): Promise<Recovery> {
      const swept = await untilNone(
        () => saga.sweep(0),
        () => count(sql`select count(*)::int as n from payments where status in ('claimed', 'delivered', 'settling')`),
      );
      const published = await untilNone(
        () => relay.publishBatch(),
        () => count(sql`select count(*)::int as n from outbox where published_at is null`),
      );
      return { swept, published, ms: Math.round(performance.now() - startedAt) };
    },
    async close(): Promise<void> {
      fulfillment?.close();
      await bus.close();
      await database.close();
    },
  };
}

/** Runs `step` until `remaining` reports nothing left; returns the sum of what the steps reported. */
async function untilNone(step: () => Promise<number>, remaining: () => Promise<number>): Promise<number> {
  const deadline = Date.now() + RECOVERY_DEADLINE_MS;
  let total = 0;
  for (;;) {
    total += await step();
    const left = await remaining();
    if (left === 0) return total;
    if (Date.now() > deadline) throw new Error(`recovery did not finish: ${left} left`);
    // A row another relay leased, or a receipt still coming: look again shortly.
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface SagaProcessExit extends Omit<ScriptExit, "stdout"> {
  result?: SagaProcessResult;
}

const DRIVER = resolve(__dirname, "../fixtures/saga-process.ts");

/** Runs test/fixtures/saga-process.ts in a process of its own, with `failpoint` armed if given. */
export async function runSagaProcess(input: SagaProcessInput, opts: { failpoint?: FailpointName; timeoutMs?: number } = {}): Promise<SagaProcessExit> {
  const { stdout: _stdout, ...exit } = await runScriptProcess(DRIVER, input, opts);
  const result = resultLine<SagaProcessResult>(_stdout, SAGA_RESULT_PREFIX);
  return { ...exit, ...(result ? { result } : {}) };
}
