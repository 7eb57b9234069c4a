/**
 * Writes the deploy files generated from the service list (packages/topology)
 * and the services' config defaults: deploy/docker/provision.sql,
 * deploy/docker/docker-compose.yml and k8s/base/{configmap,secret,grpc-services,gateway}.yaml.
 * With --check it writes nothing and fails when a committed file is stale.
 *
 *   npm run deploy:generate      # after changing packages/topology or a default
 *   npm run deploy:check         # CI (.ci/run)
 */
import { resolve } from "node:path";
import { deployFiles, staleDeployFiles, writeDeployFiles } from "../deploy/files/src";

const root = resolve(__dirname, "..");

if (process.argv.includes("--check")) {
  const stale = staleDeployFiles(root);
  if (stale.length > 0) {
    console.error(`deploy files are stale (${stale.join(", ")}): run npm run deploy:generate`);
    process.exit(1);
  }
  console.log(`deploy files: ${deployFiles().length} generated files are up to date`);
} else {
  const changed = writeDeployFiles(root);
  console.log(changed.length > 0 ? `deploy files: wrote ${changed.join(", ")}` : "deploy files: already up to date");
}
