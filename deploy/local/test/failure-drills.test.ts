import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeWith } from "@c402/testkit";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { SERVICES } from "@c402/topology";
import { signExactEvmPayment } from "@c402/x402";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startLocalCluster, type ClusterProcess, type LocalCluster } from "../src/cluster";
import { freePort } from "../src/ports";
import { startOwnKafka, type OwnKafka } from "./infrastructure/kafka-broker";
import { startOwnPostgres, type OwnPostgres } from "./infrastructure/postgres-instance";
import { startOwnRedis, type OwnRedis } from "./infrastructure/redis-server";
import {
  clusterEnvironment,
  latencyQuantile,
  openShop,
  retryLater,
  unavailableWithRetryAfter,
  salesKinds,
  startTraffic,
  tally,
  unexpectedAnswers,
  type Answer,
  type RequestKind,
  type Shop,
  type TrafficResult,
} from "./load/paid-traffic";
import { eventually, expectEverySaleRecordedOnce, unpublishedEvents } from "./load/sales-audit";

/**
 * Failure drills on distributed mode (G33, G14, and PostgreSQL and service
 * crashes): one cluster (a process per service and the gateway) on a Redis, a
 * Kafka broker and a PostgreSQL server of its own, so each can be killed and
 * started again without touching what other suites use. Each drill runs buyers
 * paying (rehearsal, relay and live, as the rolling restart does) while its
 * fault lasts, then counts that every payment answered is settled once, with
 * one event and one webhook delivery, and that every outbox drained
 * (load/sales-audit.ts). The drills share the cluster and the count: each one
 * checks every payment made since the cluster started.
 */
const BUYERS = 4;
/** The devchain account minting the live buyers' USDC (the rolling restart uses 7). */
const MINTER_INDEX = 6;
/**
 * No answer may take longer, whatever is down: the gateway's own bound on a
 * paid request (PAID_REQUEST_TIMEOUT_MS, 60 s) and 10 s for its way back. A
 * relay payment presented again after its first request died with a process
 * waits for that claim's deadline (ADR 9).
 */
const ANSWER_BOUND_MS = 70_000;
/** Redis is no part of a payment or a read: while it is down, nothing waits for it. */
const REDIS_ANSWER_BOUND_MS = 10_000;
const REDIS_DOWN_MS = 20_000;
/** G33: the metered routes admit again within this of Redis accepting connections (target 5 s; generous for a shared 2-core machine). */
const REDIS_RECOVERY_BOUND_MS = 10_000;
/** A refusal for want of Redis must be fast: no waiting on a connection that will not come. */
const REFUSAL_BOUND_MS = 2_000;
const KAFKA_DOWN_MS = 12_000;
/** G14: what the outboxes held while the broker was down is published within this of its restart. */
const OUTBOX_DRAIN_BOUND_MS = 60_000;
const POSTGRES_DOWN_MS = 5_000;
const SERVICE_DOWN_MS = 5_000;
/** The services SIGKILLed, one drill each (DRILL_SIGKILL: names separated by commas, or `all`); payments runs the sagas. */
const KILLED = process.env.DRILL_SIGKILL === "all" ? SERVICES.map((s) => s.name) : (process.env.DRILL_SIGKILL ?? "payments").split(",");

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (from: number, to: number) => (a: Answer) => a.at >= from && a.at < to;

