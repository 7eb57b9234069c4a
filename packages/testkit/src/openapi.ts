import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";

/**
 * Validates an OpenAPI document against the official OpenAPI JSON Schemas
 * (3.0, 3.1, 3.2) with @seriousme/openapi-schema-validator. That package is
 * ESM only, which Jest's CommonJS runtime cannot load, so it runs in a child
 * Node process that reads the document on stdin.
 */
export function validateOpenApiDocument(doc: unknown): { valid: boolean; version: string | undefined; errors: unknown } {
  const validator = pathToFileURL(require.resolve("@seriousme/openapi-schema-validator")).href;
  const script = `
    import { Validator } from ${JSON.stringify(validator)};
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(input));
    process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? null }));
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { input: JSON.stringify(doc), encoding: "utf8", timeout: 60_000 });
  if (run.status !== 0) throw new Error(`the OpenAPI validator failed to run: ${run.stderr || run.error?.message}`);
  return JSON.parse(run.stdout) as { valid: boolean; version: string | undefined; errors: unknown };
}
