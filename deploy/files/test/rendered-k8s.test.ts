import { execFileSync, spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { SERVICES } from "@c402/topology";
import { loadAll } from "js-yaml";

/**
 * The overlays as a cluster would receive them (`kubectl kustomize`, which CI's
 * machines have), checked against the Kubernetes API schemas and against the
 * workload rules kube-linter and checkov apply. Rules that do not hold are
 * either fixed in the generator or justified in k8s/README.md.
 */
const root = resolve(__dirname, "../../..");
const validator = join(root, "deploy/files/bin/validate-k8s.mjs");
const OVERLAYS = ["local", "production"] as const;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: any;
}

function render(overlay: string): K8sObject[] {
  const text = execFileSync("kubectl", ["kustomize", join(root, "k8s/overlays", overlay)], { encoding: "utf8" });
  return (loadAll(text) as K8sObject[]).filter(Boolean);
}

function validate(
  args: string[],
  input?: string,
): { code: number | null; results: { source: string; objects: number; errors: { kind: string; name: string; error: string }[] }[] } {
  const run = spawnSync(process.execPath, [validator, ...args], { cwd: root, encoding: "utf8", input });
  return {
    code: run.status,
    results: run.stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  };
}

const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe("the rendered Kubernetes overlays", () => {
  it("are valid against the Kubernetes API schemas, every object of both overlays", () => {
    const { code, results } = validate(OVERLAYS.map((o) => `k8s/overlays/${o}`));
    expect(results.map((r) => ({ source: r.source, errors: r.errors }))).toEqual(OVERLAYS.map((o) => ({ source: `k8s/overlays/${o}`, errors: [] })));
    for (const r of results) expect(r.objects).toBeGreaterThan(20);
    expect(code).toBe(0);
  });

  it("fail the schema check when an object is wrong or of an unknown kind", () => {
    const broken = [
      "apiVersion: apps/v1",
      "kind: Deployment",
      "metadata: {name: broken}",
      "spec: {selector: {}, template: {spec: {containers: [{name: a, image: 'b:1', startupProbe: {grpc: {port: grpc}}}]}}}",
      "---",
      "apiVersion: example.com/v1",
      "kind: Widget",
      "metadata: {name: w}",
    ].join("\n");
    const { code, results } = validate(["-"], broken);
    expect(code).toBe(1);
    expect(results[0]!.errors).toEqual([
      { kind: "Deployment", name: "broken", error: expect.stringContaining("startupProbe/grpc/port must be integer") },
      { kind: "Widget", name: "w", error: "no schema for example.com/v1 Widget" },
    ]);
  });

  describe.each(OVERLAYS)("%s", (overlay) => {
    const objects = render(overlay);
    const of = (kind: string) => objects.filter((o) => o.kind === kind);
    const deployments = of("Deployment");
    /** Everything that runs pods: the Deployments and the Jobs. */
    const workloads = [...deployments, ...of("Job")];

    it("runs every pod as non-root (UID ≥ 10000), with seccomp RuntimeDefault, no host namespaces and no service account token", () => {
      expect(
        of("Job")
          .map((j) => j.metadata.name)
          .sort(),
      ).toEqual(["create-topics", ...SERVICES.map((s) => `migrate-${s.name}`)].sort());
      for (const d of workloads) {
        const pod = d.spec.template.spec;
        expect({ name: d.metadata.name, automount: pod.automountServiceAccountToken }).toEqual({ name: d.metadata.name, automount: false });
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
        expect(pod.securityContext.runAsUser).toBeGreaterThanOrEqual(10_000);
        for (const host of ["hostNetwork", "hostPID", "hostIPC"]) expect(pod[host]).not.toBe(true);
        const account = of("ServiceAccount").find((s) => s.metadata.name === pod.serviceAccountName);
        expect({ name: d.metadata.name, account: account?.metadata.name, automount: account?.automountServiceAccountToken }).toEqual({
          name: d.metadata.name,
          account: d.metadata.name,
          automount: false,
        });
      }
    });

    it("locks every container down: read-only root, no privilege escalation, every capability dropped, none added", () => {
      for (const d of workloads) {
        for (const c of d.spec.template.spec.containers) {
          expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
          expect(c.securityContext.privileged).not.toBe(true);
          expect(c.securityContext.capabilities.add).toBeUndefined();
        }
      }
    });

    it("gives every container requests and limits for CPU and memory, three probes, and an image pinned to a tag that is not latest", () => {
      for (const d of workloads) {
        for (const c of d.spec.template.spec.containers) {
          for (const bound of ["requests", "limits"]) expect(Object.keys(c.resources[bound]).sort()).toEqual(["cpu", "memory"]);
          // A Job runs to completion: nothing to probe.
          if (d.kind === "Job") expect(c.startupProbe ?? c.readinessProbe ?? c.livenessProbe).toBeUndefined();
          else
            for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"])
              expect({ name: d.metadata.name, probe, set: c[probe] !== undefined }).toEqual({ name: d.metadata.name, probe, set: true });
          const tag = /:([^/:]+)$/.exec(c.image)?.[1];
          expect({ image: c.image, tagged: tag !== undefined && tag !== "latest" }).toEqual({ image: c.image, tagged: true });
        }
      }
    });

    it("covers every workload with a PodDisruptionBudget and every Service, Ingress and autoscaler with something to point at", () => {
      const pods = deployments.map((d) => ({ name: d.metadata.name, labels: d.spec.template.metadata.labels as Record<string, string> }));
      for (const d of deployments) {
        const budgets = of("PodDisruptionBudget").filter((b) => matches(b.spec.selector.matchLabels, d.spec.template.metadata.labels));
        expect({ name: d.metadata.name, budgets: budgets.length }).toEqual({ name: d.metadata.name, budgets: 1 });
        expect(budgets[0]!.spec.maxUnavailable).toBe(1);
      }
      for (const s of of("Service")) {
        const selected = pods.filter((p) => matches(s.spec.selector, p.labels));
        expect({ service: s.metadata.name, pods: selected.map((p) => p.name) }).toEqual({ service: s.metadata.name, pods: [s.metadata.name] });
        const target = deployments
          .find((d) => d.metadata.name === s.metadata.name)!
          .spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name);
        for (const port of s.spec.ports) expect(target).toContain(port.targetPort);
      }
      for (const ingress of of("Ingress")) {
        for (const rule of ingress.spec.rules) {
          for (const path of rule.http.paths) {
            const backend = of("Service").find((s) => s.metadata.name === path.backend.service.name);
            expect(backend?.spec.ports.map((p: { name: string }) => p.name)).toContain(path.backend.service.port.name);
          }
        }
      }
      expect(of("Ingress").map((i) => i.metadata.name)).toEqual(["gateway"]);
      for (const hpa of of("HorizontalPodAutoscaler")) expect(deployments.map((d) => d.metadata.name)).toContain(hpa.spec.scaleTargetRef.name);
    });

    it("refers only to ConfigMaps and Secret keys that exist (the production Secret comes from outside)", () => {
      const configMaps = of("ConfigMap").map((c) => c.metadata.name);
      const secrets = of("Secret");
      if (overlay === "production") expect(secrets).toEqual([]);
      for (const d of workloads) {
        for (const c of d.spec.template.spec.containers) {
          for (const from of c.envFrom ?? []) expect(configMaps).toContain(from.configMapRef.name);
          for (const e of (c.env ?? []).filter((x: { valueFrom?: unknown }) => x.valueFrom)) {
            const ref = e.valueFrom.secretKeyRef;
            expect(ref.name).toBe("c402-secrets");
            if (overlay === "local") expect(Object.keys(secrets[0]!.stringData)).toContain(ref.key);
          }
        }
      }
    });

    if (overlay === "production") {
      it("runs at least two replicas of everything, so a disruption budget of one keeps the service up", () => {
        for (const d of deployments) expect({ name: d.metadata.name, replicas: d.spec.replicas >= 2 }).toEqual({ name: d.metadata.name, replicas: true });
      });

      it("creates the topics with three replicas", () => {
        expect(of("ConfigMap")[0]!.data).toMatchObject({ KAFKA_TOPIC_REPLICATION_FACTOR: "3", KAFKA_TOPIC_PARTITIONS: "3" });
        const job = of("Job").find((j) => j.metadata.name === "create-topics")!.spec.template.spec;
        expect(job.containers[0].args).toEqual(["dist/create-topics.cjs"]);
        expect(job.restartPolicy).toBe("OnFailure");
      });
    }
  });
});
