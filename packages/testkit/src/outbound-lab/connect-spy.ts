import net from "node:net";

/** One net.Socket#connect call: what was asked for, and every address the kernel was asked to reach. */
export interface ConnectRecord {
  host?: string;
  port?: number;
  path?: string;
  attempts: string[];
}

function requested(args: unknown[]): Pick<ConnectRecord, "host" | "port" | "path"> {
  // net.connect() hands the socket its normalised arguments as an array; tls.connect passes options.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (typeof first === "string") return { path: first };
  if (typeof first === "number") return { port: first, host: typeof args[1] === "string" ? args[1] : undefined };
  const o = (first ?? {}) as { host?: string; port?: number | string; path?: string };
  return { host: o.host, port: o.port === undefined ? undefined : Number(o.port), path: o.path };
}

/**
 * Target G20: wraps net.Socket.prototype.connect (which tls.connect and undici also go through)
 * and listens for `connectionAttempt`, which Node emits with the IP of every attempt, after lookup.
 */
export function installConnectSpy() {
  const records: ConnectRecord[] = [];
  const original = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const record: ConnectRecord = { ...requested(args), attempts: [] };
    records.push(record);
    this.on("connectionAttempt", (ip: string) => record.attempts.push(ip));
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  return {
    records,
    /** Everything recorded after `mark` (a previous records.length). */
    since: (mark: number) => records.slice(mark),
    attempts: (from = 0) => records.slice(from).flatMap((r) => r.attempts),
    restore: () => {
      net.Socket.prototype.connect = original;
    },
  };
}

/** Independent of the classifier under test: 127/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackIp(ip: string): boolean {
  return /^127\.\d+\.\d+\.\d+$/.test(ip) || /^::ffff:(127\.\d+\.\d+\.\d+|7f[0-9a-f]{2}:[0-9a-f]{1,4})$/i.test(ip) || ip === "::1";
}

/** The end of a suite that used the lab: everything closed, and (G19, G20) no canary reached and no connection left loopback. */
export async function closeAndCheckLoopbackOnly(
  spy: ReturnType<typeof installConnectSpy>,
  lab: { close(): Promise<void>; canaryAccepts(): number },
  guarded: { close(): Promise<void> },
): Promise<void> {
  await guarded.close();
  await lab.close();
  spy.restore();
  expect(spy.attempts().filter((ip) => !isLoopbackIp(ip))).toEqual([]);
  expect(lab.canaryAccepts()).toBe(0);
}
