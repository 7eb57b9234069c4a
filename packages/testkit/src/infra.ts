import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * Which real infrastructure this test run has. The jest global setup probes it
 * once and publishes what it found in these variables; suites pick their
 * `describe` from them. With CI=true the global setup fails the run instead of
 * letting a PostgreSQL, Redis or Kafka suite skip.
 */
export const INFRA_ENV = {
  postgres: "C402_TEST_POSTGRES_URL",
  redis: "C402_TEST_REDIS_URL",
  kafka: "C402_TEST_KAFKA_BROKERS",
  /** The same broker's SASL_SSL listener (its CA certificate in C402_TEST_KAFKA_CA_FILE). */
  kafkaSecure: "C402_TEST_KAFKA_SECURE_BROKER",
} as const;

export type InfraKind = keyof typeof INFRA_ENV;

export function infraAvailable(kind: InfraKind): string | undefined {
  const v = process.env[INFRA_ENV[kind]];
  return v && v.length > 0 ? v : undefined;
}

/** `describe` when the infrastructure is reachable, `describe.skip` otherwise. */
export function describeWith(kind: InfraKind): jest.Describe {
  return infraAvailable(kind) ? describe : describe.skip;
}

/** A fresh, empty PostgreSQL database for one test file; drop it in afterAll. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = infraAvailable("postgres");
  if (!adminUrl) throw new Error("PostgreSQL is not available to this test run");
  const name = `c402_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** A topic name no other test uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString("hex")}`;
}

/** Polls `read` until `ok` holds (or fails after timeoutMs) and returns the last value. */
export async function eventually<T>(read: () => T | Promise<T>, ok: (value: T) => boolean = Boolean, timeoutMs = 20_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
