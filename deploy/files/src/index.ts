import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GATEWAY, SERVICES, topologyProblems } from "@c402/topology";
import { dockerCompose } from "./compose";
import { serviceDefaults } from "./defaults";
import { configMapYaml, gatewayYaml, grpcServicesYaml, jobsYaml, secretYaml } from "./kubernetes";
import { configurationDoc } from "./configuration";
import { networkPoliciesYaml } from "./network-policies";
import { provisionSql } from "./provision-sql";

export { atDefault, serviceDefaults, type ServiceDefaults } from "./defaults";
export { devSecret } from "./compose";
export { devPassword } from "./provision-sql";
export { configurationDoc, PROCESS_CONFIG_SPECS } from "./configuration";
export { lintDockerfile, type DockerfileFinding } from "./dockerfile-lint";
export { DEPENDENCY_PORTS, NOT_PUBLIC_V4, NOT_PUBLIC_V6 } from "./network-policies";

/** A file generated from the service list: its path from the repository root and its content. */
export interface DeployFile {
  path: string;
  content: string;
}

/** Every file generated from the service list (packages/topology) and the services' config defaults. */
export function deployFiles(): DeployFile[] {
  const problems = topologyProblems();
  if (problems.length > 0) throw new Error(`the service list is inconsistent:\n  - ${problems.join("\n  - ")}`);
  const defaults = serviceDefaults();
  return [
    { path: "deploy/docker/provision.sql", content: provisionSql(SERVICES) },
    { path: "deploy/docker/docker-compose.yml", content: dockerCompose(SERVICES, defaults, GATEWAY) },
    { path: "k8s/base/configmap.yaml", content: configMapYaml(SERVICES, defaults) },
    { path: "k8s/base/secret.yaml", content: secretYaml(SERVICES) },
    { path: "k8s/base/grpc-services.yaml", content: grpcServicesYaml(SERVICES) },
    { path: "k8s/base/gateway.yaml", content: gatewayYaml(defaults, GATEWAY) },
    { path: "k8s/base/jobs.yaml", content: jobsYaml(SERVICES) },
    { path: "k8s/base/network-policies.yaml", content: networkPoliciesYaml(SERVICES, GATEWAY, defaults) },
    { path: "docs/configuration.md", content: configurationDoc() },
  ];
}

/** The generated files whose committed copy under `root` differs from what the generator writes now. */
export function staleDeployFiles(root: string): string[] {
  return deployFiles()
    .filter((f) => {
      try {
        return readFileSync(join(root, f.path), "utf8") !== f.content;
      } catch {
        return true;
      }
    })
    .map((f) => f.path);
}

/** Writes every generated file under `root`; returns the paths that changed. */
export function writeDeployFiles(root: string): string[] {
  const stale = staleDeployFiles(root);
  for (const f of deployFiles()) if (stale.includes(f.path)) writeFileSync(join(root, f.path), f.content);
  return stale;
}
