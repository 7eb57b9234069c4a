/**
 * G35, soak without leaks: distributed mode (every service and the gateway a
 * process of its own, on PostgreSQL, Kafka and Redis, with the devchain) under
 * a fixed arrival rate, open loop, for SOAK_MINUTES (default 30) at SOAK_RATE
 * requests a second (default 250: half G34's 500). The mix: unpaid quotes,
 * paid inline and relay rehearsals and a seller's reads (load/paid-traffic.ts
 * of the distributed tests; live settlement is left out: the devchain mines a
 * block per transaction). For every process it reports, after a warm-up and at
 * the end, the resident memory and open file descriptors (/proc/<pid>) and the
 * event loop's delay p99 over the last minute (prom-client's
 * c402_nodejs_eventloop_lag_p99_seconds, from monitorEventLoopDelay, reset at
 * each scrape), and the answers' statuses and latency. A report, not a gate: the
 * exit code is 0 whenever the run completes. Not in CI.
 *
 *   npm run bench:soak                       # 30 minutes
 *   SOAK_MINUTES=2 npm run bench:soak        # a short check of the script itself
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalCluster, type ClusterProcess } from "../../deploy/local/src/cluster";
import { freePort } from "../../deploy/local/src/ports";
import { dropDatabase } from "../../deploy/local/src/provision";
import { clusterEnvironment, openShop, salesKinds, send, startSellerServers, type RequestKind } from "../../deploy/local/test/load/paid-traffic";
import { BENCH_INFRASTRUCTURE } from "./lib/distributed-system";
import { f0, f1, log, num, percentile, runBenchmark, statusList } from "./lib/report";

const config = {
  minutes: num("SOAK_MINUTES", 30, 2),
  rate: num("SOAK_RATE", 250, 100),
  warmupSeconds: num("SOAK_WARMUP_SECONDS", 60, 20),
  ...BENCH_INFRASTRUCTURE,
};
/** G35's thresholds. */
const TARGET_RSS_GROWTH = 0.1;
const TARGET_LOOP_P99_MS = 20;
/** A request not answered within this counts as an error (the gateway's own bound on a paid request is 60 s). */
const ANSWER_BOUND_MS = 70_000;
/** Requests in flight beyond this are not sent (counted as skipped): an overloaded system must not turn the generator into a leak of its own. */
const MAX_IN_FLIGHT = 2_000;
/** The mix, by weight: three quotes to each paid rehearsal (inline, relay) and seller read; the relay's share (a sixth: 75,000 in 30 min at 250/s) stays under its rehearsal cap of 100,000 a day. */
const MIX = ["quote", "quote", "quote", "rehearsal", "relay", "seller-read"];
/** The devchain account minting test USDC (none is needed: no live buyers). */
const MINTER_INDEX = 5;

interface ProcessFigures {
  rssMb: number;
  fds: number;
  loopP99Ms: number | undefined;
}

