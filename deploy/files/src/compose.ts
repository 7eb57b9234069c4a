import { formatCallers } from "@c402/rpc";
import {
  addressVariables,
  callersOf,
  callingProcesses,
  DATABASE,
  developmentSecrets,
  builtFile,
  CHAIN_READ_SETTINGS,
  devchainEscrowSettings,
  GATEWAY,
  GRPC_CONTAINER_PORT,
  rpcTokenKey,
  type GatewayEntry,
  type ServiceEntry,
} from "@c402/topology";
import { devchainSettlementAt } from "@c402/devchain";
import type { ServiceDefaults } from "./defaults";
import { devPassword } from "./provision-sql";
import { comment, GENERATED, mapping } from "./text";

/** The development value of a service secret in compose, e.g. dev-only-subject-secret-change-me. */
export function devSecret(env: string): string {
  return `dev-only-${env.toLowerCase().replace(/_/g, "-")}-change-me`;
}

/**
 * Settings a service needs in compose only. identity writes sign-in mails as
 * .eml files when SMTP_URL is unset, under DATA_DIR; the image's /app is not
 * writable by its user, /tmp is.
 */
const COMPOSE_SETTINGS: Record<string, [string, string][]> = { identity: [["DATA_DIR", "/tmp/c402"]] };

const address = (s: ServiceEntry) => `${s.name}:${GRPC_CONTAINER_PORT}`;

const DEVCHAIN = "devchain";
const DEVCHAIN_PORT = 8545;

/**
 * The live network of a service that settles on a chain: the devchain
 * container, whose layout is fixed (the test USDC, the split factory, the
 * demo accounts of the public Hardhat mnemonic), so compose settles live
 * payments out of the box. Every key here is public: never for a real chain.
 */
function liveChainSettings(): [string, string][] {
  const chain = devchainSettlementAt(`http://${DEVCHAIN}:${DEVCHAIN_PORT}`);
  return [
    ["EVM_NETWORK", chain.network],
    ["EVM_RPC_URL", chain.rpcUrl],
    ["EVM_USDC_ADDRESS", chain.usdc],
    ["SPLIT_FACTORY_ADDRESS", chain.splitFactory],
    ["FEE_WALLET_ADDRESS", chain.feeWallet],
    ["FACILITATOR_PRIVATE_KEY", chain.facilitatorKey],
    // Escrow sales' payTo and their terms' verifying contract (the escrow service holds them there).
    ["ESCROW_CONTRACT", chain.escrow],
  ];
}

/**
 * The optional rails, passed through from the environment compose runs in (the shell, or a .env file beside
 * this file): unset, each is empty, which payments reads as unset, so the rail is absent. No local Solana or
 * Stellar network runs as a container; these point payments at a real one.
 */
const OPTIONAL_RAIL_SETTINGS = [
  "SOLANA_ENABLED",
  "SOLANA_NETWORK",
  "SOLANA_RPC_URL",
  "SOLANA_USDC_MINT",
  "SOLANA_FEE_PAYER_KEY",
  "STELLAR_NETWORK",
  "STELLAR_RPC_URL",
  "STELLAR_USDC_CONTRACT",
  "STELLAR_FACILITATOR_SECRET",
  "STELLAR_CHANNEL_SECRETS",
] as const;

function optionalRailSettings(): [string, string][] {
  return OPTIONAL_RAIL_SETTINGS.map((env) => [env, `\${${env}:-}`]);
}

/** The local EVM chain as a container of the same image (Hardhat's EDR from npm), published on loopback for buyers' scripts. */
function devchainService(): string {
  return `  ${DEVCHAIN}:
    image: c402-devchain:dev
    build:
      context: ../..
      dockerfile: deploy/docker/Dockerfile
      target: devchain
    init: true
    restart: unless-stopped
    read_only: true
    tmpfs:
      - /tmp # Hardhat's scratch project
    cap_drop: [ALL]
    security_opt: ["no-new-privileges:true"]
    environment:
      DEVCHAIN_HOST: 0.0.0.0
      DEVCHAIN_PORT: "${DEVCHAIN_PORT}"
    ports:
      - "127.0.0.1:${DEVCHAIN_PORT}:${DEVCHAIN_PORT}"
    healthcheck:
      test: ["CMD", "node", "packages/devchain/bin/devchain-probe.cjs", "http://127.0.0.1:${DEVCHAIN_PORT}"]
      interval: 5s
      timeout: 5s
      retries: 3
      start_period: 60s
`;
}

