/**
 * One run, on this machine, of five measurements (see bench/README.md):
 *  1. the unpaid quote (HTTP 402): our GET /c/{id} against the official
 *     @x402/express paymentMiddleware on an equivalent route;
 *  2. package-key calls per second through a relay checkout to a loopback
 *     origin, against the same origin behind a plain express reverse proxy
 *     (http-proxy-middleware), and against the floor of the fixed architecture
 *     (Express, one gRPC hop, the origin; no database);
 *  3. paid rehearsals per second on our /c/{id}/test face (simulated settlement);
 *  4. a paid relay purchase against a paid inline purchase, both rehearsals;
 *  5. live paid payments per second on the devchain: ours (split contract,
 *     our facilitator key) against @x402/express with an in-process official
 *     facilitator, both settling on the same chain.
 * Each server (ours, official, origin, proxy) runs in its own child process;
 * this process only generates load.
 * Targets are reported, never enforced: the exit code is 0 whenever the run completes.
 */
import { devchainKey } from "@c402/devchain";
import { TestUSDC } from "@c402/evm-contracts";
import { Agent, request } from "node:http";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createPublicClient, createWalletClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { profileArgs, startChild, type Child } from "./lib/child";
import { autocannon } from "./lib/untyped";
import type { OfficialInfo } from "./servers/official";
import { ORIGIN_PATH, type OriginInfo } from "./servers/origin";
import type { OursInfo } from "./servers/ours";
import type { FloorInfo } from "./servers/floor";
import type { ProxyInfo } from "./servers/proxy";
import { f0, f1, log, num, percentile, runBenchmark, statusList } from "./lib/report";
import { call, createCheckout, JSON_ACCEPT, paymentRequired, signIn } from "./lib/http";
import { roundTripsPer, scrapeRoundTrips } from "./lib/round-trips";
import { closedLoop, failureReason, PaidTally, presign, type PaidFigures } from "./lib/paid-load";

const config = {
  /** Measured seconds of each quote and package-calls run (after the warm-up). */
  seconds: num("BENCH_SECONDS", 10, 3),
  warmupSeconds: num("BENCH_WARMUP_SECONDS", 2, 1),
  connections: num("BENCH_CONNECTIONS", 10, 10),
  /** Closed-loop workers of the paid runs (same for ours and the official server). */
  workers: num("BENCH_WORKERS", 8, 8),
  rehearsalPayments: num("BENCH_REHEARSAL_PAYMENTS", 400, 80),
  livePayments: num("BENCH_LIVE_PAYMENTS", 200, 40),
  /** Paid purchases in each timed run of the relay-vs-inline comparison. */
  relayPayments: num("BENCH_RELAY_PAYMENTS", 300, 60),
  malformedHeaders: num("BENCH_MALFORMED_HEADERS", 2_000, 300),
};

const TARGET_QUOTE = 1.3;
/** Issue 16: live settlement on the devchain at least twice the official server with its facilitator. */
const TARGET_LIVE = 2.0;
/** Package calls against the plain proxy: throughput at least this share, p99 at most this multiple. */
const TARGET_PACKAGE_RPS = 0.8;
const TARGET_PACKAGE_P99 = 2;
/** A paid relay purchase's p50 may exceed a paid inline purchase's by this much (ms). */
const TARGET_RELAY_P50_MS = 5;
const PRICE_USD = "0.10";
/** A package checkout's price must be at least 1.00; its calls are enough that the run never exhausts the key. */
const PACKAGE_PRICE_USD = "1.00";
const PACKAGE_CALLS = 1_000_000;
/** The highest test_delivery_daily_cap a checkout takes: rehearsal package calls count against it too. */
const TEST_DELIVERY_CAP = 100_000;
const CITY_QUERY = "?city=Paris";
/** What the seller receives of each payment at PRICE_USD (the fee goes to the fee wallet). */
const PROVIDER_ATOMIC = 100_000n;
/** Devchain accounts of the bench (index 0 is our facilitator key, 9 our fee wallet). */
const OFFICIAL_FACILITATOR_INDEX = 11;
const FUNDER_INDEX = 12;