describeWith("postgres")("failure drills on distributed mode under paid load", () => {
  let cluster: LocalCluster | undefined;
  let redis: OwnRedis | undefined;
  let kafka: OwnKafka | undefined;
  let postgres: OwnPostgres | undefined;
  let origin: FakeOrigin;
  let receiver: WebhookReceiver;
  let dataDir: string;
  let shop: Shop;
  let databaseUrl: string;
  const database = "c402_drills";
  const unexpectedExits: string[] = [];
  /** Every payment answered since the cluster started. */
  const sold: string[] = [];

  beforeAll(async () => {
    [origin, receiver, redis, kafka, postgres] = await Promise.all([
      startFakeOrigin(),
      startWebhookReceiver(),
      startOwnRedis(),
      startOwnKafka(),
      startOwnPostgres(),
    ]);
    dataDir = mkdtempSync(join(tmpdir(), "c402-drills-"));
    cluster = await startLocalCluster({
      adminUrl: postgres.adminUrl,
      database,
      kafkaBrokers: kafka.brokers,
      redisUrl: redis.url,
      gatewayPort: await freePort(),
      logDir: join(dataDir, "logs"),
      env: clusterEnvironment(dataDir),
      onUnexpectedExit: (p, code, signal) => unexpectedExits.push(`${p.name}.${p.replica} exited by itself (${code ?? signal})`),
    });
    databaseUrl = new URL(`/${database}`, postgres.adminUrl).toString();
    shop = await openShop(cluster, cluster.gatewayUrls[0] as string, { receiver, origin }, { buyers: BUYERS, minterIndex: MINTER_INDEX });
  }, 300_000);

  afterAll(async () => {
    await cluster?.stop();
    await Promise.all([redis?.stop(), kafka?.stop(), postgres?.stop(), origin?.close(), receiver?.close()]);
    // DRILL_KEEP_LOGS=1 keeps every process's log (<dir>/logs/<name>.log) to read after a failed drill.
    if (dataDir && process.env.DRILL_KEEP_LOGS) process.stdout.write(`drill logs kept in ${dataDir}/logs\n`);
    else if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  /** Runs the sales traffic (and `extra` kinds) around `fault`, then checks what every drill checks. */
  async function underLoad(name: string, fault: () => Promise<void>, opts: { extra?: RequestKind[]; tolerate?: (a: Answer) => boolean; hangMs?: number } = {}) {
    const c = cluster as LocalCluster;
    const kinds = [...salesKinds(shop), ...(opts.extra ?? [])];
    const started = Date.now();
    const traffic = startTraffic({ gateways: c.gatewayUrls, kinds, buyers: BUYERS, retryLater: true, hangMs: opts.hangMs ?? ANSWER_BOUND_MS });
    let result: TrafficResult;
    try {
      await pause(3_000);
      await fault();
    } finally {
      result = await traffic.stop();
    }
    sold.push(...result.paid.map((p) => p.paymentId));
    expect(unexpectedExits).toEqual([]);
    expect(result.faults).toEqual([]);
    const wrong = unexpectedAnswers(result.answers, kinds, opts.tolerate);
    expect({ wrong: wrong.length, first: wrong.slice(0, 5) }).toEqual({ wrong: 0, first: [] });
    for (const kind of ["rehearsal", "relay", "live"]) expect(result.paid.filter((p) => p.kind === kind).length).toBeGreaterThan(0);
    const auditStarted = Date.now();
    await expectEverySaleRecordedOnce(databaseUrl, receiver, sold);
    process.stdout.write(
      `drill ${name}: ${Math.round((Date.now() - started) / 1000)} s (count ${Math.round((Date.now() - auditStarted) / 1000)} s), ` +
        `${result.paid.length} payments (${sold.length} in all), p99 ${latencyQuantile(result.answers, 0.99)} ms; ${JSON.stringify(tally(result.answers))}\n`,
    );
    return { result, kinds };
  }

  it.each(KILLED)(
    "SIGKILL of %s mid-load: the gateway answers 503 with Retry-After (never another 5xx) until it is back; every saga resumes",
    async (service) => {
      const c = cluster as LocalCluster;
      const target = c.processes.find((p) => p.name === service) as ClusterProcess;
      expect(target).toBeDefined();
      let down = { from: 0, to: 0 };
      const { result } = await underLoad(
        `SIGKILL ${service}`,
        async () => {
          down.from = Date.now();
          const exit = await c.kill(target, SERVICE_DOWN_MS);
          down = { ...down, to: Date.now() };
          expect(exit.signal).toBe("SIGKILL");
          await pause(5_000);
        },
        { tolerate: retryLater },
      );
      process.stdout.write(
        `  ${service} down (killed to serving again) ${down.to - down.from} ms; ${result.answers.filter(between(down.from, down.to)).length} answers meanwhile\n`,
      );
    },
    360_000,
  );

  it("G33: Redis killed under load and restarted after 20 s: nothing hangs, metered money and auth routes refuse fast with Retry-After, reads and payments go on, recovery within seconds", async () => {
    const own = redis as OwnRedis;
    const metered = meteredKinds(shop);
    const failClosed = new Set(metered.map((k) => k.name));
    const t = { killed: 0, restarted: 0, up: 0 };
    const { result } = await underLoad(
      "Redis outage",
      async () => {
        t.killed = Date.now();
        await own.kill();
        await pause(REDIS_DOWN_MS);
        t.restarted = Date.now();
        await own.start();
        t.up = Date.now();
        await pause(REDIS_RECOVERY_BOUND_MS + 3_000);
      },
      {
        extra: metered,
        hangMs: REDIS_ANSWER_BOUND_MS,
        // Refused for want of Redis: answered once it was killed, asked before the recovery bound ran out.
        tolerate: (a) => failClosed.has(a.kind) && unavailableWithRetryAfter(a) && a.at + a.ms >= t.killed && a.at < t.up + REDIS_RECOVERY_BOUND_MS,
      },
    );
    // While Redis was gone (past the first second, when the client learns it): every metered request refused, fast.
    const outage = result.answers.filter(between(t.killed + 1_000, t.restarted));
    for (const kind of failClosed) {
      const answers = outage.filter((a) => a.kind === kind);
      expect({ kind, answers: answers.length > 0, refused: answers.filter((a) => !unavailableWithRetryAfter(a)).map((a) => a.status) }).toEqual({
        kind,
        answers: true,
        refused: [],
      });
    }
    const refusals = outage.filter((a) => failClosed.has(a.kind));
    expect(Math.max(...refusals.map((a) => a.ms))).toBeLessThan(REFUSAL_BOUND_MS);
    // The rest went on: buyers paid and quotes and the seller's reads were answered (unexpectedAnswers tolerated nothing else).
    for (const kind of ["rehearsal", "relay", "live", "quote", "seller-read"]) expect(outage.filter((a) => a.kind === kind).length).toBeGreaterThan(0);
    // Recovery: the last refusal came within the bound after Redis was back, and every metered kind was admitted after it.
    const lastRefusal = Math.max(t.up, ...result.answers.filter((a) => failClosed.has(a.kind) && unavailableWithRetryAfter(a)).map((a) => a.at + a.ms));
    expect(lastRefusal - t.up).toBeLessThan(REDIS_RECOVERY_BOUND_MS);
    for (const kind of failClosed)
      expect(result.answers.filter((a) => a.kind === kind && a.at > lastRefusal && !unavailableWithRetryAfter(a)).length).toBeGreaterThan(0);
    process.stdout.write(
      `  Redis down ${t.up - t.killed} ms: ${outage.length} answers, p99 ${latencyQuantile(outage, 0.99)} ms (refusals p99 ${latencyQuantile(refusals, 0.99)} ms, ` +
        `max ${Math.max(...refusals.map((a) => a.ms))} ms); metered routes admitting again ${Math.max(0, lastRefusal - t.up)} ms after Redis was back\n`,
    );
  }, 300_000);

  it("G14: the Kafka broker killed (kill -9) under load and restarted on its data: outboxes hold every event and drain, consumers apply each effect once", async () => {
    const own = kafka as OwnKafka;
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const t = { killed: 0, up: 0, drained: 0 };
    let held = 0;
    try {
      await underLoad("Kafka broker killed", async () => {
        t.killed = Date.now();
        await own.kill();
        await pause(KAFKA_DOWN_MS);
        held = await unpublishedEvents(db);
        await own.start();
        t.up = Date.now();
        await eventually(async () => (await unpublishedEvents(db)) === 0, "every outbox published after the broker's restart", OUTBOX_DRAIN_BOUND_MS);
        t.drained = Date.now();
        await pause(3_000);
      });
    } finally {
      await db.end();
    }
    // The sales made while the broker was gone waited in the outboxes.
    expect(held).toBeGreaterThan(0);
    process.stdout.write(
      `  broker down ${t.up - t.killed} ms (restart included); ${held} events held in outboxes, published ${t.drained - t.up} ms after it was back\n`,
    );
  }, 300_000);

  it("PostgreSQL stopped (fast shutdown) under load and started 5 s later: no 5xx but 503 with Retry-After, nothing lost", async () => {
    const own = postgres as OwnPostgres;
    const t = { stopping: 0, up: 0 };
    const { result } = await underLoad(
      "PostgreSQL restart",
      async () => {
        t.stopping = Date.now();
        await own.restart(POSTGRES_DOWN_MS);
        t.up = Date.now();
        await pause(8_000);
      },
      { tolerate: retryLater },
    );
    const refused = result.answers.filter(retryLater);
    process.stdout.write(`  PostgreSQL down ${t.up - t.stopping} ms; ${refused.length} answers to retry later (503 or 409 with Retry-After)\n`);
  }, 300_000);
});

/**
 * The routes a Redis counter meters, which must fail closed without it: a
 * seller signing in (auth), a seller's write, and the facilitator's verify
 * (money; its per-address limit answers 429 under this load).
 */
function meteredKinds(shop: Shop): RequestKind[] {
  const requirement = shop.faces.live.requirement;
  return [
    {
      name: "sign-in",
      expected: [200],
      build: async () => ({
        path: "/auth/wallet/challenge",
        method: "POST",
        body: JSON.stringify({ address: privateKeyToAccount(generatePrivateKey()).address, network: "eip155:8453" }),
      }),
    },
    {
      name: "seller-write",
      expected: [201],
      build: async () => ({
        path: "/v1/checkouts",
        method: "POST",
        headers: shop.auth,
        body: JSON.stringify({ title: "Drill", price_usd: "0.01", payload: { n: 1 } }),
      }),
    },
    {
      name: "facilitator-verify",
      expected: [200, 429],
      build: async () => ({
        path: "/x402/base/verify",
        method: "POST",
        body: JSON.stringify({
          network: requirement.network,
          requirement,
          payload: await signExactEvmPayment(privateKeyToAccount(generatePrivateKey()), requirement),
        }),
      }),
    },
  ];
}
