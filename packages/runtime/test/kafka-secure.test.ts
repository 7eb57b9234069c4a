import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describeWith, infraAvailable } from "@c402/testkit";

/**
 * KAFKA_TLS and KAFKA_SASL_* against a broker that requires them: the SASL_SSL
 * listener of deploy/kafka/kafka.sh (a certificate for 127.0.0.1, made at its
 * start; user c402). Each case is a process configured only from the
 * environment, as a service is.
 */
const FIXTURE = join(__dirname, "fixtures/kafka-roundtrip.ts");

function roundtrip(env: Record<string, string>): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, ["--import", "tsx", FIXTURE], {
    env: {
      PATH: process.env.PATH ?? "",
      NODE_EXTRA_CA_CERTS: process.env.C402_TEST_KAFKA_CA_FILE ?? "",
      KAFKA_BROKERS: infraAvailable("kafkaSecure") as string,
      KAFKA_TLS: "true",
      KAFKAJS_NO_PARTITIONER_WARNING: "1",
      ...env,
    },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

describeWith("kafkaSecure")("Kafka over TLS with SASL (a broker that requires both)", () => {
  it.each(["plain", "scram-sha-256", "scram-sha-512"])("publishes and consumes with KAFKA_TLS=true and KAFKA_SASL_MECHANISM=%s", (mechanism) => {
    const run = roundtrip({ KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: "c402", KAFKA_SASL_PASSWORD: "c402-test-password" });
    expect(run.out).toContain("roundtrip ok: over TLS and SASL");
    expect(run.status).toBe(0);
  });

  it("is refused with a wrong password, naming the authentication failure", () => {
    const run = roundtrip({ KAFKA_SASL_MECHANISM: "scram-sha-256", KAFKA_SASL_USERNAME: "c402", KAFKA_SASL_PASSWORD: "not-the-password" });
    expect(run.status).toBe(1);
    expect(run.out).toMatch(/roundtrip failed: KafkaJSSASLAuthenticationError/);
  });
});