// ---------------------------------------------------------------- HTTP helpers

/** Buys a package on the rehearsal face (one signed payment, simulated settlement): its key and the calls left. */
async function buyPackage(testUrl: string) {
  const required = await paymentRequired(testUrl);
  const [payment] = await presign(required, [privateKeyToAccount(generatePrivateKey())], 1);
  const r = await call(testUrl, { headers: { "PAYMENT-SIGNATURE": payment! } });
  const key = r.body?.package_key;
  if (r.status !== 200 || typeof key !== "string") throw new Error(`buy package: ${r.status} ${r.text.slice(0, 300)}`);
  return { key, remaining: Number(r.body.deliveries_remaining) };
}

// ---------------------------------------------------------------- measurements

interface QuoteFigures {
  rps: number;
  p50: number;
  p99: number;
  count: number;
  unexpected: number;
  errors: number;
}

/** Open connections hammering an unpaid GET: warm-up, then the measured run. Only 402s count. */
async function quoteLoad(url: string): Promise<QuoteFigures> {
  const opts = { url, connections: config.connections, headers: JSON_ACCEPT };
  await autocannon({ ...opts, duration: config.warmupSeconds });
  const r = await autocannon({ ...opts, duration: config.seconds });
  const count = r.statusCodeStats["402"]?.count ?? 0;
  return {
    rps: count / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    count,
    unexpected: r.latency.totalCount - count,
    errors: r.errors + r.timeouts,
  };
}

interface CallFigures {
  rps: number;
  p50: number;
  p99: number;
  /** 200 answers, the only ones that count. */
  count: number;
  seconds: number;
  /** Every other status, so a cap or limit hit shows. */
  others: Record<string, number>;
  errors: number;
}

/** Open connections sending the same authorized GET for `seconds`. Only 200s count. */
async function callLoad(url: string, headers: Record<string, string>, seconds: number): Promise<CallFigures> {
  const r = await autocannon({ url, connections: config.connections, headers, duration: seconds });
  const count = r.statusCodeStats["200"]?.count ?? 0;
  const others: Record<string, number> = {};
  for (const [status, { count: n }] of Object.entries(r.statusCodeStats)) if (status !== "200") others[status] = n;
  return { rps: count / r.duration, p50: r.latency.p50, p99: r.latency.p99, count, seconds: r.duration, others, errors: r.errors + r.timeouts };
}

/**
 * One purchase at a time, alternating between two faces, so that both meet the
 * same machine (its speed drifts within a run): what each adds to a buyer's wait
 * when nothing queues before it.
 */
async function oneAtATime(a: { url: string; payments: string[] }, b: { url: string; payments: string[] }): Promise<[PaidFigures, PaidFigures]> {
  const [ta, tb] = [new PaidTally(), new PaidTally()];
  for (let i = 0; i < Math.max(a.payments.length, b.payments.length); i++) {
    if (i < a.payments.length) await ta.pay(a.url, a.payments[i]!);
    if (i < b.payments.length) await tb.pay(b.url, b.payments[i]!);
  }
  return [ta.figures(), tb.figures()];
}

/**
 * Malformed payment headers of the kinds G21 names (bad base64, truncation, deep nesting, wrong
 * types, huge integers, `__proto__` keys, invalid UTF-8), from a fixed seed so runs compare.
 */
/**
 * G21's latency: each malformed header sent alone on one kept-alive connection
 * with node:http, so the figure is the server's refusal and not the client
 * library's own overhead (global fetch adds milliseconds at the tail).
 */
async function refusalLatency(url: string, headers: string[]): Promise<{ total: number; p50: number; p99: number; statuses: Record<string, number> }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(url);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const once = (header: string) =>
    new Promise<string>((resolve) => {
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          headers: { ...JSON_ACCEPT, "PAYMENT-SIGNATURE": header },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(String(res.statusCode)));
        },
      );
      req.on("error", () => resolve("error"));
      req.end();
    });
  for (const header of headers) {
    const t = performance.now();
    const status = await once(header);
    latencies.push(performance.now() - t);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { total: headers.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), statuses };
}

