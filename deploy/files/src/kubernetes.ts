import { defaultOf } from "@c402/config";
import { MIGRATE_ONLY_FLAG, observabilitySpec } from "@c402/runtime";
import {
  addressVariables,
  callersOf,
  callingProcesses,
  rpcTokenKey,
  DATABASE,
  databaseSecretKey,
  builtFile,
  GATEWAY,
  GRPC_CONTAINER_PORT,
  type GatewayEntry,
  type Resources,
  type ServiceEntry,
} from "@c402/topology";
import type { ServiceDefaults } from "./defaults";
import { comment, GENERATED, mapping } from "./text";

const CONFIG_MAP = "c402-config";
const SECRET = "c402-secrets";
const header = (...lines: string[]) => comment("#", GENERATED, "", ...lines);

function resources(r: Resources): string {
  return `          resources:
            requests:
              cpu: ${r.requests.cpu}
              memory: ${r.requests.memory}
            limits:
              cpu: "${r.limits.cpu}"
              memory: ${r.limits.memory}`;
}

/**
 * A service that reads the chain without settling on it (ServiceEntry.readsChain) takes
 * EVM_NETWORK from the ConfigMap like payments, and the RPC URL from payments' Secret key,
 * optional: a cluster with no live network starts it without one.
 */
function chainReadEnv(s: ServiceEntry): string[] {
  return s.readsChain ? [secretEnv("EVM_RPC_URL", "EVM_RPC_URL", true)] : [];
}

function secretEnv(env: string, key: string, optional = false): string {
  return `            - name: ${env}
              valueFrom:
                secretKeyRef:
                  name: ${SECRET}
                  key: ${key}${optional ? "\n                  optional: true" : ""}`;
}

/**
 * A process's RPC_TOKEN (its own Secret key, if it calls others) and, for a gRPC
 * service, RPC_CALLERS: the digests of its callers' tokens. The digests are
 * placeholders the service refuses to start with, until set from the Secret's
 * tokens (printf %s "$TOKEN" | sha256sum).
 */
function rpcIdentityEnv(name: string): string[] {
  const callers = callersOf(name);
  return [
    ...(callingProcesses().includes(name) ? [secretEnv("RPC_TOKEN", rpcTokenKey(name))] : []),
    ...(callers.length > 0
      ? [
          `            # Who may call it: <caller>:<sha256 hex of that caller's RPC_TOKEN> (placeholders: set them).
            - name: RPC_CALLERS
              value: "${callers.map((c) => `${c}:replace-with-the-sha256-of-${rpcTokenKey(c)}`).join(",")}"`,
        ]
      : []),
  ];
}

/** Pod and container settings every workload shares: non-root, read-only root, no privileges, /tmp as an emptyDir. */
const POD_SECURITY = `      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: 30
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        runAsGroup: 10001
        seccompProfile:
          type: RuntimeDefault`;
const CONTAINER_SECURITY = `          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: [ALL]
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        # tsx's transform cache and IPC socket (the root filesystem is read-only).
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi`;

function labels(name: string, component: string, indent: string): string {
  return `${indent}app.kubernetes.io/name: ${name}\n${indent}app.kubernetes.io/component: ${component}`;
}

/** An object's metadata: its name and the workload's labels. */
function objectMeta(name: string, component: string): string {
  return `metadata:
  name: ${name}
  labels:
${labels(name, component, "    ")}`;
}

/**
 * The Deployment every workload shares: its labels and selector, a rolling
 * update that never drops below the wanted capacity, the pod's security
 * context; `pod` is the rest of the pod spec (spread constraints, containers).
 */
function deployment(name: string, component: string, replicas: number, pod: string): string {
  return `apiVersion: apps/v1
kind: Deployment
${objectMeta(name, component)}
spec:
  replicas: ${replicas}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: ${name}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
${podTemplate(name, component, pod, SCRAPE_ANNOTATIONS)}`;
}

/** Where every process serves its Prometheus metrics in its pod (METRICS_PORT at its default). */
const METRICS_PORT = defaultOf(observabilitySpec.metricsPort);
/** The annotations Prometheus' Kubernetes service discovery conventionally reads. */
const SCRAPE_ANNOTATIONS = ['prometheus.io/scrape: "true"', `prometheus.io/port: "${METRICS_PORT}"`, "prometheus.io/path: /metrics"];

/** A container's metrics port entry. */
function metricsPort(): string {
  return `            - name: metrics
              containerPort: ${METRICS_PORT}
              protocol: TCP`;
}

