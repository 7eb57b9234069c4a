#!/usr/bin/env node
/**
 * Every image the deploy files build from deploy/docker/Dockerfile, one line
 * each: `<tag> [<target>]` (no target: the Dockerfile's last stage, the
 * runtime). Read from docker-compose.yml's services with a `build` section;
 * each image the Kubernetes base runs must be one of those (by name), or this
 * fails, so an image added to the manifests cannot go unbuilt in CI.
 *
 *   node deploy/files/bin/built-images.mjs     # from anywhere
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { load, loadAll } from "js-yaml";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const DOCKERFILE = "deploy/docker/Dockerfile";

const compose = load(readFileSync(join(root, "deploy/docker/docker-compose.yml"), "utf8"));
const built = new Map();
for (const [service, spec] of Object.entries(compose.services ?? {})) {
  if (!spec?.build) continue;
  if (join("deploy/docker", spec.build.context ?? ".", spec.build.dockerfile ?? "Dockerfile") !== DOCKERFILE)
    throw new Error(`compose service ${service} builds from another Dockerfile than ${DOCKERFILE}`);
  if (!spec.image) throw new Error(`compose service ${service} builds an image without a name`);
  built.set(spec.image, spec.build.target ?? "");
}

const repository = (image) => image.replace(/[:@].*$/, "");
const k8sDir = join(root, "k8s/base");
for (const file of readdirSync(k8sDir).filter((f) => f.endsWith(".yaml"))) {
  for (const object of loadAll(readFileSync(join(k8sDir, file), "utf8"))) {
    const pod = object?.spec?.template?.spec ?? object?.spec?.jobTemplate?.spec?.template?.spec;
    for (const container of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
      // Kubernetes runs the runtime stage: the image compose builds with no target under the same name.
      const match = [...built].find(([tag, target]) => repository(tag) === repository(container.image) && target === "");
      if (!match) throw new Error(`k8s/base/${file}: ${container.image} is not an image docker-compose.yml builds from ${DOCKERFILE}`);
    }
  }
}

for (const [tag, target] of built) process.stdout.write(`${tag}${target ? ` ${target}` : ""}\n`);
