/**
 * The paid path (issue 16), side by side in one run:
 *  1. paid rehearsals per second on our /c/{id}/test face at BENCH_PAID_BUYERS
 *     closed-loop buyers, embedded mode (every service and PGlite in one
 *     process): the payment verified, recorded with its event, the event
 *     published and recorded by webhooks, the goods and receipt answered;
 *  2. the official stack doing less: @x402/express with its in-process
 *     facilitator whose settle is simulated (verify real, settle answers
 *     success without the chain, nothing persisted), same buyers, same load;
 *  3. the same paid rehearsals in distributed mode (every service its own
 *     process, PostgreSQL, Kafka, Redis: deploy/local/src/run.ts), with one
 *     process of each service and gateway, then with a second payments
 *     replica, then two of each (the load spread over both gateways).
 *     BENCH_PAID_DISTRIBUTED=0 leaves it out.
 * Each server runs in its own child process; this process only generates load.
 */
import { devchainKey } from "@c402/devchain";
import { TestUSDC } from "@c402/evm-contracts";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, createWalletClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { profileArgs, startChild, type Child } from "./lib/child";
import { BENCH_INFRASTRUCTURE, dropDatabase, startSystem, type System } from "./lib/distributed-system";
import { createCheckout, paymentRequired, signIn } from "./lib/http";
import { cpuPerPayment, cpuSnapshot } from "./lib/process-cpu";
import { closedLoop, presign, type PaidFigures } from "./lib/paid-load";
import { f1, log, num, runBenchmark, statusList } from "./lib/report";
import { roundTripsPer, scrapeAllRoundTrips, scrapeRoundTrips } from "./lib/round-trips";
import type { OfficialInfo } from "./servers/official";
import type { OursInfo } from "./servers/ours";

const config = {
  buyers: num("BENCH_PAID_BUYERS", 16, 16),
  payments: num("BENCH_PAID_PAYMENTS", 3_000, 600),
  // Steady state: 400 paid requests left the server's hot path partly unoptimized by V8 (the same code ran
  // 240–300 payments/s after 400, 350–410 after 5,000–15,000; bench/README.md), and both stacks get it.
  warmup: num("BENCH_PAID_WARMUP", 5_000, 100),
  distributed: process.env.BENCH_PAID_DISTRIBUTED !== "0",
  system: {
    ...BENCH_INFRASTRUCTURE,
    logLevel: process.env.BENCH_LOG_LEVEL ?? "warn",
    cpuProfDir: process.env.BENCH_CPU_PROF_DIR,
    databasePrefix: "c402_bench_paid",
  },
};

/** Issue 16's targets: payments per second embedded, its p99, and ours against the official stack with a simulated settle. */
const TARGET_EMBEDDED_PER_SECOND = 500;
const TARGET_EMBEDDED_P99_MS = 50;
const TARGET_AGAINST_OFFICIAL = 1.0;
const TARGET_DISTRIBUTED_PER_SECOND = 1_000;
/** Devchain account that mints the official run's buyers their (never spent) test USDC; the official facilitator signs with 11. */
const FUNDER_INDEX = 12;
const OFFICIAL_FACILITATOR_INDEX = 11;

const statuses = (r: PaidFigures) =>
  `${r.ok}/${r.total} paid in ${r.seconds.toFixed(2)} s [${statusList(r.statuses)}]${r.failures.length ? `; ${r.failures.join(" | ")}` : ""}`;

/** The checkout both modes sell: reusable, armed (its /test face rehearses), at $0.10. */
const CHECKOUT = { title: "Live weather", price_usd: "0.10", payload: { temp_c: 22 }, test_mode: false, reusable: true };

/** A distributed run's figures, where its CPU went (machine-wide, by process) and, with one process of each, its round trips per payment. */
type DistributedFigures = PaidFigures & { cpu: string; trips: string | undefined };

/** How many processes a distributed run starts: of each service and gateway, and of some apart. */
interface DistributedShape {
  label: string;
  /** Its profiles' folder under BENCH_PROFILE_WINDOW_DIR. */
  profileDir: string;
  replicas: number;
  replicasOf?: Record<string, number>;
}

/** One of each; the same with a second payments replica (issue 16's comparison); two of each. */
const DISTRIBUTED_SHAPES: DistributedShape[] = [
  { label: "one of each process", profileDir: "distributed-one-of-each-process", replicas: 1 },
  { label: "one of each, two payments", profileDir: "distributed-one-of-each-two-payments", replicas: 1, replicasOf: { payments: 2 } },
  { label: "two of each process", profileDir: "distributed-two-of-each-process", replicas: 2 },
];

