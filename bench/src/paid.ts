/**
 * The paid path (issue 16): paid rehearsals per second on our /c/{id}/test
 * face at BENCH_PAID_BUYERS closed-loop buyers, embedded mode (every service
 * and PGlite in one process).
 */
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { decodeHeader, type PaymentRequired } from "@c402/x402";
import { startChild } from "./lib/child";
import { call, signIn } from "./lib/http";
import { closedLoop, presign } from "./lib/paid-load";
import { f1, log, num, runBenchmark } from "./lib/report";
import { roundTripsPer, scrapeRoundTrips } from "./lib/round-trips";
import type { OursInfo } from "./servers/ours";

const config = {
  buyers: num("BENCH_PAID_BUYERS", 16, 16),
  payments: num("BENCH_PAID_PAYMENTS", 3_000, 600),
  warmup: num("BENCH_PAID_WARMUP", 400, 100),
};

function profileArgs(name: string): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${join(dir, name)}`] : [];
}

async function main() {
  const loadAtStart = loadavg()[0]!;
  log("starting c402 (embedded system + devchain) in a child process…");
  const ours = await startChild<OursInfo>(
    join(__dirname, "servers/ours.ts"),
    { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn" },
    { execArgv: profileArgs("ours") },
  );
  try {
    const { baseUrl } = ours.info;
    const seller = await signIn(baseUrl);
    const created = await call(`${baseUrl}/v1/checkouts`, {
      method: "POST",
      key: seller.key,
      body: { title: "Live weather", price_usd: "0.10", payload: { temp_c: 22 }, test_mode: false, reusable: true },
    });
    if (created.status !== 201) throw new Error(`create checkout: ${created.status} ${created.text}`);
    const url = `${baseUrl}/c/${created.body.id as string}/test`;
    const quoted = await call(url);
    const required = decodeHeader(quoted.headers.get("payment-required") ?? "") as unknown as PaymentRequired;
    const buyers = Array.from({ length: config.buyers }, () => privateKeyToAccount(generatePrivateKey()));
    log(`pre-signing ${config.warmup + config.payments} payments…`);
    const warm = await presign(required, buyers, config.warmup);
    const payments = await presign(required, buyers, config.payments);
    await closedLoop(url, warm, config.buyers);
    log(`paid rehearsal: ${config.payments} payments, ${config.buyers} buyers…`);
    const before = await scrapeRoundTrips(ours.info.metricsUrl);
    const profileDir = process.env.BENCH_PROFILE_WINDOW_DIR;
    const stopProfile = profileDir ? await ours.profile(join(profileDir, "ours-paid.cpuprofile")) : undefined;
    const cpuBefore = await ours.cpuMs();
    const r = await closedLoop(url, payments, config.buyers);
    const cpuPerPayment = ((await ours.cpuMs()) - cpuBefore) / r.total;
    await stopProfile?.();
    const trips = roundTripsPer(before, await scrapeRoundTrips(ours.info.metricsUrl), r.total);
    process.stdout.write(
      [
        "",
        `paid path (${cpus().length} cores, node ${process.version}); 1-min load ${loadAtStart.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end`,
        `paid rehearsal embedded  ${f1(r.perSecond)} payments/s (p50 ${f1(r.p50)} ms, p99 ${f1(r.p99)} ms) ${r.ok}/${r.total} ${JSON.stringify(r.statuses)} ${r.failures.join(" | ")}`,
        `               server CPU per payment ${cpuPerPayment.toFixed(2)} ms; round trips per payment: ${trips}`,
        "",
      ].join("\n"),
    );
  } finally {
    await ours.stop();
  }
}

runBenchmark(main);
