import { execFileSync } from "node:child_process";
import { BlockList, isIPv6 } from "node:net";
import { join, resolve } from "node:path";
import { GATEWAY, SERVICES } from "@c402/topology";
import { loadAll } from "js-yaml";

/**
 * The NetworkPolicies of the production overlay, as a cluster would enforce
 * them: a small evaluator of the NetworkPolicy rules (a pod is isolated in a
 * direction once a policy of that type selects it; then a connection needs an
 * egress rule of the source and an ingress rule of the target to match peer and
 * port) asked who may talk to whom.
 */
const root = resolve(__dirname, "../../..");
const objects = (loadAll(execFileSync("kubectl", ["kustomize", join(root, "k8s/overlays/production")], { encoding: "utf8" })) as any[]).filter(Boolean);
const policies = objects.filter((o) => o.kind === "NetworkPolicy");

interface Pod {
  name: string;
  namespace: "c402" | "kube-system" | "monitoring" | "default";
  labels: Record<string, string>;
  ip: string;
}
type Destination = { pod: Pod } | { ip: string };

const podsOfWorkloads: Pod[] = objects
  .filter((o) => o.kind === "Deployment" || o.kind === "Job")
  .map((d, i) => ({ name: d.metadata.name, namespace: "c402", labels: d.spec.template.metadata.labels, ip: `10.244.0.${i + 10}` }));
const pod = (name: string) => podsOfWorkloads.find((p) => p.name === name)!;
/** A pod of this namespace that no workload of ours runs (a debug shell, a compromised sidecar). */
const intruder: Pod = { name: "intruder", namespace: "c402", labels: { "app.kubernetes.io/name": "intruder" }, ip: "10.244.0.99" };
const kubeDns: Pod = { name: "coredns", namespace: "kube-system", labels: { "k8s-app": "kube-dns" }, ip: "10.96.0.10" };

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

function inBlock(block: { cidr: string; except?: string[] }, ip: string): boolean {
  const list = (cidrs: string[]) => {
    const l = new BlockList();
    for (const c of cidrs) {
      const [net, prefix] = c.split("/");
      l.addSubnet(net!, Number(prefix), isIPv6(net!) ? "ipv6" : "ipv4");
    }
    return l;
  };
  const type = isIPv6(ip) ? "ipv6" : "ipv4";
  // A block of the other family never matches (BlockList would match IPv4 inside ::/0 as IPv4-mapped).
  if (isIPv6(block.cidr.split("/")[0]!) !== (type === "ipv6")) return false;
  return list([block.cidr]).check(ip, type) && !list(block.except ?? []).check(ip, type);
}

function peerMatches(peer: any, other: Destination): boolean {
  if (peer.ipBlock) return inBlock(peer.ipBlock, "pod" in other ? other.pod.ip : other.ip);
  if (!("pod" in other)) return false;
  const namespaceOk = peer.namespaceSelector
    ? matches(peer.namespaceSelector.matchLabels, { "kubernetes.io/metadata.name": other.pod.namespace })
    : other.pod.namespace === "c402";
  return namespaceOk && matches(peer.podSelector?.matchLabels, other.pod.labels);
}

const portMatches = (ports: any[] | undefined, port: number, protocol: string) =>
  !ports || ports.some((p) => (p.protocol ?? "TCP") === protocol && (p.port === undefined || p.port === port));

function allowedBy(p: Pod, direction: "Ingress" | "Egress", other: Destination, port: number, protocol: string): boolean {
  if (p.namespace !== "c402") return true;
  const selecting = policies.filter((pol) => matches(pol.spec.podSelector.matchLabels, p.labels) && pol.spec.policyTypes.includes(direction));
  if (selecting.length === 0) return true;
  const rules = selecting.flatMap((pol) => (direction === "Ingress" ? pol.spec.ingress : pol.spec.egress) ?? []);
  const peersOf = (rule: any) => (direction === "Ingress" ? rule.from : rule.to);
  return rules.some(
    (rule) => (peersOf(rule) === undefined || peersOf(rule).some((peer: any) => peerMatches(peer, other))) && portMatches(rule.ports, port, protocol),
  );
}

