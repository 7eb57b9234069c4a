/**
 * Where a V8 CPU profile's time went (`--cpu-prof`), for the per-stage tables
 * of bench/README.md: self time summed by where the code lives (a package of
 * node_modules, one of our packages or services, node's own internals, the
 * garbage collector, idle), and the heaviest functions.
 *
 *   npx tsx bench/src/lib/profile-summary.ts <file.cpuprofile> [top] [payments]
 *
 * With `payments` (how many the profiled window served), it also prints the
 * stages of bench/README.md's per-stage table, in milliseconds per payment.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: `pkg <name>`, `ours <dir>`, `node <module>`, or V8's own bucket. */
export function placeOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "/node_modules/".length).split("/");
    return `pkg ${rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (url.startsWith("node:")) return `node ${url.slice(5).split("/")[0]}`;
  const ours = /\/(services|packages|deploy|bench)\/([^/]+)\//.exec(url);
  if (ours) return `ours ${ours[1]}/${ours[2]}`;
  return url;
}

/** The stages of a paid request that the per-stage table names, by where the code lives; the rest is "other". */
const STAGES: [stage: string, places: RegExp][] = [
  ["SQL: PGlite (WebAssembly and its JavaScript)", /^(wasm:\/\/|pkg @electric-sql\/pglite)/],
  ["SQL: kysely building and compiling, our driver", /^(pkg kysely|ours packages\/db)$/],
  ["service calls: gRPC/protobuf, validation, our adapter", /^(pkg @grpc\/grpc-js|pkg @bufbuild\/|ours packages\/rpc)/],
  [
    "HTTP and Express",
    /^(pkg (router|express|path-to-regexp|parseurl|body-parser|content-type|on-finished|type-is|mime-types|finalhandler|send|qs|raw-body)|node (_http_|net$))/,
  ],
  ["payment verification: decode, EIP-712, keccak, signer recovery", /^(pkg (@noble\/|viem|secp256k1|keccak)|ours packages\/x402)/],
  ["outbox and bus", /^ours packages\/bus$/],
  ["the services' own code", /^ours services\//],
  ["metrics, tracing, request context, ids, contracts", /^(pkg prom-client|ours packages\/(metrics|tracing|request-context|ids|contracts|money))$/],
  ["garbage collector", /^\(garbage collector\)$/],
  ["node internals and native (promises, async hooks, buffers, sockets)", /^(node |\(native\)|\(program\))/],
  ["idle", /^\(idle\)$/],
];

export function stageOf(place: string): string {
  return STAGES.find(([, places]) => places.test(place))?.[0] ?? "other";
}

export function summarize(profile: Profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = (profile.endTime - profile.startTime) / 1000;
  const places = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const place = placeOf(url, functionName);
    places.set(place, (places.get(place) ?? 0) + us / 1000);
    const fn = `${functionName || "(anonymous)"} ${url ? `${url.replace(/^.*\/(node_modules|services|packages)\//, "$1/")}:${lineNumber + 1}` : ""}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us / 1000);
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return { totalMs: total, places: sorted(places), functions: sorted(functions) };
}

if (require.main === module) {
  const [file, top = "40", payments] = process.argv.slice(2);
  if (!file) throw new Error("usage: profile-summary <file.cpuprofile> [top]");
  const s = summarize(JSON.parse(readFileSync(file, "utf8")) as Profile);
  const busy = s.places.filter(([p]) => p !== "(idle)").reduce((n, [, ms]) => n + ms, 0);
  console.log(`profile ${(s.totalMs / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s`);
  for (const [place, ms] of s.places.slice(0, Number(top)))
    console.log(`${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${place}`);
  if (payments) {
    const stages = new Map<string, number>();
    for (const [place, ms] of s.places) stages.set(stageOf(place), (stages.get(stageOf(place)) ?? 0) + ms);
    console.log(`\nstages, ms per payment (${payments} payments; busy ${(busy / Number(payments)).toFixed(2)} ms each):`);
    for (const [stage, ms] of [...stages.entries()].sort((a, b) => b[1] - a[1]))
      console.log(`${(ms / Number(payments)).toFixed(2).padStart(6)}  ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${stage}`);
  }
  console.log("");
  for (const [fn, ms] of s.functions.slice(0, Number(top)))
    console.log(`${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${fn}`);
}