/** A process's development RPC_TOKEN (if it calls others) and, a gRPC service, the digests of its callers' (RPC_CALLERS). */
function rpcIdentity(name: string): [string, string][] {
  const token = (process: string) => devSecret(rpcTokenKey(process));
  const callers = callersOf(name);
  return [
    ...(callingProcesses().includes(name) ? ([["RPC_TOKEN", token(name)]] as [string, string][]) : []),
    ...(callers.length > 0 ? ([["RPC_CALLERS", formatCallers(Object.fromEntries(callers.map((c) => [c, token(c)])))]] as [string, string][]) : []),
  ];
}

function grpcService(s: ServiceEntry, publicUrl: string): string {
  const env: [string, string][] = [
    ["DATABASE_URL", `postgres://${s.database.role}:${devPassword(s)}@postgres:5432/${DATABASE}`],
    ...(s.readsBaseUrl ? ([["BASE_URL", publicUrl]] as [string, string][]) : []),
    ...Object.entries(addressVariables(s.calls, address)),
    ...developmentSecrets(s).map((secret): [string, string] => [secret.env, secret.developmentValue ?? devSecret(secret.env)]),
    ...(COMPOSE_SETTINGS[s.name] ?? []),
    ...rpcIdentity(s.name),
    ...(s.settlesOnChain ? [...liveChainSettings(), ...optionalRailSettings()] : []),
    // A service that only reads the chain (escrow: arbiters' balances) gets the network and its RPC URL, nothing else.
    ...(s.readsChain ? liveChainSettings().filter(([env]) => (CHAIN_READ_SETTINGS as readonly string[]).includes(env)) : []),
    ...(s.relaysEscrow ? devchainEscrowSettings(devchainSettlementAt(`http://${DEVCHAIN}:${DEVCHAIN_PORT}`)) : []),
  ];
  const onChain = s.settlesOnChain || s.readsChain;
  const waitsFor = [...s.calls.map((c) => [c, "service_started"] as const), ...(onChain ? ([[DEVCHAIN, "service_healthy"]] as const) : [])];
  const dependsOn =
    waitsFor.length === 0
      ? "    depends_on: *infra-ready"
      : ["    depends_on:", "      <<: *infra-ready", ...waitsFor.flatMap(([c, condition]) => [`      ${c}:`, `        condition: ${condition}`])].join("\n");
  return `  ${s.name}:
    <<: *c402-image
    command: ["${builtFile(s.name)}"]
    environment:
      <<: *grpc-env
${mapping(env, "      ")}
    healthcheck: *grpc-healthcheck
${dependsOn}
`;
}

function gateway(g: GatewayEntry, defaults: ServiceDefaults, publicUrl: string): string {
  const port = defaults.gatewayPort;
  const env: (readonly [string, string | number])[] = [
    ["HOST", "0.0.0.0"],
    ["PORT", port],
    ["BASE_URL", publicUrl],
    ["SITE_URL", publicUrl],
    defaults.gatewayLogLevel,
    ...defaults.metricsSettings,
    ["REDIS_URL", "redis://redis:6379"],
    ...rpcIdentity(g.name),
    ...Object.entries(addressVariables(g.calls, address)),
  ];
  return `  ${g.name}:
    <<: *c402-image
    command: ["${builtFile(g.name)}"]
    environment:
${mapping(env, "      ")}
    ports:
      - "127.0.0.1:${port}:${port}"
    healthcheck:
      test: ["CMD", "node", "-e", "fetch('http://127.0.0.1:${port}${g.healthPath}').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
      interval: 10s
      timeout: 5s
      retries: 3
      start_period: 60s
    depends_on:
      redis:
        condition: service_healthy
${g.calls.map((c) => `      ${c}:\n        condition: service_healthy`).join("\n")}
`;
}

