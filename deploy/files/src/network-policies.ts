import { callersOf, GRPC_CONTAINER_PORT, type GatewayEntry, type OutsideTarget, type ServiceEntry } from "@c402/topology";
import { jobs } from "./kubernetes";
import type { ServiceDefaults } from "./defaults";
import { comment, GENERATED } from "./text";

/** The managed dependencies' usual ports; an overlay patches the policies if yours differ. */
export const DEPENDENCY_PORTS = { postgres: 5432, kafka: 9092, redis: 6379 } as const;
/** Ports of a mail relay: SMTP, SMTPS and submission. */
const SMTP_PORTS = [25, 465, 587];
/** Chain RPC endpoints are HTTPS. */
const RPC_PORTS = [443];
/**
 * Private, shared, link-local and loopback ranges: where the cluster, its nodes,
 * the cloud's metadata service and other tenants' internals live. Sellers'
 * servers are reached anywhere else (the outbound guard refuses these too).
 */
export const NOT_PUBLIC_V4 = ["0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"];
export const NOT_PUBLIC_V6 = ["::1/128", "fc00::/7", "fe80::/10"];

const meta = (name: string) => `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/component: network-policy`;
const pods = (name: string) => `podSelector:
    matchLabels:
      app.kubernetes.io/name: ${name}`;
const tcp = (ports: readonly number[], indent: string) => ports.map((p) => `${indent}- protocol: TCP\n${indent}  port: ${p}`).join("\n");

/** An egress rule to any address on `ports` (managed databases and brokers usually sit on private addresses). */
const anywhereOn = (what: string, ports: readonly number[]) => `    # ${what}
    - to:
        - ipBlock:
            cidr: 0.0.0.0/0
        - ipBlock:
            cidr: "::/0"
      ports:
${tcp(ports, "        ")}`;

/** An egress rule to public addresses only, on `ports` (every port when empty). */
const publicOn = (what: string, ports: readonly number[]) => `    # ${what}
    - to:
        - ipBlock:
            cidr: 0.0.0.0/0
            except: [${NOT_PUBLIC_V4.map((c) => JSON.stringify(c)).join(", ")}]
        - ipBlock:
            cidr: "::/0"
            except: [${NOT_PUBLIC_V6.map((c) => JSON.stringify(c)).join(", ")}]${ports.length > 0 ? `\n      ports:\n${tcp(ports, "        ")}` : ""}`;

/**
 * The namespace Prometheus and the OpenTelemetry collector run in (patch the
 * selector in your overlay if yours differ): it may scrape each workload's
 * metrics port, and receives their spans over OTLP/HTTP.
 */
export const MONITORING_NAMESPACE = "monitoring";
const OTLP_HTTP_PORT = 4318;
const monitoringPeer = `        - namespaceSelector:
            matchLabels:
              kubernetes.io/metadata.name: ${MONITORING_NAMESPACE}`;
const scrapedOn = (port: number) => `    # Prometheus (namespace ${MONITORING_NAMESPACE}) scrapes the metrics port
    - from:
${monitoringPeer}
      ports:
${tcp([port], "        ")}`;
const EXPORTS_SPANS = `    # the OpenTelemetry collector (namespace ${MONITORING_NAMESPACE}), OTLP/HTTP, when OTEL_EXPORTER_OTLP_ENDPOINT is set
    - to:
${monitoringPeer}
      ports:
${tcp([OTLP_HTTP_PORT], "        ")}`;

const OUTSIDE: Record<OutsideTarget, string> = {
  "mail-relay": publicOn("the mail relay (SMTP_URL)", SMTP_PORTS),
  "chain-rpc": publicOn("the chain's RPC endpoint (EVM_RPC_URL, HTTPS)", RPC_PORTS),
  sellers: publicOn("sellers' servers: origins, MCP servers, webhook receivers, on any port, public addresses only", []),
};

