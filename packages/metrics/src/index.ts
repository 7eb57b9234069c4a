import { createServer, type Server } from "node:http";
import { env, type ConfigSpec } from "@c402/config";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The Prometheus metrics of a process, defined once here so that every
 * service names them alike (and the embedded host, which runs every service
 * in one process, serves one coherent set). Served on their own port, never
 * on the gateway's public one: they describe traffic and volumes a seller's
 * competitor should not read.
 */
export const registry = new Registry();

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequestDuration = new Histogram({
  name: "c402_http_request_duration_seconds",
  help: "HTTP requests answered by the gateway, by method, route template and status (its _count is the request rate)",
  labelNames: ["method", "route", "status"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const rpcServerDuration = new Histogram({
  name: "c402_rpc_server_duration_seconds",
  help: "gRPC calls served, by method and gRPC status code",
  labelNames: ["method", "code"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const rpcClientDuration = new Histogram({
  name: "c402_rpc_client_duration_seconds",
  help: "gRPC calls made to other services, by method and gRPC status code",
  labelNames: ["method", "code"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const dbStatements = new Counter({
  name: "c402_db_statements_total",
  help: "SQL statements run, by schema (as the statement names it), leading keyword and origin (request: serving a request; background: sweeps, relays, consumers)",
  labelNames: ["schema", "operation", "origin"] as const,
  registers: [registry],
});

export const chainRpcDuration = new Histogram({
  name: "c402_chain_rpc_duration_seconds",
  help: "JSON-RPC calls to the chain's node, by method and outcome (ok or error)",
  labelNames: ["method", "outcome"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const chainRpcErrors = new Counter({
  name: "c402_chain_rpc_errors_total",
  help: "JSON-RPC calls to the chain's node that failed (no answer, an HTTP error or a JSON-RPC error), by method",
  labelNames: ["method"] as const,
  registers: [registry],
});

export const consumerLag = new Gauge({
  name: "c402_bus_consumer_lag_messages",
  help: "messages of a partition not yet handled by a consumer group, as of its last handled message",
  labelNames: ["topic", "group", "partition"] as const,
  registers: [registry],
});

export const consumerFailures = new Counter({
  name: "c402_bus_handler_failures_total",
  help: "event handler attempts that threw (each is retried with backoff)",
  labelNames: ["topic", "group"] as const,
  registers: [registry],
});

export const deadLetterCount = new Counter({
  name: "c402_bus_dead_letters_total",
  help: "messages a consumer group gave up on and sent to its dead-letter topic (dead-letter.<group>): alert on any",
  labelNames: ["topic", "group"] as const,
  registers: [registry],
});

export const webhookDeliveries = new Counter({
  name: "c402_webhook_deliveries_total",
  help: "webhook delivery attempts by outcome: delivered, retry (another attempt is scheduled), failed (out of attempts), disabled (410 Gone)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

/** A labelled reading taken when Prometheus scrapes (a count in a table, the age of its oldest row). */
export type Readings = { labels: Record<string, string>; value: number }[];

/**
 * A gauge read from a source at scrape time: each registered source (one per
 * service of the process) answers its readings, and a source that fails is
 * skipped for that scrape (the others still answer).
 */
class ScrapedGauge {
  private readonly sources = new Set<() => Promise<Readings>>();
  private readonly gauge: Gauge<string>;

  constructor(name: string, help: string, labelNames: string[]) {
    const sources = this.sources;
    this.gauge = new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        const all = await Promise.allSettled([...sources].map((read) => read()));
        for (const result of all) {
          if (result.status !== "fulfilled") continue;
          for (const { labels, value } of result.value) this.set(labels, value);
        }
      },
    });
  }

  /** Adds a source; the returned function removes it (a service that stops). */
  source(read: () => Promise<Readings>): () => void {
    this.sources.add(read);
    return () => this.sources.delete(read);
  }
}

/**
 * One read shared by the gauges of one scrape (two gauges from one query): a
 * read is reused while it runs and for `ms` after, then made afresh.
 */
export function oncePerScrape<T>(read: () => Promise<T>, ms = 1_000): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || Date.now() - last.at > ms) last = { at: Date.now(), value: read() };
    return last.value;
  };
}

export const outboxUnpublished = new ScrapedGauge("c402_outbox_unpublished_events", "events written to a service's outbox and not yet on the bus", ["service"]);
export const outboxOldestAge = new ScrapedGauge(
  "c402_outbox_oldest_unpublished_age_seconds",
  "age of the oldest event of a service's outbox not yet on the bus (0 when none): the outbox's lag",
  ["service"],
);
export const sagaSettlements = new ScrapedGauge(
  "c402_saga_settlements",
  "payments in each unfinished state of the settlement saga (claimed, delivered, settling), live or rehearsal",
  ["state", "mode"],
);
export const sagaOldestAge = new ScrapedGauge(
  "c402_saga_oldest_age_seconds",
  "seconds since the quietest payment of each unfinished saga state last moved (0 when none); the sweep resumes those quiet past the settle timeout",
  ["state", "mode"],
);

/** Where a process serves its metrics. */
export const metricsSpec = {
  metricsHost: env.string("METRICS_HOST", "address the Prometheus metrics endpoint binds (GET /metrics)", { default: "127.0.0.1" }),
  metricsPort: env.int(
    "METRICS_PORT",
    "port of the Prometheus metrics endpoint, never the public one (0: any free port; unset and 9464 taken: a free one; either logged at start)",
    {
      default: 9464,
      min: 0,
      max: 65535,
    },
  ),
} satisfies ConfigSpec;

let defaultsCollected = false;

/**
 * Serves `GET /metrics` (the Prometheus text format) on its own port; resolves
 * once listening. With `orFreePort`, a port already taken gives way to a free
 * one (the default port on a developer's machine running two instances), which
 * the caller logs; otherwise a taken port is an error.
 */
export async function startMetricsServer(opts: { host: string; port: number; orFreePort?: boolean }): Promise<{ port: number; close(): Promise<void> }> {
  if (!defaultsCollected) {
    // Process metrics (CPU, memory, event-loop lag, GC), once per process.
    collectDefaultMetrics({ register: registry, prefix: "c402_" });
    defaultsCollected = true;
  }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain" }).end("method not allowed\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "Content-Type": registry.contentType, "Cache-Control": "no-store" }).end(req.method === "HEAD" ? undefined : text),
      () => res.writeHead(500, { "Content-Type": "text/plain" }).end("metrics unavailable\n"),
    );
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, opts.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  try {
    await listen(opts.port);
  } catch (err) {
    if (!opts.orFreePort || (err as { code?: string }).code !== "EADDRINUSE") throw err;
    await listen(0);
  }
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : opts.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