/** May `from` open a connection to `to` on `port`? */
function canConnect(from: Pod, to: Destination, port: number, protocol = "TCP"): boolean {
  if (!allowedBy(from, "Egress", to, port, protocol)) return false;
  return "pod" in to ? allowedBy(to.pod, "Ingress", { pod: from }, port, protocol) : true;
}

const GRPC = 50051;
const processes = [GATEWAY.name, ...SERVICES.map((s) => s.name)];
const callsOf = (name: string): readonly string[] => (name === GATEWAY.name ? GATEWAY.calls : SERVICES.find((s) => s.name === name)!.calls);
const PUBLIC = "203.0.113.7";
const PRIVATE = "10.20.30.40";

describe("the NetworkPolicies (k8s/overlays/production)", () => {
  it("deny by default: every pod of the namespace is isolated both ways", () => {
    for (const p of [...podsOfWorkloads, intruder]) {
      expect(policies.some((pol) => matches(pol.spec.podSelector.matchLabels, p.labels) && pol.spec.policyTypes.includes("Ingress"))).toBe(true);
      expect(policies.some((pol) => matches(pol.spec.podSelector.matchLabels, p.labels) && pol.spec.policyTypes.includes("Egress"))).toBe(true);
    }
  });

  it("let each process call exactly the gRPC services the service list says it calls, and nothing else on their ports", () => {
    for (const from of processes) {
      for (const to of SERVICES.map((s) => s.name)) {
        if (from === to) continue;
        expect({ from, to, allowed: canConnect(pod(from), { pod: pod(to) }, GRPC) }).toEqual({ from, to, allowed: callsOf(from).includes(to) });
        expect({ from, to, other: canConnect(pod(from), { pod: pod(to) }, 4020) }).toEqual({ from, to, other: false });
      }
      expect(canConnect(intruder, { pod: pod(from) }, GRPC)).toBe(false);
    }
    // So a pod that is not the gateway cannot reach payments' FacilitatorSettle, nor the gateway's callees at all.
    expect(canConnect(intruder, { pod: pod("payments") }, GRPC)).toBe(false);
    expect(canConnect(pod("webhooks"), { pod: pod("payments") }, GRPC)).toBe(false);
  });

  it("open the gateway's HTTP port to clients from outside the namespace (the Ingress controller), and every pod to the cluster's DNS", () => {
    // Pods of the namespace have no reason to call the gateway: their egress does not allow it.
    for (const from of [...podsOfWorkloads, intruder]) {
      expect({ from: from.name, gateway: canConnect(from, { pod: pod("gateway") }, 4020) }).toEqual({ from: from.name, gateway: false });
      expect(canConnect(from, { pod: kubeDns }, 53, "UDP")).toBe(true);
      expect(canConnect(from, { pod: kubeDns }, 53, "TCP")).toBe(true);
      expect(canConnect(from, { pod: kubeDns }, 8080)).toBe(false);
    }
    expect(allowedBy(pod("gateway"), "Ingress", { ip: PUBLIC }, 4020, "TCP")).toBe(true);
    expect(allowedBy(pod("gateway"), "Ingress", { ip: PUBLIC }, 4021, "TCP")).toBe(false);
  });

  it("let the monitoring namespace scrape every process's metrics port (and nothing else of theirs), and every process export spans to it; no pod of the namespace scrapes", () => {
    const prometheus: Pod = { name: "prometheus", namespace: "monitoring", labels: { "app.kubernetes.io/name": "prometheus" }, ip: "10.9.0.1" };
    const collector: Pod = { name: "otel-collector", namespace: "monitoring", labels: { "app.kubernetes.io/name": "otel-collector" }, ip: "10.9.0.2" };
    for (const name of processes) {
      expect({ name, scraped: canConnect(prometheus, { pod: pod(name) }, 9464) }).toEqual({ name, scraped: true });
      expect({ name, grpc: allowedBy(pod(name), "Ingress", { pod: prometheus }, GRPC, "TCP") }).toEqual({ name, grpc: false });
      expect({ name, exports: canConnect(pod(name), { pod: collector }, 4318) }).toEqual({ name, exports: true });
      expect({ name, other: canConnect(pod(name), { pod: collector }, 4317) }).toEqual({ name, other: false });
      for (const from of [...podsOfWorkloads, intruder])
        expect({ from: from.name, name, scrape: canConnect(from, { pod: pod(name) }, 9464) }).toEqual({ from: from.name, name, scrape: false });
    }
    // Another namespace is not the monitoring one.
    expect(allowedBy(pod("payments"), "Ingress", { pod: { ...prometheus, namespace: "default" } }, 9464, "TCP")).toBe(false);
  });

  it("let the services reach PostgreSQL and Kafka and the gateway Redis, wherever they are, and nobody else", () => {
    for (const s of SERVICES) {
      expect(canConnect(pod(s.name), { ip: PRIVATE }, 5432)).toBe(true);
      expect(canConnect(pod(s.name), { ip: PRIVATE }, 9092)).toBe(true);
      expect(canConnect(pod(s.name), { ip: PRIVATE }, 6379)).toBe(false);
    }
    expect(canConnect(pod("create-topics"), { ip: PRIVATE }, 9092)).toBe(true);
    expect(canConnect(pod("create-topics"), { ip: PRIVATE }, 5432)).toBe(false);
    for (const s of SERVICES) {
      expect(canConnect(pod("create-topics"), { pod: pod(s.name) }, GRPC)).toBe(false);
      expect(canConnect(pod(`migrate-${s.name}`), { ip: PRIVATE }, 5432)).toBe(true);
      expect(canConnect(pod(`migrate-${s.name}`), { ip: PRIVATE }, 9092)).toBe(false);
      expect(canConnect(pod(`migrate-${s.name}`), { pod: pod(s.name) }, GRPC)).toBe(false);
    }
    expect(canConnect(pod("gateway"), { ip: PRIVATE }, 6379)).toBe(true);
    expect(canConnect(pod("gateway"), { ip: PRIVATE }, 5432)).toBe(false);
    expect(canConnect(intruder, { ip: PRIVATE }, 5432)).toBe(false);
  });

  it("let out of the cluster only what reaches out: mail from identity, the chain's RPC from payments and escrow, sellers' public servers from fulfillment and webhooks", () => {
    const outside = (name: string, ip: string, port: number) => canConnect(pod(name), { ip }, port);
    expect(outside("identity", PUBLIC, 587)).toBe(true);
    expect(outside("identity", PUBLIC, 443)).toBe(false);
    expect(outside("payments", PUBLIC, 443)).toBe(true);
    expect(outside("payments", PUBLIC, 80)).toBe(false);
    // escrow reads arbiters' gas balances there, nothing else outside.
    expect(outside("escrow", PUBLIC, 443)).toBe(true);
    expect(outside("escrow", PUBLIC, 8443)).toBe(false);
    expect(outside("catalog", PUBLIC, 443)).toBe(false);
    expect(outside("gateway", PUBLIC, 443)).toBe(false);
    for (const name of ["fulfillment", "webhooks"]) {
      expect(outside(name, PUBLIC, 8443)).toBe(true);
      expect(outside(name, "2001:db8::1", 443)).toBe(true);
      for (const notPublic of [PRIVATE, "172.16.0.1", "192.168.1.1", "100.64.0.1", "169.254.169.254", "127.0.0.1", "fd00::1", "fe80::1"]) {
        expect({ name, notPublic, allowed: outside(name, notPublic, 443) }).toEqual({ name, notPublic, allowed: false });
      }
      // Other pods of the cluster neither, on any port.
      expect(canConnect(pod(name), { pod: pod("identity") }, 8443)).toBe(false);
    }
  });
});
