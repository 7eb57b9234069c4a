/**
 * Where the distributed system's CPU goes: every process on the machine, read from /proc, grouped
 * by what it is (each service and gateway process by its entry file, PostgreSQL, the Kafka broker,
 * Redis, the load generator). Two snapshots around a timed window give each group's CPU per
 * payment. Linux only; elsewhere a snapshot is empty and the breakdown says so.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on every Linux Node supports). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds used so far, per group of processes. */
export type CpuSnapshot = Map<string, number>;

/** What a process is, from its command line; undefined leaves it out. */
function groupOf(pid: number, cmdline: string[]): string | undefined {
  if (pid === process.pid) return "load generator";
  const line = cmdline.join(" ");
  const entry = /(?:services|deploy)\/([a-z-]+)\/src\/main\.ts/.exec(line);
  if (entry) return entry[1];
  if (/^postgres|postgres: /.test(line) || cmdline[0]?.endsWith("/postgres")) return "postgresql";
  if (/kafka\.Kafka|kafka-server/.test(line)) return "kafka";
  if (/redis-server/.test(line)) return "redis";
  return undefined;
}

function readCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start at ") "; utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined; // exited meanwhile
  }
}

/** CPU used so far by every process on the machine this module can name, summed per group. */
export function cpuSnapshot(): CpuSnapshot {
  const snapshot: CpuSnapshot = new Map();
  let pids: number[];
  try {
    pids = readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return snapshot;
  }
  for (const pid of pids) {
    let cmdline: string[];
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    } catch {
      continue;
    }
    const group = groupOf(pid, cmdline);
    if (!group) continue;
    const ms = readCpuMs(pid);
    if (ms !== undefined) snapshot.set(group, (snapshot.get(group) ?? 0) + ms);
  }
  return snapshot;
}

/** Each group's CPU per payment between two snapshots, largest first, as "name 1.23 ms" items. */
export function cpuPerPayment(before: CpuSnapshot, after: CpuSnapshot, payments: number): string {
  if (after.size === 0 || payments === 0) return "no per-process figures (not Linux)";
  const rows = [...after]
    .map(([group, ms]) => [group, (ms - (before.get(group) ?? 0)) / payments] as const)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  return `${total.toFixed(2)} ms CPU per payment: ${rows.map(([group, ms]) => `${group} ${ms.toFixed(2)}`).join(", ")}`;
}