/** The pod template of a workload: its labels, its own ServiceAccount, the shared pod security, then `pod` (the rest of the pod spec). */
function podTemplate(name: string, component: string, pod: string, annotations: string[] = []): string {
  return `  template:
    metadata:
      labels:
${labels(name, component, "        ")}${annotations.length > 0 ? `\n      annotations:\n${annotations.map((a) => `        ${a}`).join("\n")}` : ""}
    spec:
      serviceAccountName: ${name}
${POD_SECURITY}
${pod}`;
}

/** A workload's own ServiceAccount, with no token: no process of ours calls the Kubernetes API. */
function serviceAccount(name: string, component: string): string {
  return `apiVersion: v1
kind: ServiceAccount
${objectMeta(name, component)}
automountServiceAccountToken: false
`;
}

/**
 * What every workload has beside its Deployment: its own ServiceAccount (no
 * token: no service calls the Kubernetes API, so a compromised pod has no
 * credential to use there) and a PodDisruptionBudget (maxUnavailable rather than
 * minAvailable, so a one-replica install never blocks a node drain).
 */
function identityAndBudget(name: string, component: string): string {
  return `${serviceAccount(name, component)}---
apiVersion: policy/v1
kind: PodDisruptionBudget
${objectMeta(name, component)}
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ${name}
`;
}

/** The Service in front of a workload's pods on its one named port; `type` is the spec lines before the selector. */
function service(name: string, component: string, type: string, port: { name: string; number: number; appProtocol: string }): string {
  return `apiVersion: v1
kind: Service
${objectMeta(name, component)}
spec:
${type}
  selector:
    app.kubernetes.io/name: ${name}
  ports:
    - name: ${port.name}
      port: ${port.number}
      targetPort: ${port.name}
      protocol: TCP
      appProtocol: ${port.appProtocol}
`;
}

/** Deployment + headless Service of one gRPC service: the one template every service of the list is expanded from. */
function grpcWorkload(s: ServiceEntry): string {
  const component = "grpc-service";
  return `# ${s.name}: ${s.owns}. gRPC on port ${GRPC_CONTAINER_PORT} (GRPC_PORT in ${CONFIG_MAP}).
${deployment(
  s.name,
  component,
  1,
  `      containers:
        - name: ${s.name}
          image: c402
          args: ["${builtFile(s.name)}"]
          ports:
            - name: grpc
              containerPort: ${GRPC_CONTAINER_PORT}
              protocol: TCP
${metricsPort()}
          envFrom:
            - configMapRef:
                name: ${CONFIG_MAP}
          env:
${[secretEnv("DATABASE_URL", databaseSecretKey(s)), ...s.secrets.map((x) => secretEnv(x.env, x.env, x.optional)), ...chainReadEnv(s), ...rpcIdentityEnv(s.name)].join("\n")}
          # Kubernetes' native gRPC probes ask the standard grpc.health.v1 service:
          # NOT_SERVING until migrations ran and the service started, and again
          # from the moment it starts to stop (a gRPC probe takes a port number only).
          startupProbe:
            grpc:
              port: ${GRPC_CONTAINER_PORT}
            periodSeconds: 3
            failureThreshold: 40
          readinessProbe:
            grpc:
              port: ${GRPC_CONTAINER_PORT}
            periodSeconds: 5
            failureThreshold: 3
          livenessProbe:
            grpc:
              port: ${GRPC_CONTAINER_PORT}
            periodSeconds: 10
            failureThreshold: 6
${resources(s.resources)}
${CONTAINER_SECURITY}`,
)}
---
${service(
  s.name,
  component,
  `  # Headless: DNS returns every pod, and the gRPC clients balance round-robin
  # across them (a ClusterIP would pin each long-lived HTTP/2 connection to one pod).
  type: ClusterIP
  clusterIP: None`,
  { name: "grpc", number: GRPC_CONTAINER_PORT, appProtocol: "grpc" },
)}---
${identityAndBudget(s.name, component)}`;
}

/** k8s/base/grpc-services.yaml: a Deployment and a Service for every gRPC service of the list. */
export function grpcServicesYaml(services: readonly ServiceEntry[]): string {
  return `${header(
    "One Deployment, headless Service, ServiceAccount and PodDisruptionBudget per gRPC",
    "service, all from one template (deploy/files/src/kubernetes.ts). Replicas",
    "are set by the overlays, which select these workloads by",
    "app.kubernetes.io/component=grpc-service.",
  )}

${services.map(grpcWorkload).join("---\n")}`;
}

