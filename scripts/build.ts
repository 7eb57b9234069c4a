/**
 * The image's JavaScript: every program (each service, the gateway, the topics
 * job: @c402/topology's `programs()`) bundled by esbuild into one CommonJS file
 * each, dist/<program>.cjs with its source map, the workspace's code and almost
 * every dependency inlined, so the image runs no compiler and carries no
 * development dependency. The few packages that read their own files at run
 * time stay outside (EXTERNAL); dist/package.json pins their installed versions
 * for `npm install --omit=dev` in the image, and nothing else is installed.
 *
 *   npm run build [-- --out <dir>]
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { build } from "esbuild";
import { builtFile, programs } from "@c402/topology";

const root = resolve(__dirname, "..");

/** Packages that load their own files at run time (a .proto, a UI's assets, a wasm) or that one of those shares objects with. */
export const EXTERNAL = {
  "grpc-health-check": "packages/rpc", // loads health/v1/health.proto from its package
  "@grpc/grpc-js": "packages/rpc", // grpc-health-check registers on our server: one copy of grpc-js for both
  "swagger-ui-dist": "services/gateway", // the API reference page serves its files
} as const;

/** The installed version of an external, as the workspace package that uses it resolves it. */
function installedVersion(name: string, from: string): string {
  const req = createRequire(join(root, from, "package.json"));
  const pkg = JSON.parse(readFileSync(join(dirname(req.resolve(`${name}/package.json`)), "package.json"), "utf8")) as { version: string };
  return pkg.version;
}

async function main(): Promise<void> {
  const outIndex = process.argv.indexOf("--out");
  const out = outIndex > 0 ? resolve(process.argv[outIndex + 1] as string) : join(root, "dist");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const [program, entry] of Object.entries(programs())) {
    const started = Date.now();
    await build({
      entryPoints: [join(root, entry)],
      outfile: join(out, builtFile(program).replace(/^dist\//, "")),
      bundle: true,
      platform: "node",
      target: "node20",
      format: "cjs",
      sourcemap: true,
      // The embedded database is never opened by a distributed process.
      external: [...Object.keys(EXTERNAL), "@electric-sql/pglite"],
      logLevel: "warning",
      legalComments: "none",
    });
    process.stdout.write(`build: ${builtFile(program)} (${entry}) in ${Date.now() - started} ms\n`);
  }
  const dependencies = Object.fromEntries(Object.entries(EXTERNAL).map(([name, from]) => [name, installedVersion(name, from)]));
  writeFileSync(
    join(out, "package.json"),
    `${JSON.stringify({ name: "c402-image", private: true, description: "What the built programs load at run time (scripts/build.ts)", dependencies }, null, 2)}\n`,
  );
  process.stdout.write(
    `build: dist/package.json (${Object.entries(dependencies)
      .map(([n, v]) => `${n}@${v}`)
      .join(", ")})\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
