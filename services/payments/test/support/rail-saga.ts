import { migrate, openPostgres, sql, type ServiceDatabase } from "@c402/db";
import type { FailpointName } from "@c402/failpoints";
import { freshPostgresDatabase, resultLine, runScriptProcess } from "@c402/testkit";
import type { AnyPaymentPayload, PaymentRequirements } from "@c402/x402";
import { PAYMENTS_SCHEMA, paymentsMigrations } from "../../src";
import type { CheckoutForPayment } from "../../src/domain/requirements";
import type { Settlement, SettlementOutcome } from "../../src/domain/settlement/settlement";

/**
 * What the kill -9 tests of the sagas whose buyer's signed payment is settled
 * as it is (Solana, Stellar) share: a fresh payments database, a payments
 * process of its own submitting one payment (fixtures/*-saga-process.ts,
 * `C402_FAILPOINT` armed), and reading back what the chain's recovery left
 * in the ledger (the rows, the outbox).
 */

/** A payment a test signed for a checkout's requirement. */
export interface SignedPayment {
  requirement: PaymentRequirements;
  payload: AnyPaymentPayload;
}

/** The JSON argument of a one-payment saga process: where its saga runs (`Config`), and the payment it submits (the price as a string). */
export type OnePaymentInput<Config> = Config &
  SignedPayment & {
    checkout: Omit<CheckoutForPayment, "priceAtomic"> & { priceAtomic: string };
    /** How long the buyer's request waits (its caller's deadline); the service's longest otherwise. */
    answerWithinMs?: number;
  };

export function onePaymentInput<Config>(config: Config, checkout: CheckoutForPayment, payment: SignedPayment): OnePaymentInput<Config> {
  return { ...config, checkout: { ...checkout, priceAtomic: String(checkout.priceAtomic) }, requirement: payment.requirement, payload: payment.payload };
}

const RESULT_PREFIX = "ONE_PAYMENT_RESULT ";

/** A rail's saga as a payments process builds it. */
export interface OpenedSaga {
  saga: Pick<Settlement, "submit">;
  close(): Promise<void>;
}

/**
 * The whole of a one-payment saga process (its fixture's only statement):
 * opens the rail's saga on the input's database and chain, submits the
 * payment; C402_FAILPOINT makes it SIGKILL itself at one step on the way.
 * Prints its result line and exits 0 when it gets to the end.
 */
export function runOnePaymentProcess<Config>(name: string, open: (config: OnePaymentInput<Config>) => Promise<OpenedSaga>): void {
  const main = async () => {
    const input = JSON.parse(process.argv[2] ?? "") as OnePaymentInput<Config>;
    const opened = await open(input);
    const outcome = await opened.saga.submit(
      { ...input.checkout, priceAtomic: BigInt(input.checkout.priceAtomic) },
      input.payload,
      input.requirement,
      input.answerWithinMs !== undefined ? { answerBy: new Date(Date.now() + input.answerWithinMs) } : {},
    );
    process.stdout.write(`${RESULT_PREFIX}${JSON.stringify({ outcome: outcome.kind })}\n`);
    await opened.close();
  };
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}

/** How a one-payment process ended: its signal, whether it said it reached `failpoint`, its outcome if it got to the end. */
export interface OnePaymentExit {
  signal: NodeJS.Signals | null;
  code: number | null;
  reachedFailpoint: boolean;
  outcome?: SettlementOutcome["kind"];
  stderr: string;
}

/** Runs a one-payment saga process (`driver`, a fixture) with `failpoint` armed. */
export async function runOnePayment<Config>(driver: string, input: OnePaymentInput<Config>, failpoint?: FailpointName): Promise<OnePaymentExit> {
  const exit = await runScriptProcess(driver, input, { ...(failpoint ? { failpoint } : {}), timeoutMs: 60_000 });
  const result = resultLine<{ outcome: SettlementOutcome["kind"] }>(exit.stdout, RESULT_PREFIX);
  return {
    signal: exit.signal,
    code: exit.code,
    reachedFailpoint: failpoint !== undefined && exit.stderr.includes(`failpoint ${failpoint}`),
    ...(result ? { outcome: result.outcome } : {}),
    stderr: exit.stderr,
  };
}

/** A fresh, migrated payments database on the test's PostgreSQL. */
export async function freshPaymentsDatabase(): Promise<{ url: string; database: ServiceDatabase; close(): Promise<void> }> {
  const postgres = await freshPostgresDatabase();
  const database = openPostgres({ url: postgres.url, schema: PAYMENTS_SCHEMA });
  await migrate(database, paymentsMigrations);
  return {
    url: postgres.url,
    database,
    async close() {
      await database.close();
      await postgres.drop();
    },
  };
}

/** A payment row as the crash tests read it. */
export interface RecordedPayment {
  id: string;
  status: string;
  tx_hash: string | null;
  failure_reason: string | null;
}

/** The payments a checkout has, and a payment's outbox events, read straight from the database. */
export function paymentRecords(database: ServiceDatabase) {
  return {
    async rowsOf(checkoutId: string): Promise<RecordedPayment[]> {
      const { rows } = await sql<RecordedPayment>`select id, status, tx_hash, failure_reason from payments where checkout_id = ${checkoutId}`.execute(
        database.db,
      );
      return rows;
    },
    async outboxEventsOf(paymentId: string): Promise<number> {
      const { rows } = await sql<{ n: string }>`select count(*) as n from outbox where key = ${paymentId}`.execute(database.db);
      return Number(rows[0]?.n ?? 0);
    },
  };
}

const RECOVERY_LIMIT_MS = 30_000;

/** Sweeps as a restarted process would, until the checkout's payment is settled or failed (within 30 s, the recovery target). */
export async function sweepUntilConcluded(
  saga: { sweep(quietMs?: number): Promise<number> },
  database: ServiceDatabase,
  checkoutId: string,
): Promise<{ status: string; ms: number }> {
  const { rowsOf } = paymentRecords(database);
  const started = Date.now();
  for (;;) {
    await saga.sweep(0);
    const [row] = await rowsOf(checkoutId);
    if (row && (row.status === "settled" || row.status === "failed")) return { status: row.status, ms: Date.now() - started };
    if (Date.now() - started > RECOVERY_LIMIT_MS) throw new Error(`not recovered in ${RECOVERY_LIMIT_MS} ms: ${JSON.stringify(row)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
