import { callerMethodsOf } from "@c402/topology";
import { deadLetterTopicOf, KafkaBus, OutboxRelay, type Bus, type DeadLetterPolicy, type KafkaBusOptions } from "@c402/bus";
import { metricsSpec, startMetricsServer } from "@c402/metrics";
import { newRequestId, newTraceparent, runWithContext } from "@c402/request-context";
import { openSpan, startTracing, tracingEnabled, tracingSpec } from "@c402/tracing";
import { env, loadConfig, describeConfig, type ConfigOf, type ConfigSpec } from "@c402/config";
import { healthV1 } from "@c402/contracts";
import { migrate, openPostgres, type MigrationSet, type ServiceDatabase } from "@c402/db";
import { createLogger, type Logger } from "@c402/logging";
import { isOwnFailure, ProblemError } from "@c402/problems";
import type { DescService } from "@bufbuild/protobuf";
import { createClient, MIN_TOKEN_LENGTH, parseCallers, RpcServer, type ServiceClient, type ServiceImplementation } from "@c402/rpc";

/**
 * What every service shares at its composition root: the service module
 * contract, health reporting, the distributed-mode infrastructure settings and
 * process lifecycle. Services receive interfaces (database, bus); only this
 * package and the embedded host pick the adapters, by configuration.
 */

export interface ServiceDeps {
  database: ServiceDatabase;
  bus: Bus;
  logger: Logger;
}