/** deploy/docker/docker-compose.yml: the infrastructure, then every service of the list, then the gateway. */
export function dockerCompose(services: readonly ServiceEntry[], defaults: ServiceDefaults, g: GatewayEntry = GATEWAY): string {
  const port = defaults.gatewayPort;
  const publicUrl = `http://127.0.0.1:${port}`;
  return `${comment(
    "#",
    GENERATED,
    "",
    "c402 in distributed mode on one Docker host: PostgreSQL (one schema + role per",
    "service, see provision.sql), Kafka (KRaft, single node), Redis, and every",
    "service from one image (deploy/docker/Dockerfile).",
    "",
    "  docker compose -f deploy/docker/docker-compose.yml up --build -d",
    `  curl ${publicUrl}${g.healthPath}`,
    "",
    "Every password and secret below is a DEVELOPMENT value. Only the gateway is",
    "published, on loopback.",
    "",
    "Payments settles live on the devchain container. Solana and Stellar are off",
    "unless the environment compose runs in (or a .env file beside this file) sets",
    "SOLANA_ENABLED=true with SOLANA_NETWORK, SOLANA_RPC_URL and SOLANA_FEE_PAYER_KEY,",
    "or STELLAR_NETWORK with STELLAR_RPC_URL and STELLAR_FACILITATOR_SECRET.",
  )}

name: c402

x-c402-image: &c402-image
  image: c402:dev
  build:
    context: ../..
    dockerfile: deploy/docker/Dockerfile
  init: true
  restart: unless-stopped
  read_only: true
  tmpfs:
    - /tmp # the only writable path
  cap_drop: [ALL]
  security_opt: ["no-new-privileges:true"]

# Settings every gRPC service reads (packages/runtime distributedInfraSpec).
x-grpc-env: &grpc-env
  KAFKA_BROKERS: kafka:9092
  GRPC_HOST: 0.0.0.0
  GRPC_PORT: "${GRPC_CONTAINER_PORT}"
${mapping([defaults.logLevel, ...defaults.metricsSettings], "  ")}
  KAFKAJS_NO_PARTITIONER_WARNING: "1"

x-grpc-healthcheck: &grpc-healthcheck # grpc.health.v1 Check: SERVING once migrated and started, NOT_SERVING while stopping.
  test: ["CMD", "node", "packages/rpc/bin/grpc-health-probe.cjs", "127.0.0.1:${GRPC_CONTAINER_PORT}"]
  interval: 10s
  timeout: 5s
  retries: 3
  start_period: 90s

x-infra-ready: &infra-ready
  postgres:
    condition: service_healthy
  kafka:
    condition: service_healthy

services:
  postgres:
    image: postgres:15
    restart: unless-stopped
    environment:
      POSTGRES_USER: postgres
      POSTGRES_PASSWORD: postgres-dev-password
      POSTGRES_DB: ${DATABASE}
    volumes:
      - pgdata:/var/lib/postgresql/data
      - ./provision.sql:/docker-entrypoint-initdb.d/10-provision.sql:ro
    healthcheck:
      # -h 127.0.0.1 forces TCP: the init-time server listens on the socket
      # only, so this passes once provision.sql has run and the real server is up.
      test: ["CMD", "pg_isready", "-h", "127.0.0.1", "-U", "postgres", "-d", "${DATABASE}"]
      interval: 5s
      timeout: 5s
      retries: 20

  redis:
    image: redis:7
    restart: unless-stopped
    command: ["redis-server", "--save", "", "--appendonly", "no"]
    healthcheck:
      test: ["CMD", "redis-cli", "ping"]
      interval: 5s
      timeout: 3s
      retries: 20

  kafka:
    image: apache/kafka:4.1.1
    hostname: kafka
    restart: unless-stopped
    environment:
      CLUSTER_ID: gloSzyrPRJTXJc2OpiSILg
      KAFKA_NODE_ID: 1
      KAFKA_PROCESS_ROLES: broker,controller
      KAFKA_LISTENERS: PLAINTEXT://:9092,CONTROLLER://:9093
      KAFKA_ADVERTISED_LISTENERS: PLAINTEXT://kafka:9092
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
      KAFKA_CONTROLLER_LISTENER_NAMES: CONTROLLER
      KAFKA_INTER_BROKER_LISTENER_NAME: PLAINTEXT
      KAFKA_CONTROLLER_QUORUM_VOTERS: 1@kafka:9093
      KAFKA_LOG_DIRS: /var/lib/kafka/data
      # The services create their own topics (kafkajs admin), as with deploy/kafka/kafka.sh.
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: "false"
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: 1
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: 1
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: 1
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR: 1
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR: 1
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: 0
      KAFKA_HEAP_OPTS: "-Xms512m -Xmx512m"
    volumes:
      - kafkadata:/var/lib/kafka/data
    healthcheck:
      # Small heap for the probe's own JVM (it would inherit the broker's KAFKA_HEAP_OPTS).
      test: ["CMD-SHELL", "KAFKA_HEAP_OPTS=-Xmx128m /opt/kafka/bin/kafka-broker-api-versions.sh --bootstrap-server localhost:9092 > /dev/null"]
      interval: 10s
      timeout: 10s
      retries: 12
      start_period: 20s

${devchainService()}
${services.map((s) => grpcService(s, publicUrl)).join("\n")}
${gateway(g, defaults, publicUrl)}
volumes:
  pgdata:
  kafkadata:
`;
}
