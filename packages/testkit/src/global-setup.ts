import net from "node:net";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { INFRA_ENV } from "./infra";

/**
 * Jest global setup: probe PostgreSQL, Redis and Kafka on loopback and publish
 * what is reachable for the suites. Addresses come from the environment
 * (DATABASE_URL-style variables) with the machine's standard defaults.
 */
function reachable(host: string, port: number, timeoutMs = 800): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

function hostPort(url: string, defaultPort: number): [string, number] {
  const u = new URL(url);
  return [u.hostname.replace(/^\[|\]$/g, ""), Number(u.port || defaultPort)];
}

export default async function globalSetup(): Promise<void> {
  const ci = process.env.CI === "true";
  const pgUrl = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
  // deploy/kafka/kafka.sh serves on 127.0.0.1:19092 by default.
  const kafka = process.env.TEST_KAFKA_BROKERS ?? process.env.KAFKA_BROKERS ?? "127.0.0.1:19092";
  const missing: string[] = [];

  if (await reachable(...hostPort(pgUrl, 5432))) process.env[INFRA_ENV.postgres] = pgUrl;
  else missing.push(`PostgreSQL at ${pgUrl}`);
  if (await reachable(...hostPort(redisUrl, 6379))) process.env[INFRA_ENV.redis] = redisUrl;
  else missing.push(`Redis at ${redisUrl}`);
  const firstBroker = kafka.split(",")[0];
  if (firstBroker && (await reachable(...hostPort(`kafka://${firstBroker}`, 9092)))) process.env[INFRA_ENV.kafka] = kafka;
  else if (process.env.C402_KAFKA_UNAVAILABLE_REASON) {
    console.warn(`\n!!! Kafka suites will not run: ${process.env.C402_KAFKA_UNAVAILABLE_REASON}\n`);
  } else missing.push(kafka ? `Kafka at ${kafka}` : "Kafka (set TEST_KAFKA_BROKERS)");
  // deploy/kafka/kafka.sh also serves SASL_SSL two ports up, with its certificate under its data dir.
  if (process.env[INFRA_ENV.kafka] && firstBroker) {
    const [host, port] = hostPort(`kafka://${firstBroker}`, 9092);
    const secure = process.env.TEST_KAFKA_SECURE_BROKER ?? `${host}:${port + 2}`;
    const caFile = process.env.TEST_KAFKA_CA_FILE ?? join(process.env.KAFKA_DATA_DIR ?? `/tmp/c402-kafka-${port}`, "secure", "ca.pem");
    if (existsSync(caFile) && (await reachable(...hostPort(`kafka://${secure}`, 9094)))) {
      process.env[INFRA_ENV.kafkaSecure] = secure;
      process.env.C402_TEST_KAFKA_CA_FILE = caFile;
    } else missing.push(`Kafka's SASL_SSL listener at ${secure} with its certificate ${caFile} (deploy/kafka/kafka.sh start)`);
  }

  if (missing.length > 0) {
    const text = `infrastructure not reachable: ${missing.join("; ")}`;
    if (ci) throw new Error(`${text} (CI=true: these suites must run, not skip)`);
    console.warn(`\n${text}: those suites are skipped\n`);
  }
}
