#!/usr/bin/env node
// Regenerates packages/contracts/src/gen from proto/ with buf and the local
// protoc-gen-es plugin. With --check it generates into a scratch folder and
// fails when the committed code differs (stale contracts).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, statSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const protoDir = join(root, "proto");
const committed = join(root, "packages/contracts/src/gen");
const check = process.argv.includes("--check");
const bin = join(root, "node_modules/.bin");
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };

execFileSync(join(bin, "buf"), ["lint"], { cwd: protoDir, stdio: "inherit", env });

let out = committed;
let template = readFileSync(join(protoDir, "buf.gen.yaml"), "utf8");
if (check) {
  out = mkdtempSync(join(tmpdir(), "c402-proto-"));
  template = template.replace("../packages/contracts/src/gen", out);
}
const templateFile = join(mkdtempSync(join(tmpdir(), "c402-buf-")), "buf.gen.yaml");
writeFileSync(templateFile, template);
execFileSync(join(bin, "buf"), ["generate", "--template", templateFile], { cwd: protoDir, stdio: "inherit", env });

if (check) {
  const list = (dir) =>
    readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => statSync(join(dir, f)).isFile())
      .sort();
  const a = list(committed);
  const b = list(out);
  const stale = a.length !== b.length || a.some((f, i) => f !== b[i] || readFileSync(join(committed, f), "utf8") !== readFileSync(join(out, f), "utf8"));
  rmSync(out, { recursive: true, force: true });
  if (stale) {
    console.error(`generated contracts in ${relative(root, committed)} are stale: run pnpm proto:generate`);
    process.exit(1);
  }
  console.log("contracts: generated code is up to date");
}
