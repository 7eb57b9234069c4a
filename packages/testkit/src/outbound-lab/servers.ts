import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** An address a resolver answers (the shape @c402/outbound-http's resolve option takes). */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export const TLS_CERT = readFileSync(join(__dirname, "fixtures/test-only-origin.cert.pem"));
const TLS_KEY = readFileSync(join(__dirname, "fixtures/test-only-origin.key.pem"));

export interface Seen {
  host: string;
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Lets a test hold the second SSE event until the client has read the first. */
export interface OriginControl {
  releaseSse: () => void;
}

function origin(seen: Seen[], control: OriginControl): http.RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      const url = new URL(req.url ?? "/", "http://x");
      seen.push({ host: req.headers.host ?? "", method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
      if (chain) {
        const n = Number(chain[1]);
        if (n === 0) res.end("end of chain");
        else res.writeHead(302, { location: `/chain/${n - 1}` }).end();
        return;
      }
      switch (url.pathname) {
        case "/redirect": {
          const to = url.searchParams.get("to");
          res.writeHead(Number(url.searchParams.get("status") ?? 302), to === null ? {} : { location: to }).end("moved");
          return;
        }
        case "/echo":
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
          return;
        case "/json":
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ hello: "world", n: 42 }));
          return;
        case "/close":
          res.writeHead(200, { connection: "close" }).end("closing");
          return;
        case "/cookies":
          res.setHeader("set-cookie", ["a=1; Path=/", "b=2; Path=/"]);
          res.end("cookies");
          return;
        case "/nocontent":
          res.writeHead(204).end();
          return;
        case "/sse": {
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
          res.write("event: message\ndata: one\n\n");
          void new Promise<void>((resolve) => (control.releaseSse = resolve)).then(() => res.end("event: message\ndata: two\n\n"));
          return;
        }
        case "/forever": {
          res.writeHead(200, { "content-type": "application/octet-stream" });
          const chunk = Buffer.alloc(64 * 1024, 120);
          const pump = () => {
            while (!res.destroyed && res.write(chunk));
            if (!res.destroyed) res.once("drain", pump);
          };
          pump();
          return;
        }
        case "/declared-huge":
          res.writeHead(200, { "content-length": String(100 * 1024 * 1024) });
          res.write("x"); // and never the rest
          return;
        case "/gzip-bomb":
          res.writeHead(200, { "content-encoding": "gzip", "content-type": "application/octet-stream" });
          res.end(gzipSync(Buffer.alloc(20 * 1024 * 1024)));
          return;
        case "/hang":
          return; // never answers
        case "/trickle": {
          res.writeHead(200, { "content-type": "text/plain" });
          const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(".")), 20);
          res.on("close", () => clearInterval(t));
          return;
        }
        case "/reset":
          req.socket.destroy();
          return;
        default:
          res.end("ok");
      }
    });
  };
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function ipv6LoopbackAvailable(): Promise<boolean> {
  const probe = http.createServer();
  try {
    await listen(probe, 0, "::1");
    await close(probe);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRNOTAVAIL" || code === "EAFNOSUPPORT") return false;
    throw err;
  }
}

export const CANARY_V4 = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7", "127.0.0.8", "127.0.0.9"];

export interface Lab {
  /** The one HTTP port: the allowed origin on 127.0.0.1 and every canary listen on it. */
  port: number;
  /** The https origin on 127.0.0.1. */
  tlsPort: number;
  canaryHosts: string[];
  hasIpv6: boolean;
  unixPath: string;
  seen: Seen[];
  control: OriginControl;
  canaryAccepts: () => number;
  close: () => Promise<void>;
}

/**
 * Target G19's loopback lab: an allowed origin on 127.0.0.1:P, canaries on 127.0.0.2..9:P and
 * [::1]:P (when the machine has IPv6 loopback) and on a unix socket, each counting accepted
 * connections, and an https origin. Sharing P means a guard that lets any canary address through
 * is caught whatever the URL's port.
 */
export async function startLab(): Promise<Lab> {
  const seen: Seen[] = [];
  const control: OriginControl = { releaseSse: () => {} };
  const hasIpv6 = await ipv6LoopbackAvailable();
  let accepts = 0;
  const canaryHandler: http.RequestListener = (_req, res) => res.end("canary");
  for (let attempt = 0; ; attempt++) {
    const servers: http.Server[] = [];
    try {
      const main = http.createServer(origin(seen, control));
      servers.push(main);
      await listen(main, 0, "127.0.0.1");
      const port = (main.address() as AddressInfo).port;
      const canaryHosts = hasIpv6 ? [...CANARY_V4, "::1"] : [...CANARY_V4];
      for (const host of canaryHosts) {
        const canary = http.createServer(canaryHandler).on("connection", () => accepts++);
        servers.push(canary);
        await listen(canary, port, host);
      }
      const unixPath = join(tmpdir(), `outbound-http-canary-${process.pid}-${Date.now()}.sock`);
      const unixCanary = http.createServer(canaryHandler).on("connection", () => accepts++);
      await new Promise<void>((resolve, reject) => unixCanary.once("error", reject).listen(unixPath, () => resolve()));
      servers.push(unixCanary);
      const tls = https.createServer({ key: TLS_KEY, cert: TLS_CERT }, origin(seen, control));
      servers.push(tls);
      await listen(tls, 0, "127.0.0.1");
      return {
        port,
        tlsPort: (tls.address() as AddressInfo).port,
        canaryHosts,
        hasIpv6,
        unixPath,
        seen,
        control,
        canaryAccepts: () => accepts,
        close: async () => {
          await Promise.all(servers.map(close));
        },
      };
    } catch (err) {
      await Promise.all(servers.map((s) => (s.listening ? close(s) : undefined)));
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt >= 10) throw err;
    }
  }
}

/**
 * The names every fetcher's guard test resolves (G19): the allowed origin on 127.0.0.1, names that
 * answer a canary, ::1, an IPv4-mapped canary, the metadata address or a private address, a mixed
 * answer, and one that rebinds from the allowed origin to a canary after its first lookup.
 */
export const GUARD_LAB_NAMES: Record<string, string[] | ((call: number) => string[])> = {
  "origin.test": ["127.0.0.1"],
  "canary.test": ["127.0.0.3"],
  "canary6.test": ["::1"],
  "mapped.test": ["::ffff:127.0.0.5"],
  "imds.test": ["169.254.169.254"],
  "lan.test": ["10.0.0.1"],
  "mixed.test": ["127.0.0.1", "127.0.0.2"],
  "rebind.test": (n) => (n === 1 ? ["127.0.0.1"] : ["127.0.0.7"]),
};

/** The spec's stub resolver: a fixed table (or function) of answers; unknown names are ENOTFOUND. */
export function stubResolver(table: Record<string, string[] | ((call: number) => string[])>) {
  const calls: string[] = [];
  const counts = new Map<string, number>();
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const n = (counts.get(hostname) ?? 0) + 1;
    counts.set(hostname, n);
    const entry = table[hostname.replace(/\.$/, "")];
    if (entry === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    const answers = typeof entry === "function" ? entry(n) : entry;
    return answers.map((address): ResolvedAddress => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { resolve, calls };
}
