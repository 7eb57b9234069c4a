import { createCapturingLogger } from "@c402/logging";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { ProblemError } from "@c402/problems";
import type { PayingWallet } from "../../../src/domain/ports";
import { X402PayEngine, type PayNetwork } from "../../../src/pay";
import { balances, InMemoryBudget, InMemoryVault, RecordingEvents, type Journal, type Limits } from "./fakes";

/** Generous limits: the tests that are about a limit set their own. */
export const WIDE_LIMITS: Limits = { perPayment: 100_000_000n, perDay: 1_000_000_000n };

/**
 * An engine on the in-memory ports, the guard's real fetch (loopback allowed
 * unless a test says otherwise, as in tests and the embedded mode), and a
 * capturing logger (to check that nothing secret is logged).
 */
export function payHarness(opts: {
  networks: Record<string, PayNetwork>;
  balanceOf: (wallet: PayingWallet) => Promise<bigint>;
  limits?: Limits;
  allowLoopback?: boolean;
}) {
  const journal: Journal = [];
  const budget = new InMemoryBudget(journal, { ...(opts.limits ?? WIDE_LIMITS) });
  const vault = new InMemoryVault(journal);
  const events = new RecordingEvents(journal);
  const fetch: GuardedFetch = createGuardedFetch({ allowLoopback: opts.allowLoopback ?? true, timeoutMs: 20_000 });
  const { logger, lines } = createCapturingLogger({ service: "spending-wallets-test", level: "debug" });
  const engine = new X402PayEngine({ fetch, budget, vault, balances: balances(journal, opts.balanceOf), events, networks: opts.networks, logger });
  return { engine, budget, vault, events, journal, logLines: lines, close: () => fetch.close() };
}

/** The problem a pay threw (fails the test when it resolved or threw something else). */
export async function problemOf(p: Promise<unknown>): Promise<ProblemError> {
  const outcome = await p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
  if (!(outcome.error instanceof ProblemError)) throw outcome.error;
  return outcome.error;
}

/** A journal's positions of the steps, to assert their order. */
export function stepIndex(journal: Journal, prefix: string): number {
  return journal.findIndex((line) => line.startsWith(prefix));
}