/** Paid rehearsals on the distributed system started in `shape`. */
async function distributedRun(shape: DistributedShape): Promise<DistributedFigures> {
  const { label, replicas, replicasOf } = shape;
  const onlyOne = replicas === 1 && replicasOf === undefined;
  const logDir = mkdtempSync(join(tmpdir(), "c402-bench-paid-"));
  const databases: string[] = [];
  let system: System | undefined;
  try {
    log(`distributed, ${label}: starting the system (Kafka ${config.system.kafka}, Redis, PostgreSQL)…`);
    // BENCH_PROFILE_WINDOW_DIR: every process profiled over the timed run alone, as the embedded one is.
    const profileDir = process.env.BENCH_PROFILE_WINDOW_DIR;
    const profiles = profileDir ? { cpuProfDir: join(profileDir, shape.profileDir), cpuProfWindow: true } : {};
    system = await startSystem({ ...config.system, ...profiles, replicas, ...(replicasOf ? { replicasOf } : {}) }, logDir, databases);
    const { key } = await signIn(system.baseUrl);
    const id = await createCheckout(system.baseUrl, key, CHECKOUT);
    const faces = system.gatewayUrls.map((gateway) => `${gateway}/c/${id}/test`);
    const required = await paymentRequired(faces[0]!);
    const buyers = Array.from({ length: config.buyers }, () => privateKeyToAccount(generatePrivateKey()));
    const warm = await presign(required, buyers, config.warmup);
    const payments = await presign(required, buyers, config.payments);
    await closedLoop(faces, warm, config.buyers);
    log(`distributed, ${label}: ${config.payments} paid rehearsals, ${config.buyers} buyers over ${faces.length} gateway(s)…`);
    // Round trips are counted on the first process of each service: all of them with one of each.
    const tripsBefore = onlyOne ? await scrapeAllRoundTrips(system.metricsUrls) : undefined;
    const cpuBefore = cpuSnapshot();
    system.toggleProfiles();
    const figures = await closedLoop(faces, payments, config.buyers);
    system.toggleProfiles();
    const cpu = cpuPerPayment(cpuBefore, cpuSnapshot(), figures.total);
    const trips = tripsBefore && roundTripsPer(tripsBefore, await scrapeAllRoundTrips(system.metricsUrls), figures.total);
    return { ...figures, cpu, trips };
  } finally {
    await system?.stop().catch(() => undefined);
    for (const d of databases) await dropDatabase(config.system.postgres, d).catch((err: unknown) => log(`could not drop database ${d}: ${String(err)}`));
    rmSync(logDir, { recursive: true, force: true });
  }
}

