/**
 * Webhook delivery in distributed mode (see bench/README.md): every service
 * its own process (deploy/local/src/run.ts), PostgreSQL, Kafka and Redis,
 * with a seller's webhook receiver (a bare node:http server) in a child
 * process of its own and the load generated from this one.
 *  1. payment → webhook: paid rehearsals (pre-signed, fresh buyer each) sent
 *     open-loop at a steady BENCH_WEBHOOK_RATE (100/s) for
 *     BENCH_WEBHOOK_SECONDS; for each paid one, the time from its 200 answer
 *     here to its checkout.paid delivery at the receiver: p50/p99 (target
 *     p99 ≤ 500 ms), with where the time goes (from the services' own rows:
 *     outbox published, fanned out by the Kafka consumer, attempt started);
 *  2. backlog drain: the receiver closed (connections refused) for
 *     BENCH_BACKLOG_DOWN_SECONDS while payments keep coming at
 *     BENCH_BACKLOG_RATE, then listening again on the same port: how long
 *     after it came back every event of the outage had been received. The
 *     retry schedule (services/webhooks/src/domain/retry-schedule.ts: first
 *     retry 30 s ±20% after a failure, doubling, capped at 12 h) sets it.
 * The database is fresh and dropped at the end; everything started is
 * stopped. Targets are reported, never enforced: the exit code is 0 whenever
 * the run completes.
 */
import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { decodeHeader, encodeHeader, signExactEvmPayment, type PaymentRequired, type PaymentRequirements } from "@c402/x402";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { ReceiverInfo, ReceiverMessage } from "./servers/receiver";
import { f0, f1, log, num, percentile, runBenchmark, statusList } from "./lib/report";
import { call, JSON_ACCEPT, signIn } from "./lib/http";
import { BENCH_INFRASTRUCTURE, dropDatabase, reachable, startSystem, type System } from "./lib/distributed-system";

const config = {
  /** Timed seconds of the steady run (after the warm-up). */
  seconds: num("BENCH_WEBHOOK_SECONDS", 30, 10),
  /** Payments per second of the steady run, sent open-loop. */
  rate: num("BENCH_WEBHOOK_RATE", 100, 100),
  warmupSeconds: num("BENCH_WEBHOOK_WARMUP_SECONDS", 3, 2),
  /** How long the receiver is down in the backlog run. */
  downSeconds: num("BENCH_BACKLOG_DOWN_SECONDS", 60, 20),
  /** Payments per second while the receiver is down. */
  backlogRate: num("BENCH_BACKLOG_RATE", 20, 20),
  ...BENCH_INFRASTRUCTURE,
  logLevel: process.env.BENCH_LOG_LEVEL ?? "warn",
  /** BENCH_CPU_PROF_DIR=dir: every process of the system writes a V8 CPU profile there when it stops (open it in Chrome DevTools). */
  cpuProfDir: process.env.BENCH_CPU_PROF_DIR,
};

const TARGET_P99_MS = 500;
const PRICE_USD = "0.10";
/** How long the steady run waits, after its last answer, for the deliveries still on their way. */
const STEADY_WAIT_MS = 120_000;
/** What the retry schedule says (services/webhooks/src/domain/retry-schedule.ts), for the report. */
const SCHEDULE =
  "the first retry due after it came back (30 s ±20% after a failure, then 60 s, 120 s, … ±20%: services/webhooks/src/domain/retry-schedule.ts) gets through, and the rest of the receiver's backlog goes at once";

/** Wall-clock milliseconds with a fraction; the receiver stamps arrivals on the same basis. */
const clock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The largest of many figures (no spread: a long array would overflow the call stack). */
const maxOf = (values: number[]) => values.reduce((m, v) => (v > m ? v : m), -Infinity);

/** p50/p99 of some figures, sorted here. */
function pcts(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
}

// ---------------------------------------------------------------- the receiver (child process)

interface Receiver {
  info: ReceiverInfo;
  /** First arrival time of each payment's delivery. */
  arrivals: Map<string, number>;
  /** Every POST received, and those that repeated a delivery already received (at-least-once). */
  counts: { posts: number; duplicates: number; other: number };
  down(): Promise<number>;
  up(): Promise<number>;
  stop(): Promise<void>;
}