/** Egress to the gRPC services `name` calls. */
function callsOut(calls: readonly string[]): string[] {
  if (calls.length === 0) return [];
  return [
    `    # the services it calls
    - to:
${calls.map((c) => `        - ${pods(c).replace(/\n/g, "\n        ")}`).join("\n")}
      ports:
${tcp([GRPC_CONTAINER_PORT], "        ")}`,
  ];
}

function policy(name: string, ingress: string, egress: string[]): string {
  return `${meta(name)}
spec:
  ${pods(name)}
  policyTypes: [Ingress, Egress]
  ingress:
${ingress}
  egress:
${egress.join("\n")}
`;
}

/**
 * k8s/base/network-policies.yaml: deny everything, then allow exactly what the
 * service list says each process talks to (plus DNS): the Ingress controller to
 * the gateway, the gateway to the services it calls, each service to its
 * callees, PostgreSQL and Kafka, and whatever it reaches outside.
 */
export function networkPoliciesYaml(services: readonly ServiceEntry[], gateway: GatewayEntry, defaults: ServiceDefaults): string {
  const callers = (name: string) => callersOf(name, services, gateway);
  const header = comment(
    "#",
    GENERATED,
    "",
    "Deny all traffic of every pod in the namespace, then allow what the service list",
    "(packages/topology: calls, reachesOut) says each process needs. PostgreSQL, Kafka and",
    `Redis are reached on their usual ports (${DEPENDENCY_PORTS.postgres}, ${DEPENDENCY_PORTS.kafka}, ${DEPENDENCY_PORTS.redis}) at any address; patch these`,
    "policies in your overlay if yours differ, or narrow the addresses to your network.",
  );
  const dependencies = [anywhereOn("PostgreSQL (DATABASE_URL)", [DEPENDENCY_PORTS.postgres]), anywhereOn("Kafka (KAFKA_BROKERS)", [DEPENDENCY_PORTS.kafka])];
  return `${header}
${meta("default-deny")}
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
---
# Every pod may look names up in the cluster's DNS.
${meta("allow-dns")}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to:
        - namespaceSelector:
            matchLabels:
              kubernetes.io/metadata.name: kube-system
          podSelector:
            matchLabels:
              k8s-app: kube-dns
      ports:
        - protocol: UDP
          port: 53
        - protocol: TCP
          port: 53
---
# The gateway: the public entry (the Ingress controller, in its own namespace, and any
# client of the Service) on its HTTP port; out to the services it calls and Redis.
${policy(gateway.name, `    - ports:\n${tcp([defaults.gatewayPort], "        ")}\n${scrapedOn(defaults.metricsPort)}`, [
  ...callsOut(gateway.calls),
  anywhereOn("Redis (REDIS_URL)", [DEPENDENCY_PORTS.redis]),
  EXPORTS_SPANS,
])}${services
    .map(
      (s) => `---
# ${s.name}: called by ${callers(s.name).join(", ") || "nobody"}.
${policy(
  s.name,
  `    - from:
${callers(s.name)
  .map((c) => `        - ${pods(c).replace(/\n/g, "\n        ")}`)
  .join("\n")}
      ports:
${tcp([GRPC_CONTAINER_PORT], "        ")}
${scrapedOn(defaults.metricsPort)}`,
  [...callsOut(s.calls), ...dependencies, ...s.reachesOut.map((o) => OUTSIDE[o]), EXPORTS_SPANS],
)}`,
    )
    .join("")}${jobs(services)
    .map(
      (j) => `---
# ${j.name} (a Job): nothing comes in; out to ${j.reaches === "kafka" ? "Kafka" : "PostgreSQL"} only.
${meta(j.name)}
spec:
  ${pods(j.name)}
  policyTypes: [Ingress, Egress]
  egress:
${j.reaches === "kafka" ? dependencies[1] : dependencies[0]}
`,
    )
    .join("")}`;
}