async function main() {
  const loadAtStart = loadavg()[0]!;
  log("starting c402 (embedded system + devchain) in a child process…");
  const ours = await startChild<OursInfo>(
    join(__dirname, "servers/ours.ts"),
    { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn" },
    { execArgv: profileArgs("ours") },
  );
  const children: Child<unknown>[] = [ours];
  try {
    const { baseUrl, devchain } = ours.info;
    const seller = await signIn(baseUrl);
    const id = await createCheckout(baseUrl, seller.key, CHECKOUT);
    const url = `${baseUrl}/c/${id}/test`;
    const required = await paymentRequired(url);
    const live = (await paymentRequired(`${baseUrl}/c/${id}`)).accepts[0]!;
    const buyers = Array.from({ length: config.buyers }, () => privateKeyToAccount(generatePrivateKey()));
    log(`ours: pre-signing ${config.warmup + config.payments} payments…`);
    const warm = await presign(required, buyers, config.warmup);
    const payments = await presign(required, buyers, config.payments);
    await closedLoop(url, warm, config.buyers);
    log(`ours: ${config.payments} paid rehearsals, ${config.buyers} buyers…`);
    const before = await scrapeRoundTrips(ours.info.metricsUrl);
    const profileDir = process.env.BENCH_PROFILE_WINDOW_DIR;
    const stopProfile = profileDir ? await ours.profile(join(profileDir, "ours-paid.cpuprofile")) : undefined;
    const cpuBefore = await ours.cpuMs();
    const rehearsal = await closedLoop(url, payments, config.buyers);
    const cpuPerPayment = ((await ours.cpuMs()) - cpuBefore) / rehearsal.total;
    await stopProfile?.();
    const trips = roundTripsPer(before, await scrapeRoundTrips(ours.info.metricsUrl), rehearsal.total);

    // The official stack on the same devchain, same offer, settle simulated. Its verify reads the buyer's balance, so
    // the buyers hold the price once (a simulated settle never spends it).
    log("starting the official @x402/express server (in-process facilitator, simulated settle) in a child process…");
    const official = await startChild<OfficialInfo>(
      join(__dirname, "servers/official.ts"),
      {
        BENCH_RPC_URL: devchain.url,
        BENCH_FACILITATOR_KEY: devchainKey(devchain.mnemonic, OFFICIAL_FACILITATOR_INDEX),
        BENCH_PAY_TO: seller.seller,
        BENCH_AMOUNT: live.amount,
        BENCH_ASSET: live.asset,
        BENCH_SIMULATED_SETTLE: "1",
      },
      { execArgv: profileArgs("official") },
    );
    children.push(official);
    const pub = createPublicClient({ transport: http(devchain.url) });
    const funder = createWalletClient({ account: privateKeyToAccount(devchainKey(devchain.mnemonic, FUNDER_INDEX)), transport: http(devchain.url) });
    for (const b of buyers) {
      const hash = await funder.writeContract({
        address: devchain.usdc,
        abi: TestUSDC.abi,
        functionName: "mint",
        args: [b.address, BigInt(live.amount)],
        chain: null,
      });
      await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    }
    const officialRequired = await paymentRequired(official.info.url);
    log(`official: pre-signing ${config.warmup + config.payments} payments…`);
    const officialWarm = await presign(officialRequired, buyers, config.warmup);
    const officialPayments = await presign(officialRequired, buyers, config.payments);
    await closedLoop(official.info.url, officialWarm, config.buyers);
    log(`official: ${config.payments} paid requests, ${config.buyers} buyers…`);
    const officialCpuBefore = await official.cpuMs();
    const simulated = await closedLoop(official.info.url, officialPayments, config.buyers);
    const officialCpuPerPayment = ((await official.cpuMs()) - officialCpuBefore) / simulated.total;

    await official.stop();
    await ours.stop();
    children.length = 0;

    const distributed: [DistributedShape, DistributedFigures][] = [];
    if (config.distributed) for (const shape of DISTRIBUTED_SHAPES) distributed.push([shape, await distributedRun(shape)]);

    const ratio = rehearsal.perSecond / simulated.perSecond;
    const rateVerdict = rehearsal.perSecond >= TARGET_EMBEDDED_PER_SECOND ? "PASS" : "BELOW TARGET";
    const p99Verdict = rehearsal.p99 <= TARGET_EMBEDDED_P99_MS ? "PASS" : "ABOVE TARGET";
    process.stdout.write(
      [
        "",
        `paid-path benchmark (${cpus().length} cores, node ${process.version}; ${cpus()[0]?.model.trim() ?? "unknown cpu"})`,
        `  1-min load average ${loadAtStart.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end; ${config.buyers} closed-loop buyers, each payment a fresh pre-signed authorization`,
        "",
        `paid rehearsal  embedded  ${f1(rehearsal.perSecond)} payments/s (target ≥${TARGET_EMBEDDED_PER_SECOND}) ${rateVerdict} | p50 ${f1(rehearsal.p50)} ms, p99 ${f1(rehearsal.p99)} ms (target ≤${TARGET_EMBEDDED_P99_MS}) ${p99Verdict}`,
        `                (${statuses(rehearsal)}; server CPU ${cpuPerPayment.toFixed(2)} ms per payment)`,
        `                round trips per payment: ${trips}`,
        `against official @x402/express, in-process facilitator, settle simulated  ${f1(simulated.perSecond)} payments/s (p50 ${f1(simulated.p50)} ms, p99 ${f1(simulated.p99)} ms) | ours ${ratio.toFixed(2)}× (target ≥${TARGET_AGAINST_OFFICIAL}×) ${ratio >= TARGET_AGAINST_OFFICIAL ? "PASS" : "BELOW TARGET"}`,
        `                (${statuses(simulated)}; server CPU ${officialCpuPerPayment.toFixed(2)} ms per payment; it verifies on the devchain and keeps no record)`,
        ...distributed.flatMap(([shape, r], index) => [
          `paid rehearsal  distributed, ${shape.label}  ${f1(r.perSecond)} payments/s (target ≥${TARGET_DISTRIBUTED_PER_SECOND}) ${r.perSecond >= TARGET_DISTRIBUTED_PER_SECOND ? "PASS" : "BELOW TARGET"} | p50 ${f1(r.p50)} ms, p99 ${f1(r.p99)} ms`,
          `                (${statuses(r)}${index > 0 ? `; ${(r.perSecond / distributed[0]![1].perSecond).toFixed(2)}× one of each` : ""})`,
          `                machine-wide ${r.cpu}`,
          ...(r.trips ? [`                round trips per payment: ${r.trips}`] : []),
        ]),
        "",
      ].join("\n"),
    );
  } finally {
    log("stopping servers…");
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
  }
}

runBenchmark(main);
