// Which run modes the e2e suites run against: embedded always, distributed
// when PostgreSQL, Redis and Kafka are all reachable (E2E_MODES overrides).
// Shared by scripts/test.mjs and scripts/fuzz.mjs.
import net from "node:net";

export function reachable(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.setTimeout(800, () => (s.destroy(), resolve(false)));
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });
}

/** `env` must carry TEST_KAFKA_BROKERS; returns the reachable infrastructure and the modes to run. */
export async function e2eModes(env) {
  const [kHost, kPort] = (env.TEST_KAFKA_BROKERS.split(",")[0] ?? "").split(":");
  const infra = {
    postgres: await reachable("127.0.0.1", 5432),
    redis: await reachable("127.0.0.1", 6379),
    kafka: kHost ? await reachable(kHost, Number(kPort)) : false,
  };
  const all = infra.postgres && infra.redis && infra.kafka;
  return { infra, all, modes: (env.E2E_MODES ?? (all ? "embedded,distributed" : "embedded")).split(",").filter(Boolean) };
}
