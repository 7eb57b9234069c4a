/**
 * Opt-in (BENCH_RPC_STATS=1) accounting of the JSON-RPC calls a server process
 * makes to the chain: viem's http transport goes through global fetch, so
 * wrapping fetch sees every call, its method and how long it took.
 */
import { performance } from "node:perf_hooks";

export interface RpcStats {
  /** method -> [calls, total ms] */
  methods: Record<string, [number, number]>;
  /** Wall time during which at least one call was in flight (ms). */
  busyMs: number;
}

let stats: RpcStats = { methods: {}, busyMs: 0 };
let inFlight = 0;
let busySince = 0;

export function rpcStats(reset: boolean): RpcStats {
  const out = stats;
  if (reset) stats = { methods: {}, busyMs: 0 };
  return out;
}

export function instrumentRpc(): void {
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? init.body : undefined;
    if (!body || !body.includes('"jsonrpc"')) return original(input, init);
    let methods: string[] = [];
    try {
      const parsed = JSON.parse(body) as { method: string } | { method: string }[];
      methods = (Array.isArray(parsed) ? parsed : [parsed]).map((m) => m.method);
    } catch {
      methods = ["(unparsed)"];
    }
    const t = performance.now();
    if (inFlight++ === 0) busySince = t;
    try {
      return await original(input, init);
    } finally {
      const now = performance.now();
      if (--inFlight === 0) stats.busyMs += now - busySince;
      const name = methods.length === 1 ? methods[0]! : `batch[${methods.join(",")}]`;
      const entry = (stats.methods[name] ??= [0, 0]);
      entry[0] += 1;
      entry[1] += now - t;
    }
  };
}