function malformedHeaders(valid: string, count: number): string[] {
  let seed = 402;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64");
  const kinds = [
    () => Array.from({ length: rand(300) + 1 }, () => String.fromCharCode(33 + rand(94))).join(""),
    () => valid.slice(0, rand(valid.length)),
    () => b64("{".repeat(rand(4000) + 1)),
    () => b64(JSON.stringify({ x402Version: 2, accepted: { __proto__: { amount: "1" } }, payload: { signature: [], authorization: "x" } })),
    () => b64(JSON.stringify({ x402Version: 2, payload: { signature: "0x" + "f".repeat(130), authorization: { value: "9".repeat(90) } } })),
    () => b64(Buffer.from([0xc3, 0x28, 0xa0, 0xa1, rand(256)])),
  ];
  return Array.from({ length: count }, () => kinds[rand(kinds.length)]!());
}

function warmedUp(name: string, r: PaidFigures) {
  if (r.ok < r.total) log(`${name} warm-up: ${r.ok}/${r.total} paid; ${r.failures.join(" | ")}`);
}

// ---------------------------------------------------------------- report

const verdict = (ratio: number, target: number) => (ratio >= target ? "PASS" : "BELOW TARGET");
const signed = (ms: number) => `${ms >= 0 ? "+" : ""}${f1(ms)}`;

