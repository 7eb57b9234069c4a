import type { DescService } from "@bufbuild/protobuf";
import { paymentsV1, TOPICS } from "@c402/contracts";

/**
 * The one list of c402's services and how they are wired together. The embedded
 * runner (deploy/embedded), the local distributed runner and its PostgreSQL
 * provisioning (deploy/local) read it; deploy/docker/provision.sql,
 * deploy/docker/docker-compose.yml and the Kubernetes base (k8s/base) are
 * generated from it (`npm run deploy:generate`, checked by `deploy:check`).
 * Adding a service starts here: docs/adding-a-service.md.
 *
 * Only layout lives here. A service's settings and their defaults live in its
 * own `src/config.ts`; the deploy files take those defaults from there.
 */

/** The PostgreSQL database that holds every service's schema (compose, provisioning; C402_DATABASE of the local runner defaults to it). */
export const DATABASE = "c402";

/** Port every gRPC service listens on inside a container (compose, Kubernetes). The local runner picks free ports instead. */
export const GRPC_CONTAINER_PORT = 50051;

export interface Resources {
  readonly requests: { readonly cpu: string; readonly memory: string };
  readonly limits: { readonly cpu: string; readonly memory: string };
}

/** A secret a service reads besides its DATABASE_URL: the variable, which is also its key in the c402-secrets Secret. */
export interface SecretSetting {
  readonly env: string;
  /** One line for the Secret template's header. */
  readonly describe: string;
  /** The Secret template's value (default "change-me"). */
  readonly placeholder?: string;
  /**
   * Left unset in development (compose, the local runner), where the
   * service's offline default applies; a cluster must set it.
   */
  readonly unsetInDevelopment?: boolean;
  /** Read only where its rail is configured: a pod starts without the key in the Secret. */
  readonly optional?: boolean;
  /**
   * The fixed value development runs (compose, the local runner) give a
   * secret with a format of its own, instead of random hex. Public, so
   * never for real data.
   */
  readonly developmentValue?: string;
}

/** A destination outside the cluster a service needs (see ServiceEntry.reachesOut). */
export type OutsideTarget = "mail-relay" | "chain-rpc" | "sellers";

export interface ServiceEntry {
  /** Process, compose service, Deployment, Service and cluster DNS name; the code is services/<name>. */
  readonly name: string;
  /** What it owns, for the comments of the generated files. */
  readonly owns: string;
  /** The PostgreSQL schema it owns and the login role that owns it (no other role may use it). */
  readonly database: { readonly schema: string; readonly role: string };
  /** The variable by which every caller (gateway or service) is told its gRPC host:port. */
  readonly addressEnv: string;
  /** Services it calls over gRPC (each listed earlier): it is given their address variables. */
  readonly calls: readonly string[];
  /**
   * The only methods it may call of some of those services (rpcMethod names):
   * the callee refuses it any other (PERMISSION_DENIED). A callee not named
   * here serves it every method.
   */
  readonly callsOnly?: Readonly<Record<string, readonly string[]>>;
  /** Kafka topics it writes through its outbox, and topics it consumes. */
  readonly topics: { readonly publishes: readonly string[]; readonly consumes: readonly string[] };
  readonly secrets: readonly SecretSetting[];
  /** Reads BASE_URL, the gateway's public URL. */
  readonly readsBaseUrl: boolean;
  /** Settles on an EVM chain: the local runner hands it the devchain's EVM_* settings. */
  readonly settlesOnChain: boolean;
  /**
   * Reads the live EVM network without settling on it (escrow: arbiters' gas
   * balances): it is given EVM_NETWORK and EVM_RPC_URL only (the RPC URL from
   * payments' Secret key, optional), never the settlement's keys and addresses.
   */
  readonly readsChain: boolean;
  /**
   * Sends the escrow contract's calls from a relayer key of its own (escrow, ADR 19): the
   * development runs give it the devchain's escrow contract (ESCROW_CONTRACT, ESCROW_USDC_ADDRESS)
   * and a funded devchain key other than the facilitator's (ESCROW_RELAYER_KEY, ADR 11).
   */
  readonly relaysEscrow: boolean;
  /**
   * What it reaches outside the cluster beyond PostgreSQL and Kafka, for its
   * NetworkPolicy: the mail relay (SMTP), the chain's RPC (HTTPS), or sellers'
   * servers (origins, MCP servers, webhook receivers: any public address).
   */
  readonly reachesOut: readonly OutsideTarget[];
  /** Kubernetes requests and limits. */
  readonly resources: Resources;
}