/** A service as a host sees it: gRPC registrations plus start/stop of its background work. */
export interface ServiceModule {
  name: string;
  register(server: RpcServer): void;
  /** Starts background work (outbox relay, consumers). Migrations ran before. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export type HealthCheck = () => Promise<void>;

async function timed(name: string, check: HealthCheck, timeoutMs: number): Promise<healthV1.ComponentHealth> {
  const start = Date.now();
  try {
    await Promise.race([check(), new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), timeoutMs))]);
    return { $typeName: "health.v1.ComponentHealth", name, status: "ok", latencyMs: Date.now() - start };
  } catch (err) {
    return {
      $typeName: "health.v1.ComponentHealth",
      name,
      status: "down",
      detail: err instanceof Error ? err.message : String(err),
      latencyMs: Date.now() - start,
    };
  }
}

/** The HealthService implementation for a service with the given component checks. */
export function healthService(service: string, checks: Record<string, HealthCheck>, timeoutMs = 2_000): ServiceImplementation<typeof healthV1.HealthService> {
  return {
    async check() {
      const components = await Promise.all(Object.entries(checks).map(([name, c]) => timed(name, c, timeoutMs)));
      return { service, components };
    },
  };
}

export function standardHealth(deps: ServiceDeps, service: string) {
  return healthService(service, { database: () => deps.database.ping(), bus: () => deps.bus.ping() });
}

/** The relay of the service's outbox (its schema's `outbox` table to its bus); a failed round is logged and retried. */
export function serviceOutboxRelay(deps: ServiceDeps, service: string): OutboxRelay {
  return new OutboxRelay({ db: deps.database.db, bus: deps.bus, service, onError: (err) => deps.logger.warn({ err }, "outbox relay round failed") });
}

/** A task a service repeats in the background (a sweep): one round at a time, stopped with the service. */
export interface PeriodicTask {
  /** Stops the rounds and waits for the one under way. */
  stop(): Promise<void>;
}

/**
 * Runs `round` every `intervalMs`, never two at once (a slow round delays
 * the next one); a failed round is logged and the next one runs as planned.
 */
export function startPeriodic(opts: { name: string; intervalMs: number; round: () => Promise<unknown>; logger: Logger }): PeriodicTask {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    // Each round is its own trace, named by a fresh request id in its log lines.
    const root = { requestId: newRequestId() };
    const span = openSpan(`${opts.name} round`, { parent: root });
    const context = span.context?.traceparent ? span.context : { ...root, traceparent: newTraceparent() };
    running = runWithContext(context, () => opts.round())
      .then(
        () => span.end(),
        (err: unknown) => {
          span.end(err);
          runWithContext(context, () => opts.logger.warn({ err }, `${opts.name} round failed`));
        },
      )
      .finally(() => (running = undefined));
  }, opts.intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export const logLevelSpec = {
  logLevel: env.oneOf("LOG_LEVEL", "log level", ["fatal", "error", "warn", "info", "debug", "trace"] as const, { default: "info" }),
} satisfies ConfigSpec;

/** How a process reaches Kafka, and what the topics it creates look like. */
export const kafkaSpec = {
  kafkaBrokers: env.list("KAFKA_BROKERS", "comma-separated Kafka bootstrap brokers"),
  kafkaTls: env.bool("KAFKA_TLS", "connect to the brokers over TLS, trusting the system's certificate authorities", { default: false }),
  kafkaSaslMechanism: env.oneOf("KAFKA_SASL_MECHANISM", "SASL authentication to the brokers", ["none", "plain", "scram-sha-256", "scram-sha-512"] as const, {
    default: "none",
  }),
  kafkaSaslUsername: env.optionalString("KAFKA_SASL_USERNAME", "SASL user (with KAFKA_SASL_MECHANISM)"),
  kafkaSaslPassword: env.optionalString("KAFKA_SASL_PASSWORD", "SASL password (with KAFKA_SASL_MECHANISM)", { secret: true }),
  kafkaTopicPartitions: env.int("KAFKA_TOPIC_PARTITIONS", "partitions of each topic a process creates (an existing topic is left as it is)", {
    default: 3,
    min: 1,
    max: 1000,
  }),
  kafkaTopicReplicationFactor: env.int(
    "KAFKA_TOPIC_REPLICATION_FACTOR",
    "replication factor of each topic a process creates: 1 on a single broker, 3 on a production cluster",
    {
      default: 1,
      min: 1,
      max: 7,
    },
  ),
} satisfies ConfigSpec;

/** KafkaBus settings from the Kafka settings; a SASL mechanism without its user and password is refused. */
export function kafkaBusOptions(config: ConfigOf<typeof kafkaSpec>): Pick<KafkaBusOptions, "brokers" | "partitions" | "replicationFactor" | "ssl" | "sasl"> {
  const { kafkaSaslMechanism: mechanism, kafkaSaslUsername: username, kafkaSaslPassword: password } = config;
  if (mechanism !== "none" && (!username || !password)) {
    throw new Error(`KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`);
  }
  return {
    brokers: config.kafkaBrokers,
    partitions: config.kafkaTopicPartitions,
    replicationFactor: config.kafkaTopicReplicationFactor,
    ssl: config.kafkaTls,
    ...(mechanism !== "none" ? { sasl: { mechanism, username: username as string, password: password as string } } : {}),
  };
}

/** How consumers treat an event that keeps failing (either bus). */
export const busSpec = {
  deadLetterAfterAttempts: env.int(
    "BUS_DEAD_LETTER_AFTER_ATTEMPTS",
    "failed attempts (about 16 s of backoff at 10) after which an event that keeps failing while the database answers goes to its consumer group's dead-letter topic, dead-letter.<group>, instead of blocking its partition; during an outage events are retried without limit",
    { default: 10, min: 1, max: 100_000 },
  ),
} satisfies ConfigSpec;

/**
 * The dead-letter policy of a process's consumers: a message that failed
 * `afterAttempts` times is a poison message only if the database (what every
 * consumer writes to) answers; each one is logged as an error and counted.
 */
export function deadLetterPolicy(afterAttempts: number, database: { ping(): Promise<void> }, logger: Logger): DeadLetterPolicy {
  return {
    afterAttempts,
    dependenciesHealthy: () =>
      database.ping().then(
        () => true,
        () => false,
      ),
    onDeadLetter: (topic, group, err) =>
      logger.error(
        { err, topic, group, dead_letter_topic: deadLetterTopicOf(group) },
        "event sent to the dead-letter topic: it kept failing while the database answered",
      ),
  };
}

/** What the topics job reads (packages/runtime/src/create-topics.ts). */
export const createTopicsSpec = { ...kafkaSpec, ...logLevelSpec } satisfies ConfigSpec;

/** What a service reads to migrate only (`--migrate`): its database and the log level, nothing else. */
export const migrateOnlySpec = {
  databaseUrl: env.string("DATABASE_URL", "PostgreSQL URL of this service's role", { secret: true }),
  ...logLevelSpec,
} satisfies ConfigSpec;

/** Where a process serves its Prometheus metrics, and where (if anywhere) it exports its spans. */
export const observabilitySpec = { ...metricsSpec, ...tracingSpec } satisfies ConfigSpec;

/**
 * Starts a process's metrics endpoint and, when the OTEL_* settings ask for it,
 * its span export. Stop it last, so the spans of the shutdown are exported too.
 */
export async function startObservability(service: string, config: ConfigOf<typeof observabilitySpec>, logger: Logger): Promise<{ stop(): Promise<void> }> {
  const tracing = startTracing({ service, config });
  // The default port, unasked for, gives way when taken (a second `npm start`); a port someone set does not.
  const metrics = await startMetricsServer({
    host: config.metricsHost,
    port: config.metricsPort,
    orFreePort: process.env[metricsSpec.metricsPort.env] === undefined,
  });
  logger.info({ port: metrics.port, tracing: tracingEnabled() ? config.otelProtocol : "off" }, "serving metrics");
  return {
    async stop() {
      await metrics.close();
      await tracing.shutdown().catch((err: unknown) => logger.warn({ err }, "the last spans could not be exported"));
    },
  };
}

/** Who this process is to the services it calls, and (a gRPC service) who may call it. See @c402/rpc caller-auth. */
export const rpcIdentitySpec = {
  rpcToken: env.optionalString(
    "RPC_TOKEN",
    `this process's own token, sent on every gRPC call it makes (at least ${MIN_TOKEN_LENGTH} characters; only processes that call others need one)`,
    {
      secret: true,
    },
  ),
  rpcCallers: env.string("RPC_CALLERS", 'who may call this service: <caller>:<sha256 hex of its RPC_TOKEN>, comma-separated (printf %s "$TOKEN" | sha256sum)'),
} satisfies ConfigSpec;

/** A client of another service, presenting this process's RPC_TOKEN. */
export type Connect = <S extends DescService>(service: S, address: string) => ServiceClient<S>;

/** This process's RPC_TOKEN, for a process that calls other services: refused at start when missing or short. */
export function callerToken(config: { rpcToken?: string | undefined }): string {
  const token = config.rpcToken;
  if (!token || token.length < MIN_TOKEN_LENGTH)
    throw new Error(`RPC_TOKEN is required (at least ${MIN_TOKEN_LENGTH} characters): this process calls other services`);
  return token;
}

/** Settings every distributed-mode service process reads. */
export const distributedInfraSpec = {
  ...rpcIdentitySpec,
  ...migrateOnlySpec,
  ...kafkaSpec,
  ...busSpec,
  ...observabilitySpec,
  grpcHost: env.string("GRPC_HOST", "address the gRPC server binds", { default: "127.0.0.1" }),
  grpcPort: env.int("GRPC_PORT", "gRPC port of this service", { min: 0, max: 65535 }),
} satisfies ConfigSpec;

/** The argument that makes a service's entry file migrate its schema and exit (its migration Job in Kubernetes). */
export const MIGRATE_ONLY_FLAG = "--migrate";

/**
 * Boots one service as its own process (distributed mode): config, logger,
 * PostgreSQL in the service's schema, Kafka, gRPC server, signal handling.
 * With `--migrate` it only brings its schema up to date and exits (0, or 1
 * saying why), reading nothing but DATABASE_URL and LOG_LEVEL; the service
 * migrates at every start anyway, so the Job is an order, not a requirement.
 */
export async function runDistributedService<S extends ConfigSpec>(opts: {
  name: string;
  schema: string;
  spec: S;
  migrations: MigrationSet;
  /** Builds the service; `connect` makes a client of another service that presents this process's RPC_TOKEN. */
  build: (deps: ServiceDeps, config: ConfigOf<S>, connect: Connect) => Promise<ServiceModule>;
}): Promise<void> {
  if (process.argv.includes(MIGRATE_ONLY_FLAG)) return migrateOnly(opts);
  const spec = { ...distributedInfraSpec, ...opts.spec };
  // One load, so every problem of both parts is reported together.
  const all = loadConfig(spec);
  const config = all as unknown as ConfigOf<typeof distributedInfraSpec>;
  const callers = parseCallers(config.rpcCallers);
  const logger = createLogger({ service: opts.name, level: config.logLevel });
  logger.info({ config: describeConfig(spec, all) }, "starting");
  const observability = await startObservability(opts.name, config, logger);
  const database = openPostgres({ url: config.databaseUrl, schema: opts.schema });
  const bus = new KafkaBus({
    ...kafkaBusOptions(config),
    clientId: opts.name,
    log: (level, message) => logger[level](message),
    onHandlerError: (err, topic, attempt) => logger.warn({ err, topic, attempt }, "event handler failed; retrying"),
    deadLetter: deadLetterPolicy(config.deadLetterAfterAttempts, database, logger),
  });
  const connect: Connect = (service, address) => createClient(service, address, { token: callerToken(config) });
  const module = await opts.build({ database, bus, logger }, all as unknown as ConfigOf<S>, connect);
  // A caller the service list limits to some methods (ServiceEntry.callsOnly) is refused the others.
  const server = new RpcServer({ onError: rpcFailureLog(logger), callers, callerMethods: callerMethodsOf(opts.name) });
  module.register(server);
  const port = await server.listen(config.grpcHost, config.grpcPort);
  await module.start();
  server.serving();
  logger.info({ port, callers: [...callers.values()] }, "serving gRPC");
  onShutdown(logger, async () => {
    await server.stop();
    await module.stop();
    await bus.close();
    await database.close();
    await observability.stop();
  });
}

async function migrateOnly(opts: { name: string; schema: string; migrations: MigrationSet }): Promise<void> {
  const config = loadConfig(migrateOnlySpec);
  const logger = createLogger({ service: opts.name, level: config.logLevel });
  const database = openPostgres({ url: config.databaseUrl, schema: opts.schema });
  try {
    await migrate(database, opts.migrations);
    logger.info({ schema: opts.schema, migrations: Object.keys(opts.migrations).length }, "schema up to date");
    await database.close();
    process.exit(0);
  } catch (err) {
    logger.error({ err }, "migration failed");
    await database.close().catch(() => undefined);
    process.exit(1);
  }
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits (0). Answers a function
 * that does the same for another reason, with the exit code to end with.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>): (reason: string, exitCode: number) => void {
  let stopping = false;
  const shutDown = (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, "shutting down");
    stop().then(
      () => process.exit(exitCode),
      (err) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => shutDown("SIGTERM", 0));
  process.once("SIGINT", () => shutDown("SIGINT", 0));
  return shutDown;
}

/**
 * How a service logs a failed call: a problem of the caller's making (a
 * refused payment, a missing checkout: 4xx) is routine and logged at debug,
 * without a stack; anything else is an error.
 */
export function rpcFailureLog(logger: Logger): (err: unknown, method: string) => void {
  return (err, method) => {
    // A refusal, or a failure elsewhere (a seller's server): not this service's error.
    if (err instanceof ProblemError && !isOwnFailure(err)) logger.debug({ method, problem: err.slug, reason: err.extensions.reason }, "rpc refused");
    else logger.error({ err, method }, "rpc failed");
  };
}
