import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { KafkaBus } from "@c402/bus";
import { TOPICS } from "@c402/contracts";
import { describeWith, infraAvailable, uniqueName } from "@c402/testkit";
import { Kafka } from "kafkajs";
import { kafkaBusOptions, kafkaSpec } from "../src";
import { loadConfig } from "@c402/config";

const root = resolve(__dirname, "../../..");

describe("Kafka settings", () => {
  const settings = (vars: Record<string, string>) => kafkaBusOptions(loadConfig(kafkaSpec, { KAFKA_BROKERS: "k1:9093,k2:9093", ...vars }));

  it("default to plaintext, 3 partitions and replication factor 1", () => {
    expect(settings({})).toEqual({ brokers: ["k1:9093", "k2:9093"], partitions: 3, replicationFactor: 1, ssl: false });
  });

  it("take TLS, SASL and the topics' shape from the environment", () => {
    expect(
      settings({
        KAFKA_TLS: "true",
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        KAFKA_SASL_USERNAME: "c402",
        KAFKA_SASL_PASSWORD: "s3cret",
        KAFKA_TOPIC_PARTITIONS: "6",
        KAFKA_TOPIC_REPLICATION_FACTOR: "3",
      }),
    ).toEqual({
      brokers: ["k1:9093", "k2:9093"],
      partitions: 6,
      replicationFactor: 3,
      ssl: true,
      sasl: { mechanism: "scram-sha-512", username: "c402", password: "s3cret" },
    });
  });

  it("refuse a SASL mechanism without its user and password, and an unknown mechanism", () => {
    expect(() => settings({ KAFKA_SASL_MECHANISM: "plain", KAFKA_SASL_USERNAME: "c402" })).toThrow(
      /KAFKA_SASL_MECHANISM=plain needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD/,
    );
    expect(() => settings({ KAFKA_SASL_MECHANISM: "gssapi" })).toThrow(/KAFKA_SASL_MECHANISM/);
    expect(() => settings({ KAFKA_TOPIC_REPLICATION_FACTOR: "0" })).toThrow(/KAFKA_TOPIC_REPLICATION_FACTOR/);
  });
});

describeWith("kafka")("topics created with the configured shape (real Kafka)", () => {
  const brokers = (infraAvailable("kafka") as string).split(",");
  const admin = new Kafka({ clientId: "topics-test", brokers }).admin();
  beforeAll(() => admin.connect());
  afterAll(() => admin.disconnect());
  const partitionsOf = async (topic: string) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.length;

  it("creates a missing topic with the configured partitions, and leaves an existing one as it is", async () => {
    const topic = uniqueName("topics-shape");
    const five = new KafkaBus({ brokers, clientId: "topics-five", partitions: 5, replicationFactor: 1 });
    await five.ensureTopics([topic]);
    await five.close();
    expect(await partitionsOf(topic)).toBe(5);
    const two = new KafkaBus({ brokers, clientId: "topics-two", partitions: 2, replicationFactor: 1 });
    await two.ensureTopics([topic]);
    await two.close();
    expect(await partitionsOf(topic)).toBe(5);
  });

  it("fails, naming why, when the cluster has fewer brokers than the replication factor", async () => {
    const topic = uniqueName("topics-rf");
    const bus = new KafkaBus({ brokers, clientId: "topics-rf", partitions: 1, replicationFactor: 3 });
    await expect(bus.ensureTopics([topic])).rejects.toThrow();
    await bus.close();
    expect(await admin.listTopics()).not.toContain(topic);
  });

  const job = (vars: Record<string, string>) =>
    new Promise<{ code: number; stderr: string }>((done) =>
      execFile(
        process.execPath,
        ["--import", "tsx", join(root, "packages/runtime/src/create-topics.ts")],
        { cwd: root, env: { ...process.env, KAFKA_BROKERS: brokers.join(","), LOG_LEVEL: "warn", ...vars } },
        (err, _stdout, stderr) => done({ code: err ? Number(err.code) : 0, stderr }),
      ),
    );

  it("the topics job (create-topics.ts) makes every topic of the contract exist, and exits 1 with the reason when it cannot", async () => {
    expect(await job({})).toEqual({ code: 0, stderr: "" });
    const existing = await admin.listTopics();
    for (const topic of Object.values(TOPICS)) expect(existing).toContain(topic);
    const refused = await job({ KAFKA_SASL_MECHANISM: "plain" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("KAFKA_SASL_MECHANISM=plain needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD");
  }, 60_000);
});
