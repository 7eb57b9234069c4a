import { decodeHeader, encodeHeader, signExactEvmPayment, type PaymentRequired, type PaymentRequirements } from "@c402/x402";
import { performance } from "node:perf_hooks";
import type { PrivateKeyAccount } from "viem/accounts";
import { JSON_ACCEPT } from "./http";
import { percentile } from "./report";

/** Paid load: pre-signed payments sent by closed-loop workers, and what they answered (bench.ts and paid.ts). */

export interface PaidFigures {
  perSecond: number;
  ok: number;
  total: number;
  seconds: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  /** Why the first few non-200 answers failed (the 402's error or body). */
  failures: string[];
}

export function failureReason(headers: Headers, text: string): string {
  const settled = headers.get("payment-response");
  if (settled) {
    try {
      const r = decodeHeader(settled) as { errorReason?: unknown; errorMessage?: unknown };
      if (r.errorReason) return `${String(r.errorReason)}${r.errorMessage ? `: ${String(r.errorMessage).slice(0, 200)}` : ""}`;
    } catch {
      // fall back to PAYMENT-REQUIRED or the body
    }
  }
  const required = headers.get("payment-required");
  if (required) {
    try {
      const error = (decodeHeader(required) as { error?: unknown }).error;
      if (error) return String(error);
    } catch {
      // fall back to the body
    }
  }
  try {
    const body = JSON.parse(text) as { reason?: unknown; detail?: unknown; error?: unknown };
    return String(body.reason ?? body.detail ?? body.error ?? text).slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

/** Paid requests sent, and what they answered. */
export class PaidTally {
  private readonly latencies: number[] = [];
  private readonly statuses: Record<string, number> = {};
  private readonly failures = new Set<string>();
  private readonly start = performance.now();
  private seconds = 0;

  /** Sends one pre-signed payment and counts its answer. */
  async pay(url: string, payment: string): Promise<void> {
    const t = performance.now();
    let status = "error";
    try {
      const res = await fetch(url, { headers: { ...JSON_ACCEPT, "PAYMENT-SIGNATURE": payment } });
      const text = await res.text();
      status = String(res.status);
      if (res.status !== 200 && this.failures.size < 3) this.failures.add(`${status} ${failureReason(res.headers, text)}`);
    } catch (err) {
      if (this.failures.size < 3) this.failures.add(`error ${err instanceof Error ? err.message : String(err)}`);
    }
    this.latencies.push(performance.now() - t);
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
    this.seconds += (performance.now() - t) / 1000;
  }

  /** The figures; `elapsed` when the requests overlapped (the wall time of the run), else the sum of their times. */
  figures(elapsed?: number): PaidFigures {
    const seconds = elapsed ?? this.seconds;
    const latencies = [...this.latencies].sort((a, b) => a - b);
    const ok = this.statuses["200"] ?? 0;
    return {
      perSecond: ok / seconds,
      ok,
      total: latencies.length,
      seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      statuses: { ...this.statuses },
      failures: [...this.failures],
    };
  }

  elapsedSeconds(): number {
    return (performance.now() - this.start) / 1000;
  }
}

/** `workers` clients, each sending its next pre-signed payment as soon as the previous one answered. */
export async function closedLoop(url: string | string[], payments: string[], workers: number): Promise<PaidFigures> {
  // Several URLs (one face behind each gateway replica): the workers are spread over them.
  const urls = typeof url === "string" ? [url] : url;
  let next = 0;
  const tally = new PaidTally();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const target = urls[worker % urls.length]!;
      for (let i = next++; i < payments.length; i = next++) await tally.pay(target, payments[i]!);
    }),
  );
  return tally.figures(tally.elapsedSeconds());
}

/** Fresh EIP-3009 authorizations for one requirement, round-robin over the buyers (signing stays out of the timed part). */
export async function presign(required: PaymentRequired, buyers: PrivateKeyAccount[], count: number): Promise<string[]> {
  const requirement = required.accepts[0] as PaymentRequirements;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(encodeHeader(await signExactEvmPayment(buyers[i % buyers.length]!, requirement, { resourceUrl: required.resource.url })));
  }
  return out;
}