async function main() {
  const here = __dirname;
  const children: Child<unknown>[] = [];
  const stopAll = async () => {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
  };
  process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));

  const loadAtStart = loadavg()[0]!;
  try {
    log("starting c402 (embedded system + devchain) in a child process…");
    const ours = await startChild<OursInfo>(
      join(here, "servers/ours.ts"),
      { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn" },
      { execArgv: profileArgs("ours") },
    );
    children.push(ours);
    const { baseUrl, devchain } = ours.info;
    const seller = await signIn(baseUrl);
    const checkout = {
      seller: seller.seller,
      id: await createCheckout(baseUrl, seller.key, { title: "Live weather", price_usd: PRICE_USD, payload: { temp_c: 22 }, test_mode: false, reusable: true }),
    };
    const oursUrl = `${baseUrl}/c/${checkout.id}`;
    const oursRequired = await paymentRequired(oursUrl);
    const oursRequirement = oursRequired.accepts[0]!;
    if (oursRequirement.extra.rehearsal === true) throw new Error("the checkout is not live (its live face rehearses)");

    log("starting the official @x402/express server with an in-process facilitator in a child process…");
    const official = await startChild<OfficialInfo>(
      join(here, "servers/official.ts"),
      {
        BENCH_RPC_URL: devchain.url,
        BENCH_FACILITATOR_KEY: devchainKey(devchain.mnemonic, OFFICIAL_FACILITATOR_INDEX),
        BENCH_PAY_TO: checkout.seller,
        BENCH_AMOUNT: oursRequirement.amount,
        BENCH_ASSET: oursRequirement.asset,
      },
      { execArgv: profileArgs("official") },
    );
    children.push(official);
    const officialRequired = await paymentRequired(official.info.url);
    const officialRequirement = officialRequired.accepts[0]!;
    for (const field of ["scheme", "network", "asset", "amount"] as const) {
      if (String(officialRequirement[field]).toLowerCase() !== String(oursRequirement[field]).toLowerCase()) {
        throw new Error(`the routes are not equivalent: ${field} ${officialRequirement[field]} vs ${oursRequirement[field]}`);
      }
    }
    log(`equivalent offers: exact ${oursRequirement.amount} atomic ${oursRequirement.asset} on ${oursRequirement.network}`);

    log("starting the loopback origin and the plain reverse proxy (http-proxy-middleware) in two child processes…");
    const origin = await startChild<OriginInfo>(join(here, "servers/origin.ts"), {}, { execArgv: profileArgs("origin") });
    children.push(origin);
    const proxy = await startChild<ProxyInfo>(join(here, "servers/proxy.ts"), { BENCH_ORIGIN_URL: origin.info.url }, { execArgv: profileArgs("proxy") });
    children.push(proxy);
    const floor = await startChild<FloorInfo>(join(here, "servers/floor.ts"), { BENCH_ORIGIN_URL: origin.info.url }, { execArgv: profileArgs("floor") });
    children.push(floor);
    const originUrl = `${origin.info.url}${ORIGIN_PATH}`;

    // 1. Unpaid quote.
    log(`quote: ours ${config.warmupSeconds}+${config.seconds} s at ${config.connections} connections…`);
    const quoteOurs = await quoteLoad(oursUrl);
    log(`quote: official ${config.warmupSeconds}+${config.seconds} s at ${config.connections} connections…`);
    const quoteOfficial = await quoteLoad(official.info.url);

    // 2. Package calls: one rehearsal package (bought once), its key spent from every connection,
    // against the same origin behind the plain proxy. Same connections, warm-up and duration.
    const packageId = await createCheckout(baseUrl, seller.key, {
      title: "Weather package",
      price_usd: PACKAGE_PRICE_USD,
      origin_url: originUrl,
      max_deliveries: PACKAGE_CALLS,
      test_delivery_daily_cap: TEST_DELIVERY_CAP,
      reusable: true,
    });
    const bought = await buyPackage(`${baseUrl}/c/${packageId}/test${CITY_QUERY}`);
    const packageUrl = `${baseUrl}/c/${packageId}${CITY_QUERY}`;
    const proxyUrl = `${proxy.info.url}${ORIGIN_PATH}${CITY_QUERY}`;
    const keyHeaders = { ...JSON_ACCEPT, authorization: `Bearer ${bought.key}` };
    // Both sides must answer the origin's body before anything is timed.
    const firstCall = await call(packageUrl, { key: bought.key });
    const viaProxy = await call(proxyUrl, { key: bought.key });
    if (firstCall.body?.fulfillment?.payload?.city !== "Paris" || viaProxy.body?.city !== "Paris") {
      throw new Error(
        `package call or proxy did not reach the origin: ${firstCall.status} ${firstCall.text.slice(0, 300)} | ${viaProxy.status} ${viaProxy.text.slice(0, 300)}`,
      );
    }
    log(`package calls: ours ${config.warmupSeconds}+(up to ${config.seconds}) s at ${config.connections} connections…`);
    const packageWarm = await callLoad(packageUrl, keyHeaders, config.warmupSeconds);
    // Every rehearsal call counts against the checkout's daily cap (the purchase and the check call too):
    // cut the timed run short if, at the warm-up's rate with a 1.5× margin, it could reach the cap.
    const capLeft = TEST_DELIVERY_CAP - 3 - packageWarm.count;
    const packageSeconds = Math.min(config.seconds, Math.max(1, Math.floor(capLeft / (1.5 * packageWarm.rps))));
    const packageOurs = await callLoad(packageUrl, keyHeaders, packageSeconds);
    const lastCall = await call(packageUrl, { key: bought.key });
    log(`package calls: plain proxy ${config.warmupSeconds}+${packageSeconds} s at ${config.connections} connections…`);
    await callLoad(proxyUrl, keyHeaders, config.warmupSeconds);
    const packageProxy = await callLoad(proxyUrl, keyHeaders, packageSeconds);
    const floorUrl = `${floor.info.url}${ORIGIN_PATH}${CITY_QUERY}`;
    log(`package calls: architecture floor ${config.warmupSeconds}+${packageSeconds} s at ${config.connections} connections…`);
    await callLoad(floorUrl, keyHeaders, config.warmupSeconds);
    const packageFloor = await callLoad(floorUrl, keyHeaders, packageSeconds);

    // 3. Paid rehearsals (simulated settlement: the buyers need no funds).
    const rehearsalRequired = await paymentRequired(`${oursUrl}/test`);

    // G21: how long a malformed payment header takes to refuse, one request at a time.
    const [validHeader] = await presign(rehearsalRequired, [privateKeyToAccount(generatePrivateKey())], 1);
    const malformed = malformedHeaders(validHeader!, config.malformedHeaders);
    await refusalLatency(`${oursUrl}/test`, malformed.slice(0, 50));
    log(`malformed headers: ${malformed.length} requests, one at a time…`);
    const refusals = await refusalLatency(`${oursUrl}/test`, malformed);
    const rehearsalBuyers = Array.from({ length: config.workers }, () => privateKeyToAccount(generatePrivateKey()));
    log(`rehearsal: pre-signing ${config.rehearsalPayments + config.workers} payments…`);
    const rehearsalWarm = await presign(rehearsalRequired, rehearsalBuyers, config.workers);
    const rehearsalPayments = await presign(rehearsalRequired, rehearsalBuyers, config.rehearsalPayments);
    warmedUp("rehearsal", await closedLoop(`${oursUrl}/test`, rehearsalWarm, config.workers));
    log(`rehearsal: ${config.rehearsalPayments} payments, ${config.workers} workers…`);
    const countsBefore = await scrapeRoundTrips(ours.info.metricsUrl);
    const rehearsal = await closedLoop(`${oursUrl}/test`, rehearsalPayments, config.workers);
    const rehearsalRoundTrips = roundTripsPer(countsBefore, await scrapeRoundTrips(ours.info.metricsUrl), rehearsal.total);

    // 4. A paid relay purchase (the origin called, then the simulated settlement) against a paid
    // inline one, on the rehearsal faces of two reusable checkouts at the same price.
    const inlineId = await createCheckout(baseUrl, seller.key, {
      title: "Inline weather",
      price_usd: PRICE_USD,
      payload: { city: "Paris", temp_c: 21 },
      reusable: true,
    });
    const relayId = await createCheckout(baseUrl, seller.key, {
      title: "Relay weather",
      price_usd: PRICE_USD,
      origin_url: originUrl,
      test_delivery_daily_cap: TEST_DELIVERY_CAP,
      reusable: true,
    });
    const inlineUrl = `${baseUrl}/c/${inlineId}/test${CITY_QUERY}`;
    const relayUrl = `${baseUrl}/c/${relayId}/test${CITY_QUERY}`;
    log(`relay vs inline: pre-signing ${2 * (2 * config.relayPayments + config.workers)} payments…`);
    const purchaseBuyers = Array.from({ length: config.workers }, () => privateKeyToAccount(generatePrivateKey()));
    const inlineRequired = await paymentRequired(inlineUrl);
    const relayRequired = await paymentRequired(relayUrl);
    const inlineWarm = await presign(inlineRequired, purchaseBuyers, config.workers);
    const inlinePayments = await presign(inlineRequired, purchaseBuyers, config.relayPayments);
    const relayWarm = await presign(relayRequired, purchaseBuyers, config.workers);
    const relayPayments = await presign(relayRequired, purchaseBuyers, config.relayPayments);
    const inlineAlone = await presign(inlineRequired, purchaseBuyers, config.relayPayments);
    const relayAlone = await presign(relayRequired, purchaseBuyers, config.relayPayments);
    warmedUp("inline purchase", await closedLoop(inlineUrl, inlineWarm, config.workers));
    warmedUp("relay purchase", await closedLoop(relayUrl, relayWarm, config.workers));
    log(`relay vs inline: ${config.relayPayments} payments each, ${config.workers} workers…`);
    const inlinePurchase = await closedLoop(inlineUrl, inlinePayments, config.workers);
    const relayPurchase = await closedLoop(relayUrl, relayPayments, config.workers);
    log(`relay vs inline: ${config.relayPayments} payments each, one at a time, alternating…`);
    const [inlineUnloaded, relayUnloaded] = await oneAtATime({ url: inlineUrl, payments: inlineAlone }, { url: relayUrl, payments: relayAlone });

    // 5. Live payments on the devchain: funded buyers, pre-signed authorizations, equal concurrency.
    const pub = createPublicClient({ transport: http(devchain.url) });
    const funder = createWalletClient({ account: privateKeyToAccount(devchainKey(devchain.mnemonic, FUNDER_INDEX)), transport: http(devchain.url) });
    const buyers = Array.from({ length: config.workers }, () => privateKeyToAccount(generatePrivateKey()));
    const perBuyer = BigInt(oursRequirement.amount) * BigInt(Math.ceil((2 * (config.livePayments + config.workers)) / buyers.length) + 1);
    log(`live: minting ${perBuyer} atomic test USDC to each of ${buyers.length} buyers…`);
    for (const b of buyers) {
      const hash = await funder.writeContract({ address: devchain.usdc, abi: TestUSDC.abi, functionName: "mint", args: [b.address, perBuyer], chain: null });
      await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    }
    const balance = (a: Hex) => pub.readContract({ address: devchain.usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [a] });

    log(`live: pre-signing ${2 * (config.livePayments + config.workers)} payments…`);
    const oursWarm = await presign(oursRequired, buyers, config.workers);
    const oursLivePayments = await presign(oursRequired, buyers, config.livePayments);
    const officialWarm = await presign(officialRequired, buyers, config.workers);
    const officialLivePayments = await presign(officialRequired, buyers, config.livePayments);

    // The first settle of ours also deploys the checkout's split: the warm-up absorbs it.
    warmedUp("live ours", await closedLoop(oursUrl, oursWarm, config.workers));
    const sellerBefore = await balance(checkout.seller as Hex);
    log(`live: ours ${config.livePayments} payments, ${config.workers} workers…`);
    await ours.rpcStats(true);
    const profileDir = process.env.BENCH_PROFILE_WINDOW_DIR;
    const stopProfile = profileDir ? await ours.profile(join(profileDir, "ours-live.cpuprofile")) : undefined;
    const oursCpuBefore = await ours.cpuMs();
    const liveOurs = await closedLoop(oursUrl, oursLivePayments, config.workers);
    const oursCpuPerPayment = ((await ours.cpuMs()) - oursCpuBefore) / liveOurs.total;
    await stopProfile?.();
    const rpcOurs = await ours.rpcStats(true);
    const sellerAfterOurs = await balance(checkout.seller as Hex);

    warmedUp("live official", await closedLoop(official.info.url, officialWarm, config.workers));
    const payToBefore = await balance(checkout.seller as Hex);
    log(`live: official ${config.livePayments} payments, ${config.workers} workers…`);
    await official.rpcStats(true);
    const officialCpuBefore = await official.cpuMs();
    const liveOfficial = await closedLoop(official.info.url, officialLivePayments, config.workers);
    const officialCpuPerPayment = ((await official.cpuMs()) - officialCpuBefore) / liveOfficial.total;
    const rpcOfficial = await official.rpcStats(true);
    const payToAfter = await balance(checkout.seller as Hex);

    // ------------------------------------------------------------ print
    const quoteRatio = quoteOurs.rps / quoteOfficial.rps;
    const liveRatio = liveOurs.perSecond / liveOfficial.perSecond;
    const packageRatio = packageOurs.rps / packageProxy.rps;
    const packageP99Ratio = packageOurs.p99 / packageProxy.p99;
    const floorRatio = packageFloor.rps / packageProxy.rps;
    const floorP99Ratio = packageFloor.p99 / packageProxy.p99;
    const relayExtra = relayUnloaded.p50 - inlineUnloaded.p50;
    const relayExtraLoaded = relayPurchase.p50 - inlinePurchase.p50;
    // What the service says the key spent, against what this process counted (calls still in flight when
    // autocannon stops are answered after it stopped counting: at most one per connection per run).
    const remainingAfter = lastCall.status === 200 ? Number(lastCall.body?.calls_remaining) : NaN;
    const keyLine = Number.isFinite(remainingAfter)
      ? `${f0(bought.remaining - remainingAfter)} calls spent per the service, ${f0(2 + packageWarm.count + packageOurs.count)} 200s counted here; ${f0(remainingAfter)} of ${f0(PACKAGE_CALLS)} left`
      : `the check call after the run answered ${lastCall.status}: ${failureReason(lastCall.headers, lastCall.text)}`;
    const capNote =
      packageSeconds < config.seconds ? `; cut from ${config.seconds} s so the rehearsal calls stay under the daily cap of ${f0(TEST_DELIVERY_CAP)}` : "";
    const price = BigInt(oursRequirement.amount);
    const lines = [
      "",
      `benchmark (${cpus().length} cores, node ${process.version}; ${cpus()[0]?.model.trim() ?? "unknown cpu"})`,
      `  offer: exact ${price} atomic USDC on ${oursRequirement.network} (price $${PRICE_USD} + fee); each server in its own process, load from a third`,
      `  1-min load average ${loadAtStart.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end (other work on the machine skews every figure)`,
      "",
      `quote 402      ours  ${f0(quoteOurs.rps)} req/s  p99 ${quoteOurs.p99} ms | official @x402/express  ${f0(quoteOfficial.rps)} req/s  p99 ${quoteOfficial.p99} ms | ratio ${quoteRatio.toFixed(2)}× (target ≥${TARGET_QUOTE}×) ${verdict(quoteRatio, TARGET_QUOTE)}`,
      `               (${config.connections} connections, ${config.seconds} s after ${config.warmupSeconds} s warm-up; 402s ours ${f0(quoteOurs.count)} / official ${f0(quoteOfficial.count)}; p50 ${quoteOurs.p50} / ${quoteOfficial.p50} ms; non-402 ${quoteOurs.unexpected} / ${quoteOfficial.unexpected}; errors ${quoteOurs.errors} / ${quoteOfficial.errors})`,
      `package calls  ours  ${f0(packageOurs.rps)} calls/s  p50 ${packageOurs.p50} ms  p99 ${packageOurs.p99} ms | plain proxy (http-proxy-middleware)  ${f0(packageProxy.rps)} req/s  p50 ${packageProxy.p50} ms  p99 ${packageProxy.p99} ms | throughput ${packageRatio.toFixed(2)}× (target ≥${TARGET_PACKAGE_RPS}×) ${verdict(packageRatio, TARGET_PACKAGE_RPS)} | p99 ${packageP99Ratio.toFixed(2)}× (target ≤${TARGET_PACKAGE_P99}×) ${packageP99Ratio <= TARGET_PACKAGE_P99 ? "PASS" : "ABOVE TARGET"}`,
      `               (${config.connections} connections, ${packageSeconds} s after ${config.warmupSeconds} s warm-up${capNote}; 200s ours ${f0(packageOurs.count)} / proxy ${f0(packageProxy.count)}; non-200 ours ${statusList(packageOurs.others) || "none"} / proxy ${statusList(packageProxy.others) || "none"}; errors ${packageOurs.errors} / ${packageProxy.errors})`,
      `               key: ${keyLine}`,
      `               architecture floor (Express, one gRPC hop, undici to the origin; no auth, no database)  ${f0(packageFloor.rps)} req/s  p50 ${packageFloor.p50} ms  p99 ${packageFloor.p99} ms | ${floorRatio.toFixed(2)}× the proxy's throughput, p99 ${floorP99Ratio.toFixed(2)}×: the most a package call could reach here (${f0(packageFloor.count)} 200s; non-200 ${statusList(packageFloor.others) || "none"}; errors ${packageFloor.errors})`,
      `malformed hdr  ours  p50 ${f1(refusals.p50)} ms, p99 ${f1(refusals.p99)} ms per refusal (G21 target p99 < 5 ms) ${refusals.p99 < 5 ? "PASS" : "ABOVE TARGET"}`,
      `               (${refusals.total} headers, one at a time; statuses ${statusList(refusals.statuses)}; 5xx ${Object.entries(refusals.statuses)
        .filter(([s]) => s.startsWith("5"))
        .reduce((n, [, c]) => n + c, 0)})`,
      `paid rehearsal ours  ${f1(rehearsal.perSecond)} payments/s (p50 ${f1(rehearsal.p50)} ms, p99 ${f1(rehearsal.p99)} ms)`,
      `               (${rehearsal.ok}/${rehearsal.total} paid in ${rehearsal.seconds.toFixed(2)} s, ${config.workers} workers; statuses ${statusList(rehearsal.statuses)})`,
      `               round trips per payment: ${rehearsalRoundTrips}`,
      `relay purchase ours  one at a time: p50 ${f1(relayUnloaded.p50)} ms, p99 ${f1(relayUnloaded.p99)} ms | inline purchase p50 ${f1(inlineUnloaded.p50)} ms, p99 ${f1(inlineUnloaded.p99)} ms | p50 ${signed(relayExtra)} ms (target ≤${TARGET_RELAY_P50_MS} ms) ${relayExtra <= TARGET_RELAY_P50_MS ? "PASS" : "ABOVE TARGET"}`,
      `               (rehearsal faces, ${relayUnloaded.total} of each alternating; relay [${statusList(relayUnloaded.statuses)}], inline [${statusList(inlineUnloaded.statuses)}])`,
      `               at ${config.workers} workers: relay p50 ${f1(relayPurchase.p50)} ms, p99 ${f1(relayPurchase.p99)} ms | inline p50 ${f1(inlinePurchase.p50)} ms, p99 ${f1(inlinePurchase.p99)} ms | p50 ${signed(relayExtraLoaded)} ms (reported: a queue multiplies the CPU each takes)`,
      `               (${config.workers} workers; relay ${relayPurchase.ok}/${relayPurchase.total} paid in ${relayPurchase.seconds.toFixed(2)} s [${statusList(relayPurchase.statuses)}], inline ${inlinePurchase.ok}/${inlinePurchase.total} in ${inlinePurchase.seconds.toFixed(2)} s [${statusList(inlinePurchase.statuses)}]; ${f1(relayPurchase.perSecond)} / ${f1(inlinePurchase.perSecond)} payments/s)`,
      `paid live      ours  ${f1(liveOurs.perSecond)} payments/s (p99 ${f0(liveOurs.p99)} ms) | official (in-process facilitator) ${f1(liveOfficial.perSecond)} payments/s (p99 ${f0(liveOfficial.p99)} ms) | ratio ${liveRatio.toFixed(2)}× (target ≥${TARGET_LIVE}×) ${verdict(liveRatio, TARGET_LIVE)}`,
      `               (${config.workers} workers; ours ${liveOurs.ok}/${liveOurs.total} in ${liveOurs.seconds.toFixed(2)} s [${statusList(liveOurs.statuses)}], official ${liveOfficial.ok}/${liveOfficial.total} in ${liveOfficial.seconds.toFixed(2)} s [${statusList(liveOfficial.statuses)}])`,
      `               server CPU per payment: ours ${oursCpuPerPayment.toFixed(2)} ms, official ${officialCpuPerPayment.toFixed(2)} ms (each server's process; the devchain is a process of its own)`,
      `               on-chain: seller +${sellerAfterOurs - sellerBefore} from ours (expected ${BigInt(liveOurs.ok) * PROVIDER_ATOMIC}: the split sends the fee apart), +${payToAfter - payToBefore} from official (expected ${BigInt(liveOfficial.ok) * price})`,
    ];
    for (const [name, r] of [
      ["rehearsal", rehearsal],
      ["relay purchase", relayPurchase],
      ["inline purchase", inlinePurchase],
      ["relay purchase, one at a time", relayUnloaded],
      ["inline purchase, one at a time", inlineUnloaded],
      ["live ours", liveOurs],
      ["live official", liveOfficial],
    ] as const) {
      if (r.failures.length > 0) lines.push(`               ${name} failures: ${r.failures.join(" | ")}`);
    }
    if (process.env.BENCH_RPC_STATS === "1") {
      lines.push("", "chain JSON-RPC calls per paid request during the timed live runs (calls/payment, mean ms per call):");
      for (const [name, stats, paid] of [
        ["ours", rpcOurs, liveOurs.total],
        ["official", rpcOfficial, liveOfficial.total],
      ] as const) {
        const methods = Object.entries(stats.methods).sort((a, b) => b[1][1] - a[1][1]);
        const calls = methods.reduce((n, [, [c]]) => n + c, 0);
        lines.push(
          `  ${name.padEnd(8)} ${(calls / paid).toFixed(1)} calls/payment, RPC in flight ${(stats.busyMs / 1000).toFixed(2)} s: ` +
            methods.map(([m, [c, ms]]) => `${m} ${(c / paid).toFixed(2)}×${(ms / c).toFixed(1)}ms`).join(", "),
        );
      }
    }
    lines.push("");
    process.stdout.write(lines.join("\n"));
  } finally {
    log("stopping servers…");
    await stopAll();
  }
}

runBenchmark(main);