/** k8s/base/gateway.yaml: the gateway's Deployment, Service, ServiceAccount, PodDisruptionBudget and Ingress. */
export function gatewayYaml(defaults: ServiceDefaults, g: GatewayEntry = GATEWAY): string {
  const component = "http-gateway";
  const probe = (periodSeconds: number, extra: string) => `            httpGet:
              path: ${g.healthPath}
              port: http
            periodSeconds: ${periodSeconds}${extra}`;
  return `${header(
    `gateway: all public HTTP on port ${defaults.gatewayPort} (PORT in ${CONFIG_MAP}). Stateless; its`,
    "caches and rate limits live in Redis. Scaled by gateway-hpa.yaml; reached from",
    "outside through the Ingress below (TRUST_PROXY in the ConfigMap counts its hop).",
  )}
${deployment(
  g.name,
  component,
  2,
  `      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              app.kubernetes.io/name: ${g.name}
      containers:
        - name: ${g.name}
          image: c402
          args: ["${builtFile(g.name)}"]
          ports:
            - name: http
              containerPort: ${defaults.gatewayPort}
              protocol: TCP
${metricsPort()}
          envFrom:
            - configMapRef:
                name: ${CONFIG_MAP}
          env:
${[secretEnv("REDIS_URL", "REDIS_URL"), ...rpcIdentityEnv(g.name)].join("\n")}
          # GET ${g.healthPath} (without ?deep=true) answers from the process alone, so a
          # slow downstream never restarts or unreadies the gateway.
          startupProbe:
${probe(3, "\n            failureThreshold: 40")}
          readinessProbe:
${probe(5, "\n            timeoutSeconds: 2\n            failureThreshold: 3")}
          livenessProbe:
${probe(10, "\n            timeoutSeconds: 3\n            failureThreshold: 6")}
          lifecycle:
            preStop:
              # Let endpoints and load balancers drop the pod before SIGTERM.
              exec:
                command: ["sleep", "5"]
${resources(g.resources)}
${CONTAINER_SECURITY}`,
)}
---
${service(g.name, component, "  type: ClusterIP", { name: "http", number: defaults.gatewayPort, appProtocol: "http" })}---
${identityAndBudget(g.name, component)}---
# The public entry. The host and the TLS Secret are placeholders (set them in your
# overlay, with the ingressClassName of your controller if it is not the cluster's
# default); the certificate comes from your issuer (e.g. cert-manager).
apiVersion: networking.k8s.io/v1
kind: Ingress
${objectMeta(g.name, component)}
spec:
  tls:
    - hosts: [checkout.example.com]
      secretName: c402-tls
  rules:
    - host: checkout.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: ${g.name}
                port:
                  name: http
`;
}

/** A Job of the base: what it runs, the secrets it is given, and what it reaches (its NetworkPolicy). */
export interface JobEntry {
  name: string;
  args: readonly string[];
  /** Secret keys given as variables: [variable, key of ${SECRET}]. */
  secrets: readonly (readonly [string, string])[];
  reaches: "kafka" | "postgres";
  purpose: string;
}

/**
 * The Jobs: the topics job, which creates every topic of the contract with the
 * ConfigMap's partitions and replication factor, and one migration Job per
 * service (its entry file with `--migrate`: its schema brought up to date,
 * reading nothing but DATABASE_URL).
 */
export function jobs(services: readonly ServiceEntry[]): JobEntry[] {
  return [
    { name: "create-topics", args: [builtFile("create-topics")], secrets: [], reaches: "kafka", purpose: "every topic of the contract" },
    ...services.map((s): JobEntry => ({
      name: `migrate-${s.name}`,
      args: [builtFile(s.name), MIGRATE_ONLY_FLAG],
      secrets: [["DATABASE_URL", databaseSecretKey(s)]],
      reaches: "postgres",
      purpose: `${s.name}'s schema brought up to date`,
    })),
  ];
}

/**
 * k8s/base/jobs.yaml. Apply with (or before) the services: each service also
 * migrates at its start and creates a missing topic alike, so the Jobs set the
 * order rather than being required. A Job's pod template cannot change in place,
 * so a finished one is deleted after an hour and the next apply after a new image
 * runs it afresh (every Job is safe to run again).
 */