/** A process's resident memory and open descriptors from /proc, and its event-loop delay p99 from its metrics. */
async function figuresOf(p: ClusterProcess): Promise<ProcessFigures> {
  const pid = p.child.pid as number;
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  const metrics = await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`).then(
    (r) => r.text(),
    () => "",
  );
  // prom-client's default metrics, under the c402_ prefix of packages/metrics.
  const lag = /^c402_nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? ([0-9.eE+-]+)$/m.exec(metrics)?.[1];
  return { rssMb: rssKb / 1024, fds: readdirSync(`/proc/${pid}/fd`).length, loopP99Ms: lag === undefined ? undefined : Number(lag) * 1000 };
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), "c402-soak-"));
  const database = `c402_soak_${process.pid}`;
  const seller = await startSellerServers();
  log(`starting the distributed system (PostgreSQL ${config.postgres}, Kafka ${config.kafka}, Redis ${config.redis})`);
  const cluster = await startLocalCluster({
    adminUrl: config.postgres,
    database,
    kafkaBrokers: config.kafka,
    redisUrl: config.redis,
    gatewayPort: await freePort(),
    logDir: join(dataDir, "logs"),
    env: clusterEnvironment(dataDir),
    onUnexpectedExit: (p, code, signal) => log(`!! ${p.name}.${p.replica} exited by itself (${code ?? signal})`),
  });
  try {
    const base = cluster.gatewayUrls[0] as string;
    const shop = await openShop(cluster, base, seller, { buyers: 0, minterIndex: MINTER_INDEX });
    const kinds = new Map(salesKinds(shop).map((k) => [k.name, k]));
    const mix = MIX.map((name) => kinds.get(name) as RequestKind);

    // The open loop: requests sent at the fixed rate whether or not earlier ones were answered.
    const window = { latencies: [] as number[], statuses: {} as Record<string, number> };
    let sent = 0;
    let inFlight = 0;
    let skipped = 0;
    const fire = () => {
      const kind = mix[sent++ % mix.length] as RequestKind;
      if (inFlight >= MAX_IN_FLIGHT) return void skipped++;
      inFlight++;
      const at = Date.now();
      void kind
        .build(0)
        .then((out) => send(`${base}${out.path}`, out, ANSWER_BOUND_MS))
        .then((answer) => {
          const status = "error" in answer ? answer.error : String(answer.status);
          const key = `${kind.name} ${status}`;
          window.statuses[key] = (window.statuses[key] ?? 0) + 1;
          window.latencies.push(Date.now() - at);
        })
        .finally(() => inFlight--);
    };
    const started = Date.now();
    const ticker = setInterval(() => {
      const due = Math.floor(((Date.now() - started) / 1000) * config.rate);
      while (sent + skipped < due) fire();
    }, 5);

    const snapshot = () => Promise.all(cluster.processes.map(async (p) => ({ p, f: await figuresOf(p) })));
    const minute = (label: string) => {
      const sorted = window.latencies.sort((a, b) => a - b);
      const line = `${label}: ${f0(sorted.length)} answers, p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, in flight ${inFlight}, skipped ${skipped}, load ${loadavg()
        .map(f1)
        .join(" ")}; ${statusList(window.statuses)}`;
      window.latencies = [];
      window.statuses = {};
      return { line, p99: percentile(sorted, 99) };
    };

    log(`warming up for ${config.warmupSeconds} s at ${config.rate}/s`);
    await new Promise((r) => setTimeout(r, config.warmupSeconds * 1000));
    minute("warm-up");
    await snapshot(); // resets each process's event-loop histogram: the next reading covers a minute of load
    await new Promise((r) => setTimeout(r, 60_000));
    const first = await snapshot();
    const minutes: string[] = [minute("minute 1").line];
    log(minutes[0] as string);
    const loopPeaks = new Map<string, number>();
    const notePeaks = (snap: { p: ClusterProcess; f: ProcessFigures }[]) => {
      for (const { p, f } of snap) loopPeaks.set(p.name, Math.max(loopPeaks.get(p.name) ?? 0, f.loopP99Ms ?? 0));
    };
    notePeaks(first);
    let last = first;
    for (let m = 2; m <= config.minutes; m++) {
      await new Promise((r) => setTimeout(r, 60_000));
      last = await snapshot();
      notePeaks(last);
      minutes.push(minute(`minute ${m}`).line);
      log(minutes[minutes.length - 1] as string);
    }
    clearInterval(ticker);

    console.log(`\nsoak (G35): ${config.minutes} min at ${config.rate} requests/s (open loop; mix ${MIX.join(", ")}), distributed mode, one process each`);
    console.log(`process          RSS start → end (MB)   growth   fds start → end   loop p99 start / end / worst minute (ms)`);
    for (const { p, f } of first) {
      const end = (last.find((s) => s.p === p) as { f: ProcessFigures }).f;
      const growth = (end.rssMb - f.rssMb) / f.rssMb;
      const loop = (ms: number | undefined) => (ms === undefined ? "–" : f1(ms));
      console.log(
        `${p.name.padEnd(16)} ${f1(f.rssMb).padStart(7)} → ${f1(end.rssMb).padEnd(12)} ${`${f1(growth * 100)} %`.padStart(7)} ${String(f.fds).padStart(6)} → ${String(end.fds).padEnd(9)} ${loop(f.loopP99Ms)} / ${loop(end.loopP99Ms)} / ${loop(loopPeaks.get(p.name))}` +
          `${growth < TARGET_RSS_GROWTH ? "" : "  RSS ABOVE TARGET"}${end.fds <= f.fds ? "" : "  FDS GREW"}${(loopPeaks.get(p.name) ?? 0) < TARGET_LOOP_P99_MS ? "" : "  LOOP ABOVE TARGET"}`,
      );
    }
    console.log(`\nper minute:\n${minutes.join("\n")}`);
  } finally {
    await cluster.stop();
    await dropDatabase(config.postgres, database).catch(() => undefined);
    await seller.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

runBenchmark(main);
