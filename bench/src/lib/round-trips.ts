/**
 * What one request costs in round trips, read from our system's Prometheus
 * metrics (its metrics port) before and after a timed run: gRPC calls made
 * (c402_rpc_client_duration_seconds_count, by method) and SQL statements run
 * (c402_db_statements_total, by schema and origin), divided by the requests
 * the run made. Background statements (outbox relays, consumers, sweeps) are
 * counted apart: they are shared by every payment of a round.
 */
export type Counts = Map<string, number>;

const SAMPLE = /^([a-z0-9_]+)\{([^}]*)\} ([0-9.e+-]+)$/;

/** The counters of one scrape that the round trips are made of, keyed `<kind> <labels>`. */
export async function scrapeRoundTrips(metricsUrl: string): Promise<Counts> {
  const text = await (await fetch(metricsUrl)).text();
  const counts: Counts = new Map();
  for (const line of text.split("\n")) {
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const [, name, labelText = "", value] = m;
    const labels = Object.fromEntries([...labelText.matchAll(/([a-z_]+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
    // Summed over the labels left out (a method's status codes).
    const key =
      name === "c402_rpc_client_duration_seconds_count"
        ? `grpc ${labels.method}`
        : name === "c402_db_statements_total"
          ? `sql ${labels.origin} ${labels.schema} ${labels.operation}`
          : undefined;
    if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + Number(value));
  }
  return counts;
}

/** The counters of several processes' scrapes (the distributed system's), summed. */
export async function scrapeAllRoundTrips(metricsUrls: string[]): Promise<Counts> {
  const counts: Counts = new Map();
  for (const one of await Promise.all(metricsUrls.map(scrapeRoundTrips))) for (const [key, value] of one) counts.set(key, (counts.get(key) ?? 0) + value);
  return counts;
}

/** Per request, between two scrapes: `grpc 2.00 (payments.v1.PaymentsService/SubmitPayment 1.00, …) | sql in request 2.00 (…) | background 0.31 (…)`. */
export function roundTripsPer(before: Counts, after: Counts, requests: number): string {
  const per = new Map<string, number>();
  for (const [key, value] of after) {
    const delta = value - (before.get(key) ?? 0);
    if (delta > 0) per.set(key, delta / requests);
  }
  const group = (prefix: string, label: (key: string) => string) => {
    const parts = new Map<string, number>();
    for (const [key, value] of per) if (key.startsWith(prefix)) parts.set(label(key), (parts.get(label(key)) ?? 0) + value);
    const total = [...parts.values()].reduce((a, b) => a + b, 0);
    const detail = [...parts.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(2)}`);
    return `${total.toFixed(2)}${detail.length ? ` (${detail.join(", ")})` : ""}`;
  };
  return [
    `gRPC ${group("grpc ", (k) => k.slice(5).replace(/^.*\.v1\./, ""))}`,
    `SQL in the request ${group("sql request ", (k) => k.split(" ").slice(2).join(" "))}`,
    `background SQL ${group("sql background ", (k) => k.split(" ").slice(2).join(" "))}`,
  ].join(" | ");
}