export function jobsYaml(services: readonly ServiceEntry[]): string {
  const component = "job";
  const one = (j: JobEntry) => `# ${j.name}: ${j.purpose}.
apiVersion: batch/v1
kind: Job
${objectMeta(j.name, component)}
spec:
  backoffLimit: 6
  ttlSecondsAfterFinished: 3600
${podTemplate(
  j.name,
  component,
  `      restartPolicy: OnFailure
      containers:
        - name: ${j.name}
          image: c402
          args: [${j.args.map((a) => JSON.stringify(a)).join(", ")}]
          envFrom:
            - configMapRef:
                name: ${CONFIG_MAP}${j.secrets.length > 0 ? `\n          env:\n${j.secrets.map(([v, key]) => secretEnv(v, key)).join("\n")}` : ""}
${resources({ requests: { cpu: "50m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } })}
${CONTAINER_SECURITY}`,
)}
---
${serviceAccount(j.name, component)}`;
  return `${header("The Jobs: the topics job (dist/create-topics.cjs, built from packages/runtime/src/create-topics.ts) and one", "migration Job per service (its built file with --migrate). Generated from the service list.")}
${jobs(services).map(one).join("---\n")}`;
}

/** k8s/base/configmap.yaml: non-secret settings of every service, defaults taken from the services' config modules. */
export function configMapYaml(services: readonly ServiceEntry[], defaults: ServiceDefaults): string {
  const addresses = addressVariables(
    services.map((s) => s.name),
    (s) => `${s.name}:${GRPC_CONTAINER_PORT}`,
  );
  return `${header(
    "Non-secret settings shared by every service (loaded with envFrom; a service",
    `ignores the keys it does not read). Secrets live in ${SECRET} (secret.yaml).`,
  )}
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${CONFIG_MAP}
data:
  # Managed Kafka bootstrap brokers, comma-separated host:port. Placeholder: set it in
  # your overlay. KAFKA_TLS and KAFKA_SASL_MECHANISM (plain, scram-sha-256, scram-sha-512)
  # secure the connection; with SASL, add KAFKA_SASL_USERNAME here and KAFKA_SASL_PASSWORD to
  # the Secret. The topics job creates every topic with the partitions and replication
  # factor below (the production overlay sets 3 replicas); a service creates a missing one alike.
  KAFKA_BROKERS: kafka.example.internal:9092
${mapping(defaults.kafkaSettings, "  ")}
${mapping([defaults.logLevel], "  ")}
  KAFKAJS_NO_PARTITIONER_WARNING: "1"

  # gRPC services: bind all interfaces of the pod on one well-known port.
  GRPC_HOST: 0.0.0.0
  GRPC_PORT: "${GRPC_CONTAINER_PORT}"
  # Service-to-service addresses: cluster DNS names of the Services in this namespace.
${mapping(Object.entries(addresses), "  ")}

  # Every process serves Prometheus metrics (GET /metrics) on its own port, never on the
  # gateway's public one; pods carry prometheus.io/* annotations, and the NetworkPolicies let
  # the monitoring namespace scrape it. Spans are exported over OTLP/HTTP once
  # OTEL_EXPORTER_OTLP_ENDPOINT names your collector (e.g. http://otel-collector.monitoring:4318);
  # OTEL_EXPORTER_OTLP_HEADERS, if your collector wants a key, belongs in the Secret.
${mapping(defaults.metricsSettings, "  ")}

  # Gateway HTTP server.
  HOST: 0.0.0.0
  PORT: "${defaults.gatewayPort}"
  # Public URL of the gateway (also named in identity's wallet challenges) and
  # the site URL used in problem type URIs and links. Placeholders.
  BASE_URL: https://checkout.example.com
  SITE_URL: https://checkout.example.com
  # One proxy hop in front of the gateway: the Ingress controller. Per-address rate
  # limits then see the client's address (the last X-Forwarded-For entry the
  # controller appended). Raise it when a load balancer that also appends sits in
  # front of the controller; "none" when nothing does.
  TRUST_PROXY: "1"
${mapping(defaults.gatewaySettings, "  ")}

  # identity
${mapping(defaults.identitySettings, "  ")}
  # payments: the live EVM network it settles on (CAIP-2; eip155:8453 is Base). With
  # EVM_NETWORK set, payments needs EVM_RPC_URL and FACILITATOR_PRIVATE_KEY (Secret),
  # SPLIT_FACTORY_ADDRESS and FEE_WALLET_ADDRESS, and refuses to start without them.
  # Without EVM_NETWORK it runs rehearsals only (the live face answers 503). escrow reads
  # arbiters' gas balances on the same network (EVM_RPC_URL from the Secret, optional), and
  # holds escrows in the C402Escrow contract there: set ESCROW_CONTRACT (ADR 18; payments
  # quotes escrow checkouts with it) and ESCROW_RELAYER_KEY (Secret, escrow's own funded key);
  # unset, live escrow deposits answer 503.
  EVM_NETWORK: eip155:8453
  # ESCROW_CONTRACT: replace-with-the-C402Escrow-address-on-the-network
  SPLIT_FACTORY_ADDRESS: replace-with-the-SplitFactory-address-on-the-network
  FEE_WALLET_ADDRESS: replace-with-the-wallet-that-receives-the-protocol-fee
  # payments on Solana (optional): set SOLANA_ENABLED "true" and SOLANA_NETWORK (solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp
  # is mainnet), and SOLANA_RPC_URL plus SOLANA_FEE_PAYER_KEY in the Secret; off, no Solana rail.
  # SOLANA_ENABLED: "true"
  # SOLANA_NETWORK: solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp
  # payments on Stellar (optional): set STELLAR_NETWORK (stellar:pubnet or stellar:testnet)
  # and STELLAR_RPC_URL plus STELLAR_FACILITATOR_SECRET in the Secret; unset, no Stellar rail.
  # Sequence numbers are taken per process: replicas sharing these accounts collide, and a
  # collided settlement is refused with nothing applied and rebuilt (ADR 17), so it is safe
  # but slower; channel accounts (STELLAR_CHANNEL_SECRETS) settle in parallel within a pod.
  # STELLAR_NETWORK: stellar:pubnet
${mapping(defaults.paymentsSettings, "  ")}
`;
}

/** k8s/base/secret.yaml: the template of c402-secrets, one DATABASE_URL per service plus each service's own secrets. */
export function secretYaml(services: readonly ServiceEntry[]): string {
  const own = services.flatMap((s) => s.secrets.map((x) => ({ env: x.env, describe: `${s.name}: ${x.describe}`, placeholder: x.placeholder ?? "change-me" })));
  const width = Math.max("<SERVICE>_DATABASE_URL".length, "REDIS_URL".length, ...own.map((x) => x.env.length)) + 4;
  const key = (k: string, ...text: string[]) => text.map((t, i) => `${(i === 0 ? k : "").padEnd(width)}${t}`);
  return `${header()}
# ---------------------------------------------------------------------------
${comment(
  "#",
  'TEMPLATE ONLY. Every value is a placeholder ("change-me"). Do not commit real',
  "values to this file.",
  "",
  "- local overlay: replace the placeholders in your working copy (or delete this",
  "  Secret from the overlay and create it with `kubectl create secret generic",
  `  ${SECRET} --from-literal=...\`).`,
  "- production overlay: this Secret is removed from the output, so `kubectl",
  `  apply -k\` never overwrites the real one. Create \`${SECRET}\` out of band`,
  "  (External Secrets Operator, Sealed Secrets, or your CD's secret store) with",
  "  the same keys.",
  "",
  "Keys:",
  ...key(
    "  <SERVICE>_DATABASE_URL",
    "PostgreSQL URL of that service's own login role",
    "(c402_<service>), which owns schema <service>; see",
    "deploy/docker/provision.sql for the layout.",
    "Append ?sslmode=... as your managed Postgres requires.",
  ),
  ...own.flatMap((x) => key(`  ${x.env}`, x.describe)),
  ...key(
    "  <PROCESS>_RPC_TOKEN",
    "the token that process presents on its gRPC calls (its pod gets it",
    "as RPC_TOKEN; openssl rand -hex 32); the services it calls list",
    "its sha256 in RPC_CALLERS.",
  ),
  ...key("  REDIS_URL", "gateway: caches and rate limits (redis:// or rediss://)."),
)}
# ---------------------------------------------------------------------------
apiVersion: v1
kind: Secret
metadata:
  name: ${SECRET}
type: Opaque
stringData:
${mapping(
  [
    ...services.map((s): [string, string] => [databaseSecretKey(s), `postgres://${s.database.role}:change-me@postgres.example.internal:5432/${DATABASE}`]),
    ...own.map((x): [string, string] => [x.env, x.placeholder]),
    ...callingProcesses(services).map((p): [string, string] => [rpcTokenKey(p), "change-me-to-64-random-hex-characters"]),
    ["REDIS_URL", "redis://:change-me@redis.example.internal:6379"],
  ],
  "  ",
)}
`;
}
