/**
 * Opt-in (BENCH_RPC_STATS=1) accounting of the JSON-RPC calls a server process
 * makes to the chain: the official server's viem http transport goes through
 * global fetch, so wrapping fetch sees every call; ours publishes each call on
 * the evm-chain transport's diagnostics channel.
 */
import { subscribe } from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import { RPC_CALL_CHANNEL } from "@c402/evm-chain";

export interface RpcStats {
  /** method -> [calls, total ms] */
  methods: Record<string, [number, number]>;
  /** Wall time during which at least one call was in flight (ms). */
  busyMs: number;
}

let methods: RpcStats["methods"] = {};
/** [start, end] of every call since the last reset. */
let spans: [number, number][] = [];

function record(name: string, start: number, end: number): void {
  const entry = (methods[name] ??= [0, 0]);
  entry[0] += 1;
  entry[1] += end - start;
  spans.push([start, end]);
}

export function rpcStats(reset: boolean): RpcStats {
  let busyMs = 0;
  let until = -Infinity;
  for (const [start, end] of [...spans].sort((a, b) => a[0] - b[0])) {
    if (end <= until) continue;
    busyMs += end - Math.max(start, until);
    until = end;
  }
  const out = { methods, busyMs };
  if (reset) {
    methods = {};
    spans = [];
  }
  return out;
}

export function instrumentRpc(): void {
  subscribe(RPC_CALL_CHANNEL, (message) => {
    const { method, ms } = message as { method: string; ms: number };
    const end = performance.now();
    record(method, end - ms, end);
  });
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? init.body : undefined;
    if (!body || !body.includes('"jsonrpc"')) return original(input, init);
    let names: string[] = [];
    try {
      const parsed = JSON.parse(body) as { method: string } | { method: string }[];
      names = (Array.isArray(parsed) ? parsed : [parsed]).map((m) => m.method);
    } catch {
      names = ["(unparsed)"];
    }
    const start = performance.now();
    try {
      return await original(input, init);
    } finally {
      record(names.length === 1 ? names[0]! : `batch[${names.join(",")}]`, start, performance.now());
    }
  };
}