function startReceiver(): Promise<Receiver> {
  const child = fork(join(__dirname, "servers/receiver.ts"), [], {
    env: process.env,
    execArgv: process.execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const arrivals = new Map<string, number>();
  const deliveries = new Set<string>();
  const counts = { posts: 0, duplicates: 0, other: 0 };
  /** The one down/up request under way: the receiver answers each before the next is asked. */
  let waiting: ((m: ReceiverMessage) => void) | undefined;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send({ type: "stop" });
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const ask = (type: "down" | "up") =>
    new Promise<number>((resolve, reject) => {
      waiting = (m) => (m.type === "up-failed" ? reject(new Error(`the receiver could not listen again: ${m.error}`)) : resolve((m as { at: number }).at));
      child.send({ type });
    });
  return new Promise((resolve, reject) => {
    child.on("message", (m: ReceiverMessage | { type: "ready"; info: ReceiverInfo } | { type: "failed"; error: string }) => {
      if (m.type === "arrival") {
        counts.posts++;
        if (m.deliveryId && deliveries.has(m.deliveryId)) counts.duplicates++;
        deliveries.add(m.deliveryId);
        if (!m.paymentId) counts.other++;
        else if (!arrivals.has(m.paymentId)) arrivals.set(m.paymentId, m.at);
      } else if (m.type === "ready") {
        resolve({ info: m.info, arrivals, counts, down: () => ask("down"), up: () => ask("up"), stop });
      } else if (m.type === "failed") {
        void stop();
        reject(new Error(`receiver failed to start: ${m.error}`));
      } else {
        const w = waiting;
        waiting = undefined;
        w?.(m);
      }
    });
    child.once("exit", (code, signal) => reject(new Error(`receiver exited (${code ?? signal}) before it was ready`)));
  });
}

/** Waits until every id has arrived or the deadline passed; answers how many are still missing. */
async function waitForArrivals(receiver: Receiver, ids: string[], deadline: number): Promise<number> {
  for (;;) {
    const missing = ids.reduce((n, id) => n + (receiver.arrivals.has(id) ? 0 : 1), 0);
    if (missing === 0 || clock() >= deadline) return missing;
    await sleep(50);
  }
}

// ---------------------------------------------------------------- the distributed system (child process group)

/** One query on the run's database, as the admin (every service's schema is readable). */
async function query<T>(database: string, text: string, values: unknown[]): Promise<T[]> {
  const url = new URL(config.postgres);
  url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------- HTTP

/** Fresh EIP-3009 authorizations, each from a fresh buyer (signing stays out of the timed part). */
async function presign(required: PaymentRequired, count: number): Promise<string[]> {
  const started = performance.now();
  const requirement = required.accepts[0] as PaymentRequirements;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const buyer = privateKeyToAccount(generatePrivateKey());
    out.push(encodeHeader(await signExactEvmPayment(buyer, requirement, { resourceUrl: required.resource.url })));
  }
  if (count > 1) log(`signed ${count} payments in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return out;
}

interface Sent {
  /** When the schedule said to send it, when it was sent, when its answer had arrived (clock()). */
  scheduled: number;
  sent: number;
  answered: number;
  status: string;
  paymentId?: string;
  failure?: string;
}

/**
 * Open loop: payment i is sent at start + i/rate whatever the answers before
 * it did (a slow answer never delays the next send), on kept-alive node:http
 * sockets; resolves when every answer is in.
 */
async function openLoop(url: string, payments: string[], rate: number): Promise<Sent[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const target = new URL(url);
  const interval = 1000 / rate;
  const results: Sent[] = [];
  const pending: Promise<void>[] = [];
  const once = (payment: string, scheduled: number) =>
    new Promise<void>((done) => {
      const r: Sent = { scheduled, sent: clock(), answered: 0, status: "error" };
      results.push(r);
      const req = request(
        { agent, host: target.hostname, port: target.port, path: target.pathname, headers: { ...JSON_ACCEPT, "PAYMENT-SIGNATURE": payment }, timeout: 60_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            r.answered = clock();
            r.status = String(res.statusCode);
            const text = Buffer.concat(chunks).toString("utf8");
            try {
              const body = JSON.parse(text) as { receipt?: { id?: unknown }; detail?: unknown; reason?: unknown };
              if (res.statusCode === 200 && typeof body.receipt?.id === "string") r.paymentId = body.receipt.id;
              else r.failure = `${res.statusCode} ${String(body.reason ?? body.detail ?? text).slice(0, 200)}`;
            } catch {
              r.failure = `${res.statusCode} ${text.slice(0, 200)}`;
            }
            done();
          });
          res.on("error", (err) => {
            r.answered = clock();
            r.failure = `error ${err.message}`;
            done();
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error("no answer in 60 s")));
      req.on("error", (err) => {
        r.answered = clock();
        r.failure = `error ${err.message}`;
        done();
      });
      req.end();
    });
  const start = clock() + 20;
  for (let i = 0; i < payments.length; i++) {
    const due = start + i * interval;
    const wait = due - clock();
    if (wait > 0.5) await sleep(wait);
    pending.push(once(payments[i]!, due));
  }
  await Promise.all(pending);
  agent.destroy();
  return results;
}

/** Paid ones, their statuses and the first few failures. */
function tally(sent: Sent[]) {
  const statuses: Record<string, number> = {};
  const failures = new Set<string>();
  for (const s of sent) {
    statuses[s.status] = (statuses[s.status] ?? 0) + 1;
    if (!s.paymentId && s.failure && failures.size < 3) failures.add(s.failure);
  }
  const paid = sent.filter((s): s is Sent & { paymentId: string } => s.paymentId !== undefined);
  return { paid, statuses, failures: [...failures] };
}

// ---------------------------------------------------------------- main

async function main() {
  const loadAtStart = loadavg()[0]!;
  const logDir = mkdtempSync(join(tmpdir(), "c402-bench-webhooks-"));
  const databases: string[] = [];
  let receiver: Receiver | undefined;
  let system: System | undefined;
  let keepLogs = false;
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      await system?.stop().catch(() => undefined);
      await receiver?.stop().catch(() => undefined);
      for (const d of databases) await dropDatabase(config.postgres, d).catch((err: unknown) => log(`could not drop database ${d}: ${String(err)}`));
      if (keepLogs) log(`the system's logs are kept in ${logDir}`);
      else rmSync(logDir, { recursive: true, force: true });
    })());
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void stopAll().then(() => process.exit(130)));

  try {
    const brokers = config.kafka.split(",").map((b) => b.trim());
    const redisHost = new URL(config.redis);
    const pgHost = new URL(config.postgres);
    for (const [what, where] of [
      ["Kafka (BENCH_KAFKA_BROKERS)", brokers[0]!],
      ["Redis (BENCH_REDIS_URL)", `${redisHost.hostname}:${redisHost.port || 6379}`],
      ["PostgreSQL (BENCH_POSTGRES_URL)", `${pgHost.hostname}:${pgHost.port || 5432}`],
    ] as const) {
      if (!(await reachable(where))) throw new Error(`${what} is not reachable at ${where}`);
    }

    log("starting the webhook receiver in a child process…");
    receiver = await startReceiver();
    log(`starting the distributed system (every service its own process; Kafka ${config.kafka}, Redis, PostgreSQL)…`);
    const systemStart = performance.now();
    keepLogs = true;
    system = await startSystem({ ...config, databasePrefix: "c402_bench_webhooks" }, logDir, databases);
    keepLogs = false;
    log(`healthy in ${((performance.now() - systemStart) / 1000).toFixed(1)} s at ${system.baseUrl}`);
    const { baseUrl, database } = system;

    const { key } = await signIn(baseUrl);
    const created = await call(`${baseUrl}/v1/checkouts`, {
      method: "POST",
      key,
      body: { title: "Webhook bench weather", price_usd: PRICE_USD, payload: { city: "Paris", temp_c: 21 }, reusable: true },
    });
    if (created.status !== 201) throw new Error(`create checkout: ${created.status} ${created.text}`);
    const testUrl = `${baseUrl}/c/${created.body.id as string}/test`;
    const hook = await call(`${baseUrl}/v1/webhooks`, { method: "POST", key, body: { url: receiver.info.url } });
    if (hook.status !== 201 || typeof hook.body?.secret !== "string") throw new Error(`register the webhook: ${hook.status} ${hook.text}`);

    const unpaid = await call(testUrl);
    const header = unpaid.headers.get("payment-required");
    if (unpaid.status !== 402 || !header)
      throw new Error(`GET ${testUrl}: expected 402 with PAYMENT-REQUIRED, got ${unpaid.status} ${unpaid.text.slice(0, 300)}`);
    const required = decodeHeader(header) as unknown as PaymentRequired;
    const validFor = (required.accepts[0] as PaymentRequirements).maxTimeoutSeconds;
    for (const [name, seconds] of [
      ["BENCH_WEBHOOK_SECONDS", config.seconds],
      ["BENCH_BACKLOG_DOWN_SECONDS", config.downSeconds],
    ] as const) {
      if (seconds > validFor - 30) throw new Error(`${name} ${seconds} is too long: payments are signed before the run and are valid for ${validFor} s`);
    }

    // The first delivery also waits for the webhooks consumer to join its Kafka group.
    log("first payment and its webhook…");
    const first = tally(await openLoop(testUrl, await presign(required, 1), 1));
    if (first.paid.length !== 1) throw new Error(`the first payment failed: ${first.failures.join(" | ")}`);
    if ((await waitForArrivals(receiver, [first.paid[0]!.paymentId], clock() + 120_000)) > 0)
      throw new Error("the first payment's webhook did not arrive in 120 s");

    const warmCount = Math.round(config.rate * config.warmupSeconds);
    log(`warm-up: pre-signing ${warmCount} payments, then ${config.warmupSeconds} s at ${config.rate}/s…`);
    const warm = tally(await openLoop(testUrl, await presign(required, warmCount), config.rate));
    const warmMissing = await waitForArrivals(
      receiver,
      warm.paid.map((s) => s.paymentId),
      clock() + STEADY_WAIT_MS,
    );
    if (warm.paid.length < warmCount || warmMissing > 0) {
      log(`warm-up: ${warm.paid.length}/${warmCount} paid, ${warmMissing} webhooks missing; ${warm.failures.join(" | ")}`);
    }

    // 1. Steady open-loop run.
    const steadyCount = Math.round(config.rate * config.seconds);
    log(`steady: pre-signing ${steadyCount} payments…`);
    const steadyPayments = await presign(required, steadyCount);
    log(`steady: ${config.seconds} s at ${config.rate} payments/s, open-loop…`);
    const steadySent = await openLoop(testUrl, steadyPayments, config.rate);
    const steady = tally(steadySent);
    const lastAnswer = maxOf(steadySent.map((s) => s.answered));
    const steadyMissing = await waitForArrivals(
      receiver,
      steady.paid.map((s) => s.paymentId),
      lastAnswer + STEADY_WAIT_MS,
    );
    const firstScheduled = steadySent[0]!.scheduled;
    const paidPerSecond = steady.paid.length / ((lastAnswer - firstScheduled) / 1000);
    const sendLag = pcts(steadySent.map((s) => s.sent - s.scheduled));
    const answerLatency = pcts(steady.paid.map((s) => s.answered - s.scheduled));
    const received = steady.paid.filter((s) => receiver!.arrivals.has(s.paymentId));
    // A webhook that never came counts as slower than any that did.
    const latencies = steady.paid.map((s) => (receiver!.arrivals.get(s.paymentId) ?? Infinity) - s.answered);
    const fromStart = steady.paid.map((s) => (receiver!.arrivals.get(s.paymentId) ?? Infinity) - s.scheduled);
    const hookLatency = pcts(latencies);
    const hookFromStart = pcts(fromStart);
    const fifth = Math.max(1, Math.floor(steady.paid.length / 5));
    const firstFifth = pcts(latencies.slice(0, fifth));
    const lastFifth = pcts(latencies.slice(-fifth));
    const arrivalTimes = received.map((s) => receiver!.arrivals.get(s.paymentId)!);
    const deliveredPerSecond = received.length / ((maxOf(arrivalTimes) - firstScheduled) / 1000);

    // Where the time goes: the services' own records of each paid event (PostgreSQL's and the services' clocks: the same machine's).
    const stages = await query<{ payment_id: string; published: number | null; fanned_out: number; attempt_started: number | null; attempts: number }>(
      database,
      `select d.aggregate_id as payment_id,
              extract(epoch from o.published_at) * 1000 as published,
              extract(epoch from d.created_at) * 1000 as fanned_out,
              extract(epoch from a.started_at) * 1000 as attempt_started,
              d.attempts
         from webhooks.deliveries d
         left join payments.outbox o on o.event_id = d.event_id
         left join webhooks.delivery_attempts a on a.delivery_id = d.id and a.number = 1
        where d.aggregate_id = any($1)`,
      [steady.paid.map((s) => s.paymentId)],
    );
    const answeredAt = new Map(steady.paid.map((s) => [s.paymentId, s.answered]));
    const after = (pick: (r: (typeof stages)[number]) => number | null) =>
      pcts(stages.filter((r) => pick(r) !== null).map((r) => Number(pick(r)) - answeredAt.get(r.payment_id)!));
    const published = after((r) => r.published);
    const fannedOut = after((r) => r.fanned_out);
    const attemptStarted = after((r) => r.attempt_started);
    const retried = stages.filter((r) => Number(r.attempts) > 1).length;
    // The consumer's pace: events fanned out per second from the first to the last of the run.
    const fanOutTimes = stages.map((r) => Number(r.fanned_out));
    const fanOutPerSecond = (stages.length - 1) / ((maxOf(fanOutTimes) + maxOf(fanOutTimes.map((t) => -t))) / 1000);

    // 2. Backlog: the receiver refuses connections for downSeconds while payments keep coming.
    const backlogCount = Math.round(config.backlogRate * config.downSeconds);
    log(`backlog: pre-signing ${backlogCount} payments…`);
    const backlogPayments = await presign(required, backlogCount);
    const postsBefore = receiver.counts.posts;
    const downAt = await receiver.down();
    log(`backlog: receiver down for ${config.downSeconds} s, ${config.backlogRate} payments/s meanwhile…`);
    const sending = openLoop(testUrl, backlogPayments, config.backlogRate);
    await sleep(Math.max(0, downAt + config.downSeconds * 1000 - clock()));
    const upAt = await receiver.up();
    const postsWhileDown = receiver.counts.posts - postsBefore;
    const backlogSent = await sending;
    const backlog = tally(backlogSent);
    const outageIds = backlog.paid.map((s) => s.paymentId);
    const drainWaitMs = Math.max(120_000, 1.5 * config.downSeconds * 1000 + 30_000);
    log(
      `backlog: receiver back on port ${receiver.info.port}; waiting up to ${Math.round(drainWaitMs / 1000)} s for the ${outageIds.length} events of the outage…`,
    );
    const backlogMissing = await waitForArrivals(receiver, outageIds, upAt + drainWaitMs);
    const afterUp = outageIds.filter((id) => receiver!.arrivals.has(id)).map((id) => receiver!.arrivals.get(id)! - upAt);
    const drain = pcts(afterUp);
    const beforeUp = afterUp.filter((ms) => ms < 0).length;
    const sentAfterUp = backlogSent.filter((s) => s.sent > upAt).length;
    const attemptsOf = await query<{ attempts: number; n: string }>(
      database,
      `select attempts, count(*) as n from webhooks.deliveries where aggregate_id = any($1) and status = 'delivered' group by attempts order by attempts`,
      [outageIds],
    );
    const backlogSpan = (maxOf(backlogSent.map((s) => s.answered)) - backlogSent[0]!.scheduled) / 1000;

    // ------------------------------------------------------------ print
    const keptUp = paidPerSecond >= 0.95 * config.rate;
    const fellBehind = lastFifth.p50 > 2 * firstFifth.p50 && lastFifth.p50 > 250;
    const ms = (n: number) => (Number.isFinite(n) ? `${f1(n)} ms` : "never");
    const lines = [
      "",
      `webhook delivery benchmark (${cpus().length} cores, node ${process.version}; ${cpus()[0]?.model.trim() ?? "unknown cpu"})`,
      `  distributed mode: every service its own process, PostgreSQL, Kafka ${config.kafka}, Redis; receiver (node:http) in its own process, load from a third`,
      `  1-min load average ${loadAtStart.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end (other work on the machine skews every figure)`,
      "",
      `webhook        payment → webhook received  p50 ${ms(hookLatency.p50)}  p99 ${ms(hookLatency.p99)} at ${f0(config.rate)} payments/s open-loop (target p99 ≤ ${TARGET_P99_MS} ms) ${hookLatency.p99 <= TARGET_P99_MS ? "PASS" : "ABOVE TARGET"}`,
      `               (${config.seconds} s after ${config.warmupSeconds} s warm-up: ${f0(steadySent.length)} sent, ${f0(steady.paid.length)} paid [${statusList(steady.statuses)}], ${f1(paidPerSecond)} paid/s; ${f0(received.length)} of ${f0(steady.paid.length)} webhooks received${steadyMissing > 0 ? `, ${f0(steadyMissing)} not within ${STEADY_WAIT_MS / 1000} s (counted as never)` : ""}, ${f1(deliveredPerSecond)}/s; max ${ms(hookLatency.max)})`,
      `               from request start p50 ${ms(hookFromStart.p50)}, p99 ${ms(hookFromStart.p99)}; paid answer p50 ${ms(answerLatency.p50)}, p99 ${ms(answerLatency.p99)}; send lag p99 ${ms(sendLag.p99)}`,
      `               after the paid answer, p50 / p99: outbox published ${ms(published.p50)} / ${ms(published.p99)}, fanned out by the Kafka consumer ${ms(fannedOut.p50)} / ${ms(fannedOut.p99)} (${f1(fanOutPerSecond)} events/s), attempt started ${ms(attemptStarted.p50)} / ${ms(attemptStarted.p99)}, received ${ms(hookLatency.p50)} / ${ms(hookLatency.p99)}${retried > 0 ? `; ${retried} retried` : ""}`,
      `               first fifth of the run p50 ${ms(firstFifth.p50)} p99 ${ms(firstFifth.p99)}, last fifth p50 ${ms(lastFifth.p50)} p99 ${ms(lastFifth.p99)}`,
    ];
    if (!keptUp) lines.push(`               the system did not keep up with ${f0(config.rate)} payments/s: ${f1(paidPerSecond)} paid/s`);
    if (fellBehind) lines.push(`               deliveries fell behind the payments: the latency grew over the run`);
    if (steady.failures.length > 0) lines.push(`               payment failures: ${steady.failures.join(" | ")}`);
    lines.push(
      `backlog drain  receiver down ${config.downSeconds} s (connections refused), ${f0(backlog.paid.length)} events meanwhile: all received ${backlogMissing === 0 ? `${f1(drain.max / 1000)} s` : `NOT within ${Math.round(drainWaitMs / 1000)} s (${f0(backlogMissing)} missing; the last after ${f1(drain.max / 1000)} s)`} after it came back (p50 ${f1(drain.p50 / 1000)} s); set by ${SCHEDULE}`,
      `               (${f0(backlogSent.length)} sent at ${f0(config.backlogRate)}/s over ${f1(backlogSpan)} s, ${f0(backlog.paid.length)} paid [${statusList(backlog.statuses)}]${sentAfterUp > 0 ? `, ${sentAfterUp} sent after it came back` : ""}; ${postsWhileDown} received while down, ${beforeUp} before it came back; delivered on attempt ${attemptsOf.map((r) => `${r.attempts}×${r.n}`).join(" ")}; duplicates over the whole run ${receiver.counts.duplicates})`,
    );
    if (backlog.failures.length > 0) lines.push(`               payment failures: ${backlog.failures.join(" | ")}`);
    lines.push("");
    process.stdout.write(lines.join("\n"));
  } catch (err) {
    // The system's logs, if it was started, are kept for a look at what went wrong.
    keepLogs = databases.length > 0;
    try {
      const tail = readFileSync(join(logDir, "run.log"), "utf8").split("\n").slice(-30).join("\n");
      if (tail.trim()) process.stderr.write(`run.ts output (last lines):\n${tail}\n`);
    } catch {
      // no output yet
    }
    throw err;
  } finally {
    log("stopping the system and the receiver, dropping the database…");
    await stopAll();
  }
}

runBenchmark(main);