export const GRPC_SERVICE_RESOURCES: Resources = { requests: { cpu: "100m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } };

/**
 * The gRPC services, callees before callers (the embedded runner starts them in
 * this order). Every one serves its own `<name>.v1.<Name>Service` plus
 * `health.v1.HealthService` and the standard `grpc.health.v1` (the probes': SERVING once
 * migrated and started) on its gRPC port.
 */
export const SERVICES = [
  {
    name: "identity",
    owns: "accounts, wallet challenges, sign-in links and their mail, sessions, API keys (hashes), profiles, payout wallets, platform settings, account events",
    database: { schema: "identity", role: "c402_identity" },
    addressEnv: "IDENTITY_GRPC_ADDRESS",
    calls: [],
    // passUsesMoved: only what its migration 0014 handed to content-grants.
    topics: { publishes: [TOPICS.passUsesMoved], consumes: [TOPICS.accountActivity] },
    secrets: [
      {
        env: "SMTP_URL",
        describe: "relay of sign-in mails, smtp:// or smtps://user:password@host:port (unset in development: mails are written as .eml files).",
        placeholder: "smtps://c402:change-me@smtp.example.internal:465",
        unsetInDevelopment: true,
      },
    ],
    readsBaseUrl: true,
    settlesOnChain: false,
    readsChain: false,
    relaysEscrow: false,
    reachesOut: ["mail-relay"],
    resources: GRPC_SERVICE_RESOURCES,
  },
  {
    name: "content-grants",
    owns: "gated content's passes: their signing keys and the read counts of passes with a use limit, outbox",
    database: { schema: "content_grants", role: "c402_content_grants" },
    addressEnv: "CONTENT_GRANTS_GRPC_ADDRESS",
    calls: [],
    topics: { publishes: [TOPICS.accountActivity], consumes: [TOPICS.passUsesMoved] },
    secrets: [
      {
        env: "GRANT_KEYRING",
        describe:
          "keys that sign gated-content passes: id:base64 of 32 random bytes, comma-separated, the first signs (rotate by putting a new one first; drop the old one once its passes expired, up to a year).",
        placeholder: "g1:replace-with-base64-of-32-random-bytes",
        developmentValue: "dev:qO3pN0pQw7Hq3w0mJxkq2m7xV1cN4lq0b3YtZ2JkZ1U=",
      },
    ],
    readsBaseUrl: false,
    settlesOnChain: false,
    readsChain: false,
    relaysEscrow: false,
    reachesOut: [],
    resources: GRPC_SERVICE_RESOURCES,
  },
  {
    name: "fulfillment",
    owns: "origin keys and relay checkouts' one-off credentials (sealed), relay deliveries (one per payment), rehearsal delivery counts, outbox",
    database: { schema: "fulfillment", role: "c402_fulfillment" },
    addressEnv: "FULFILLMENT_GRPC_ADDRESS",
    calls: [],
    topics: { publishes: [TOPICS.accountActivity], consumes: [] },
    secrets: [
      {
        env: "SECRETS_KEYRING",
        describe:
          "master keys that seal stored credentials: id:base64 of 32 random bytes, comma-separated, the first seals (rotate by putting a new one first; keep the old ones until rewrapped).",
        placeholder: "k1:replace-with-base64-of-32-random-bytes",
        developmentValue: "dev:3fKYWZBuTbrARvBO54lp4/GhGlKVFHOToni+CWN1wFo=",
      },
    ],
    readsBaseUrl: false,
    settlesOnChain: false,
    readsChain: false,
    relaysEscrow: false,
    reachesOut: ["sellers"],
    resources: GRPC_SERVICE_RESOURCES,
  },
  {
    name: "catalog",
    owns: "checkouts, idempotency keys, reports, outbox",
    database: { schema: "catalog", role: "c402_catalog" },
    addressEnv: "CATALOG_GRPC_ADDRESS",
    calls: ["identity", "fulfillment"],
    topics: { publishes: [TOPICS.accountActivity, TOPICS.checkoutReported], consumes: [TOPICS.paymentSettled] },
    secrets: [],
    readsBaseUrl: false,
    settlesOnChain: false,
    readsChain: false,
    relaysEscrow: false,
    reachesOut: [],
    resources: GRPC_SERVICE_RESOURCES,
  },
  {
    name: "escrow",
    owns: "accounts' escrow settings, escrows (terms, state, the moments their windows count from), outbox",
    database: { schema: "escrow", role: "c402_escrow" },
    addressEnv: "ESCROW_GRPC_ADDRESS",
    calls: [],
    // escrowEvents: the escrow.* events (payments settles or refunds the sale on released/refunded; webhooks tells the seller).
    topics: { publishes: [TOPICS.accountActivity, TOPICS.escrowEvents], consumes: [] },
    secrets: [
      {
        env: "ESCROW_RELAYER_KEY",
        placeholder: "0x-replace-with-the-escrow-relayer-private-key",
        describe:
          "0x private key of the escrow relayer (deposits, relayed actions, timed exits; fund it with ETH): its own key, never FACILITATOR_PRIVATE_KEY (ADR 11); optional, with ESCROW_CONTRACT in the ConfigMap: unset, live escrow deposits answer 503.",
        unsetInDevelopment: true,
        optional: true,
      },
    ],
    readsBaseUrl: false,
    settlesOnChain: false,
    // Arbiters' gas balances (GET /v1/account/escrow/readiness), the escrow contract's logs and calls.
    readsChain: true,
    relaysEscrow: true,
    reachesOut: ["chain-rpc"],
    resources: GRPC_SERVICE_RESOURCES,
  },
  {
    name: "payments",
    owns: "payments, receipts, handoff nonces, outbox",
    database: { schema: "payments", role: "c402_payments" },
    addressEnv: "PAYMENTS_GRPC_ADDRESS",
    // escrow: an escrow sale's settlement is its Deposit, and its release or refund comes back as an event (ADR 19).
    calls: ["catalog", "fulfillment", "escrow"],
    topics: { publishes: [TOPICS.paymentSettled, TOPICS.accountActivity], consumes: [TOPICS.escrowEvents] },
    secrets: [
      { env: "SUBJECT_SECRET", describe: "HMAC key of buyer pseudonyms (32+ random bytes, hex). Changing it changes every buyer's subject." },
      {
        env: "EVM_RPC_URL",
        describe: "JSON-RPC URL of the live EVM network (EVM_NETWORK in the ConfigMap); it often carries an API key.",
        placeholder: "https://base-mainnet.example/rpc/replace-with-your-key",
        unsetInDevelopment: true,
      },
      {
        env: "FACILITATOR_PRIVATE_KEY",
        describe: "0x-prefixed key of the wallet that pays gas for settlements (fund it with ETH on the live network).",
        placeholder: "0x-replace-with-the-facilitator-private-key",
        unsetInDevelopment: true,
      },
      {
        env: "SOLANA_RPC_URL",
        describe: "JSON-RPC URL of the Solana network (SOLANA_ENABLED and SOLANA_NETWORK in the ConfigMap); optional: unset, no Solana rail.",
        placeholder: "https://solana-rpc.example/replace-with-your-provider",
        unsetInDevelopment: true,
        optional: true,
      },
      {
        env: "SOLANA_FEE_PAYER_KEY",
        describe: "base58 secret key of the Solana fee payer that co-signs and pays network fees (fund it with SOL); optional, with SOLANA_ENABLED.",
        placeholder: "replace-with-the-solana-fee-payer-key",
        unsetInDevelopment: true,
        optional: true,
      },
      {
        env: "STELLAR_RPC_URL",
        describe: "Soroban JSON-RPC URL (HTTPS) of the Stellar network (STELLAR_NETWORK in the ConfigMap); optional: unset, no Stellar rail.",
        placeholder: "https://soroban-rpc.example/replace-with-your-provider",
        unsetInDevelopment: true,
        optional: true,
      },
      {
        env: "STELLAR_FACILITATOR_SECRET",
        describe: "S… secret seed of the Stellar account that submits settlements and pays their fees (fund it with XLM); optional, with STELLAR_NETWORK.",
        placeholder: "S-replace-with-the-stellar-facilitator-secret",
        unsetInDevelopment: true,
        optional: true,
      },
      {
        env: "STELLAR_CHANNEL_SECRETS",
        describe: "comma-separated S… seeds of Stellar channel accounts (settle in parallel); optional. Each replica needs its own: see docs/adr/0017.",
        placeholder: "",
        unsetInDevelopment: true,
        optional: true,
      },
    ],
    readsBaseUrl: false,
    settlesOnChain: true,
    readsChain: false,
    relaysEscrow: false,
    reachesOut: ["chain-rpc"],
    resources: GRPC_SERVICE_RESOURCES,
  },
  {
    name: "schedules",
    owns: "recurring series and their periods (windows, nonces, charge attempts; the signed authorizations stay in payments), outbox",
    database: { schema: "schedules", role: "c402_schedules" },
    addressEnv: "SCHEDULES_GRPC_ADDRESS",
    // payments: each held period is charged (ChargeHeldPeriod) and cancelled on chain (CancelHeldAuthorizations) there (ADR 20).
    calls: ["payments"],
    // Never the facilitator, quotes or purchases: the schedules token reaches the series' three methods only.
    callsOnly: {
      payments: [
        rpcMethod(paymentsV1.PaymentsService, "chargeHeldPeriod"),
        rpcMethod(paymentsV1.PaymentsService, "cancelHeldAuthorizations"),
        rpcMethod(paymentsV1.PaymentsService, "getSeriesStart"),
      ],
    },
    // scheduleEvents: the schedule.* events (webhooks tells the seller); paymentSettled starts a series and settles its periods.
    topics: { publishes: [TOPICS.scheduleEvents], consumes: [TOPICS.paymentSettled] },
    secrets: [],
    // BASE_URL: a series' url (BASE_URL/schedule/{id}).
    readsBaseUrl: true,
    settlesOnChain: false,
    // A live series' clock is the chain's latest block time.
    readsChain: true,
    relaysEscrow: false,
    reachesOut: ["chain-rpc"],
    resources: GRPC_SERVICE_RESOURCES,
  },
  {
    name: "spending-wallets",
    owns: "custodial spending wallets (keys sealed), their limits, budget reservations and spends, their event log, outbox",
    database: { schema: "spending_wallets", role: "c402_spending_wallets" },
    addressEnv: "SPENDING_WALLETS_GRPC_ADDRESS",
    calls: [],
    // accountActivity: a wallet's creation, reveal, archive and limit changes in the account's event log.
    topics: { publishes: [TOPICS.accountActivity], consumes: [] },
    secrets: [
      {
        env: "SPENDING_WALLETS_KEYRING",
        describe:
          "master keys that seal spending wallets' keys: id:base64 of 32 random bytes, comma-separated, the first seals (rotate by putting a new one first; the re-wrap sweep moves every wallet to it; drop the old one once /v1/spending-wallets/health no longer names it).",
        placeholder: "s1:replace-with-base64-of-32-random-bytes",
        developmentValue: "dev:8Ck0S0mKcl1c0Qh0bQ9u7b7yqk6mKxw4b0bq3C0t5Xo=",
      },
    ],
    readsBaseUrl: false,
    settlesOnChain: false,
    // Balances: the wallets' USDC and gas on the live EVM network.
    readsChain: true,
    relaysEscrow: false,
    // chain-rpc: balances and payments' settlement checks; sellers: any x402 URL an agent pays.
    reachesOut: ["chain-rpc", "sellers"],
    resources: GRPC_SERVICE_RESOURCES,
  },
  {
    name: "webhooks",
    owns: "webhook receivers (secrets sealed), the Ed25519 signing keys, deliveries and their attempts, recorded events, outbox",
    database: { schema: "webhooks", role: "c402_webhooks" },
    addressEnv: "WEBHOOKS_GRPC_ADDRESS",
    calls: [],
    topics: { publishes: [TOPICS.accountActivity], consumes: [TOPICS.paymentSettled, TOPICS.checkoutReported, TOPICS.escrowEvents, TOPICS.scheduleEvents] },
    secrets: [
      {
        env: "WEBHOOK_SECRETS_KEYRING",
        describe:
          "master keys that seal receivers' secrets and the private signing keys: id:base64 of 32 random bytes, comma-separated, the first seals (rotate by putting a new one first; keep the old ones).",
        placeholder: "w1:replace-with-base64-of-32-random-bytes",
        developmentValue: "dev:YvVbMBVQMaAYoBG4lX2bxbRZ6LdA5EpKzvy2l6Qdm0I=",
      },
    ],
    readsBaseUrl: true,
    settlesOnChain: false,
    readsChain: false,
    relaysEscrow: false,
    reachesOut: ["sellers"],
    resources: GRPC_SERVICE_RESOURCES,
  },
] as const satisfies readonly ServiceEntry[];

export type ServiceName = (typeof SERVICES)[number]["name"];

export interface GatewayEntry {
  readonly name: "gateway";
  readonly owns: string;
  /** The gRPC services it calls (and reports in `/health?deep=true`); it is given their address variables. */
  readonly calls: readonly ServiceName[];
  /** HTTP path of its probes: answers from the process alone. Its port is the gateway's PORT setting. */
  readonly healthPath: string;
  readonly resources: Resources;
}

/** The HTTP gateway: all public traffic, no database, Redis for caches and rate limits. */
export const GATEWAY = {
  name: "gateway",
  owns: "nothing durable (caches and rate limits in Redis)",
  calls: ["identity", "content-grants", "catalog", "payments", "fulfillment", "webhooks", "escrow", "schedules", "spending-wallets"],
  healthPath: "/health",
  resources: { requests: { cpu: "200m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } },
} as const satisfies GatewayEntry;

/** A method's full gRPC name (`payments.v1.PaymentsService/ChargeHeldPeriod`), as servers name it, from its generated service. */
export function rpcMethod<S extends DescService>(service: S, localName: keyof S["method"] & string): string {
  const method = service.method[localName];
  if (!method) throw new Error(`${service.typeName} has no method ${localName}`);
  return `${service.typeName}/${method.name}`;
}

/** For service `name`: the callers that may call only some of its methods, and those methods (ServiceEntry.callsOnly). */
export function callerMethodsOf(name: string, services: readonly ServiceEntry[] = SERVICES): Map<string, ReadonlySet<string>> {
  return new Map(services.flatMap((s) => (s.callsOnly?.[name] ? [[s.name, new Set(s.callsOnly[name])] as const] : [])));
}

/** The entry of a gRPC service; throws for a name not in the list. */
/** The processes that call service `name` (the gateway first): who its RPC_CALLERS lists, and its NetworkPolicy lets in. */
export function callersOf(name: string, services: readonly ServiceEntry[] = SERVICES, gateway: GatewayEntry = GATEWAY): string[] {
  return [...(gateway.calls.includes(name as never) ? [gateway.name] : []), ...services.filter((s) => s.calls.includes(name)).map((s) => s.name)];
}

/** The processes that call others, so hold an RPC_TOKEN of their own: the gateway, then each service with calls. */
export function callingProcesses(services: readonly ServiceEntry[] = SERVICES, gateway: GatewayEntry = GATEWAY): string[] {
  return [gateway.name, ...services.filter((s) => s.calls.length > 0).map((s) => s.name)];
}

/** The prefix of the variables named after a process: `content-grants` → `CONTENT_GRANTS`. */
export function envPrefix(processName: string): string {
  return processName.toUpperCase().replaceAll("-", "_");
}

/** The variable of the Secret key holding a process's RPC_TOKEN (each pod gets its own as RPC_TOKEN). */
export function rpcTokenKey(processName: string): string {
  return `${envPrefix(processName)}_RPC_TOKEN`;
}

export function serviceNamed(name: string): ServiceEntry {
  const found = (SERVICES as readonly ServiceEntry[]).find((s) => s.name === name);
  if (!found) throw new Error(`no service named ${name} in @c402/topology`);
  return found;
}

/** The composition root of a service in distributed mode, relative to the repository root. */
export function entryFile(name: string): string {
  return `services/${name}/src/main.ts`;
}

/** The topics job's entry file (creates every topic of the contract, then exits). */
export const CREATE_TOPICS_ENTRY = "packages/runtime/src/create-topics.ts";

/**
 * Every program the image runs, by the name of its built file: each service, the
 * gateway and the topics job (`npm run build` bundles them into dist/<name>.cjs).
 */
export function programs(services: readonly ServiceEntry[] = SERVICES, gateway: GatewayEntry = GATEWAY): Record<string, string> {
  return { ...Object.fromEntries([...services.map((s) => s.name), gateway.name].map((n) => [n, entryFile(n)])), "create-topics": CREATE_TOPICS_ENTRY };
}

/** A program's built file in the image, relative to its working directory (/app). */
export function builtFile(program: string): string {
  return `dist/${program}.cjs`;
}

/** The secrets a development run (compose, the local runner) gives the service a throwaway value of. */
/** The EVM settings a service that reads the chain without settling on it is given (ServiceEntry.readsChain). */
export const CHAIN_READ_SETTINGS = ["EVM_NETWORK", "EVM_RPC_URL"] as const;

/** The escrow relayer's settings (ServiceEntry.relaysEscrow) from a devchain's settlement settings: public devchain values, never a real chain's. */
export function devchainEscrowSettings(chain: { escrow: string; usdc: string; escrowRelayerKey: string }): [string, string][] {
  return [
    ["ESCROW_CONTRACT", chain.escrow],
    ["ESCROW_USDC_ADDRESS", chain.usdc],
    ["ESCROW_RELAYER_KEY", chain.escrowRelayerKey],
  ];
}

export function developmentSecrets(s: ServiceEntry): readonly SecretSetting[] {
  return s.secrets.filter((x) => !x.unsetInDevelopment);
}

/** The key of a service's PostgreSQL URL in the c402-secrets Secret (given to it as DATABASE_URL). */
export function databaseSecretKey(service: ServiceEntry): string {
  return `${envPrefix(service.name)}_DATABASE_URL`;
}

/** The address variables a caller of `calls` is given, e.g. { IDENTITY_GRPC_ADDRESS: address(identity) }. */
export function addressVariables(calls: readonly string[], address: (service: ServiceEntry) => string): Record<string, string> {
  return Object.fromEntries(calls.map((name) => serviceNamed(name)).map((s) => [s.addressEnv, address(s)]));
}

/** What is wrong with a service list (empty when nothing): names, schemas, roles and variables unique, calls to earlier entries, every consumed topic published. */
export function topologyProblems(services: readonly ServiceEntry[] = SERVICES, gateway: GatewayEntry = GATEWAY): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const unique = (kind: string, value: string, owner: string) => {
    const key = `${kind}:${value}`;
    const other = seen.get(key);
    if (other) problems.push(`${kind} ${value} is used by both ${other} and ${owner}`);
    seen.set(key, owner);
  };
  const identifier = /^[a-z][a-z0-9_]{0,62}$/;
  services.forEach((s, i) => {
    if (!/^[a-z](?:[a-z0-9]|-(?=[a-z0-9])){0,30}$/.test(s.name))
      problems.push(`${s.name}: a name must be lowercase letters, digits and single inner dashes (a DNS label)`);
    unique("name", s.name, s.name);
    unique("schema", s.database.schema, s.name);
    unique("role", s.database.role, s.name);
    unique("variable", s.addressEnv, s.name);
    if (!identifier.test(s.database.schema) || !identifier.test(s.database.role)) problems.push(`${s.name}: schema and role must be SQL identifiers`);
    if (s.addressEnv !== `${envPrefix(s.name)}_GRPC_ADDRESS`) problems.push(`${s.name}: addressEnv must be <NAME>_GRPC_ADDRESS`);
    for (const callee of s.calls) {
      const at = services.findIndex((o) => o.name === callee);
      if (at < 0) problems.push(`${s.name} calls ${callee}, which is not in the list`);
      else if (at >= i) problems.push(`${s.name} calls ${callee}, which must come earlier in the list (start order)`);
    }
    for (const topic of s.topics.consumes) {
      if (!services.some((o) => o.topics.publishes.includes(topic))) problems.push(`${s.name} consumes ${topic}, which no service publishes`);
    }
  });
  unique("name", gateway.name, gateway.name);
  for (const callee of gateway.calls) if (!services.some((s) => s.name === callee)) problems.push(`gateway calls ${callee}, which is not in the list`);
  return problems;
}
