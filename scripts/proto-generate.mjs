#!/usr/bin/env node
// Regenerates packages/contracts/src/gen from proto/ with buf and the local
// protoc-gen-es plugin. With --check it generates into a scratch folder and
// fails when the committed code differs (stale contracts), and runs
// `buf breaking` (WIRE_JSON) against the previous commit: a field removed
// without reserving its number and name, or a type changed, fails the check.
//
// The contracts import protovalidate's buf/validate/validate.proto. The BSR
// (buf.build) is not reachable from where this runs, so the file comes from
// Maven Central, from the official protovalidate Java jar, which ships it; it
// is put in proto/.deps (not committed), a second module of the workspace.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";

/** Keep in step with @bufbuild/protovalidate in packages/contracts/package.json (the runtime that reads these rules). */
const PROTOVALIDATE_VERSION = "1.3.0";

const root = new URL("..", import.meta.url).pathname;
const protoDir = join(root, "proto");
const depsDir = join(protoDir, ".deps");
const committed = join(root, "packages/contracts/src/gen");
const check = process.argv.includes("--check");
const bin = join(root, "node_modules/.bin");
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
const buf = (args, cwd = protoDir) => execFileSync(join(bin, "buf"), args, { cwd, stdio: "inherit", env });

/** proto/.deps/buf/validate/validate.proto from the protovalidate jar on Maven Central (fetched once into ~/.m2). */
function ensureProtoDeps() {
  const target = join(depsDir, "buf/validate/validate.proto");
  const marker = join(depsDir, `.protovalidate-${PROTOVALIDATE_VERSION}`);
  if (existsSync(target) && existsSync(marker)) return;
  const repo = process.env.MAVEN_REPO ?? join(homedir(), ".m2/repository");
  const jar = join(repo, `build/buf/protovalidate/${PROTOVALIDATE_VERSION}/protovalidate-${PROTOVALIDATE_VERSION}.jar`);
  if (!existsSync(jar)) {
    console.log(`proto: fetching build.buf:protovalidate:${PROTOVALIDATE_VERSION} from Maven Central (for buf/validate/validate.proto)`);
    execFileSync(
      process.env.MVN ?? "mvn",
      [
        "-q",
        "-B",
        "-Dstyle.color=never",
        "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get",
        `-Dartifact=build.buf:protovalidate:${PROTOVALIDATE_VERSION}`,
        "-Dtransitive=false",
      ],
      { stdio: "inherit" },
    );
  }
  const scratch = mkdtempSync(join(tmpdir(), "c402-protovalidate-"));
  execFileSync("jar", ["xf", jar, "buf/validate/validate.proto"], { cwd: scratch, stdio: "inherit" });
  rmSync(depsDir, { recursive: true, force: true });
  mkdirSync(join(depsDir, "buf/validate"), { recursive: true });
  cpSync(join(scratch, "buf/validate/validate.proto"), target);
  writeFileSync(marker, "");
  rmSync(scratch, { recursive: true, force: true });
}

/** Our own proto folders (the generated code covers these, not the dependencies). */
const ownPathsOf = (dir) => readdirSync(dir).filter((name) => !name.startsWith(".") && statSync(join(dir, name)).isDirectory());
const ownPaths = () => ownPathsOf(protoDir);

const git = (args) => execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/**
 * `buf breaking` against the previous commit (HEAD~1 when proto/ is as
 * committed, as in CI; HEAD when it has uncommitted changes). The previous
 * contracts are built into an image in a scratch copy, with the same deps.
 */
function breakingAgainstPrevious() {
  let against;
  try {
    against = git(["diff", "--quiet", "HEAD", "--", "proto"]) === "" ? "HEAD~1" : "HEAD";
  } catch {
    against = "HEAD";
  }
  const scratch = mkdtempSync(join(tmpdir(), "c402-proto-prev-"));
  try {
    try {
      execFileSync("sh", ["-c", `git archive "${against}" proto | tar -x -C "${scratch}"`], { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    } catch {
      console.log(`contracts: no ${against} to compare with; buf breaking skipped`);
      return;
    }
    const previous = join(scratch, "proto");
    if (!existsSync(join(previous, "buf.yaml"))) {
      console.log(`contracts: ${against} has no buf workspace; buf breaking skipped`);
      return;
    }
    if (readFileSync(join(previous, "buf.yaml"), "utf8").includes(".deps")) cpSync(depsDir, join(previous, ".deps"), { recursive: true });
    // Both sides as single images of our own files (the workspace has two modules; the deps are not ours to check).
    const image = (dir, name) => {
      const file = join(scratch, name);
      buf(["build", "-o", file, ...ownPathsOf(dir).flatMap((p) => ["--path", p])], dir);
      return file;
    };
    const before = image(previous, "previous.binpb");
    const now = image(protoDir, "current.binpb");
    buf([
      "breaking",
      now,
      "--against",
      before,
      "--exclude-imports",
      "--config",
      readFileSync(join(protoDir, "buf.yaml"), "utf8").replace(/^modules:[\s\S]*?^(?=lint:)/m, ""),
    ]);
    console.log(`contracts: no breaking change against ${against} (buf breaking, WIRE_JSON)`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

ensureProtoDeps();
buf(["lint"]);

let out = committed;
let template = readFileSync(join(protoDir, "buf.gen.yaml"), "utf8");
if (check) {
  out = mkdtempSync(join(tmpdir(), "c402-proto-"));
  template = template.replace("../packages/contracts/src/gen", out);
}
const templateFile = join(mkdtempSync(join(tmpdir(), "c402-buf-")), "buf.gen.yaml");
writeFileSync(templateFile, template);
buf(["generate", "--template", templateFile, ...ownPaths().flatMap((p) => ["--path", p])]);

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
  if (stale) console.error(`generated contracts in ${relative(root, committed)} are stale: run npm run proto:generate`);
  else console.log("contracts: generated code is up to date");
  breakingAgainstPrevious();
  if (stale) process.exit(1);
}
