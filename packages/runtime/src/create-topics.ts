/**
 * The topics job (Kubernetes: k8s/base/jobs.yaml; anywhere: `tsx packages/runtime/src/create-topics.ts`):
 * creates every topic of the contract (TOPICS) with the partitions and replication
 * factor of KAFKA_TOPIC_PARTITIONS and KAFKA_TOPIC_REPLICATION_FACTOR, before the
 * services start, so that no service creates one with its own defaults. A topic that
 * exists is left as it is. Exits 0 when every topic exists, 1 naming why not.
 */
import { KafkaBus } from "@c402/bus";
import { loadConfig, describeConfig } from "@c402/config";
import { TOPICS } from "@c402/contracts";
import { createLogger } from "@c402/logging";
import { createTopicsSpec, kafkaBusOptions } from "./index";

async function main() {
  const config = loadConfig(createTopicsSpec);
  const logger = createLogger({ service: "create-topics", level: config.logLevel });
  logger.info({ config: describeConfig(createTopicsSpec, config) }, "creating topics");
  const bus = new KafkaBus({ ...kafkaBusOptions(config), clientId: "create-topics", log: (level, message) => logger[level](message) });
  try {
    const topics = Object.values(TOPICS);
    await bus.ensureTopics(topics);
    logger.info({ topics, partitions: config.kafkaTopicPartitions, replicationFactor: config.kafkaTopicReplicationFactor }, "every topic exists");
  } finally {
    await bus.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`create-topics: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
