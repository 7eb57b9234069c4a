#!/usr/bin/env node
/**
 * Validates Kubernetes objects against the Kubernetes API's own schemas
 * (kubernetes-models, generated from the OpenAPI of Kubernetes 1.32):
 *
 *   node deploy/files/bin/validate-k8s.mjs k8s/overlays/production k8s/overlays/local
 *   kubectl kustomize k8s/overlays/local | node deploy/files/bin/validate-k8s.mjs -
 *
 * Each argument is a kustomization directory rendered with `kubectl kustomize`,
 * or `-` for YAML on standard input. Prints one JSON line per source,
 * {source, objects, errors: [{kind, name, error}]}, and exits 1 when any object
 * is invalid or of a kind it has no schema for. An ES module because
 * kubernetes-models is published as ES modules only (Jest here runs CommonJS).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadAll } from "js-yaml";

async function validate(source) {
  const text = source === "-" ? readFileSync(0, "utf8") : execFileSync("kubectl", ["kustomize", source], { encoding: "utf8" });
  const objects = loadAll(text).filter((o) => o !== null && o !== undefined);
  const errors = [];
  for (const object of objects) {
    const kind = object?.kind;
    const name = object?.metadata?.name;
    try {
      const models = await import(`kubernetes-models/${object.apiVersion}`).catch(() => ({}));
      const Model = models[kind];
      if (typeof Model !== "function") throw new Error(`no schema for ${object.apiVersion} ${kind}`);
      new Model(object).validate();
    } catch (err) {
      errors.push({ kind, name, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return { source, objects: objects.length, errors };
}

const sources = process.argv.slice(2);
if (sources.length === 0) {
  process.stderr.write("usage: validate-k8s.mjs <kustomization dir | -> ...\n");
  process.exit(2);
}
let failed = false;
for (const source of sources) {
  const result = await validate(source);
  failed ||= result.errors.length > 0 || result.objects === 0;
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
process.exit(failed ? 1 : 0);
