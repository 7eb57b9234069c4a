import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { lintDockerfile } from "../src";

const root = resolve(__dirname, "../../..");
const PINNED = "node:20-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0";
/** A Dockerfile that passes every rule; each case below breaks one thing of it. */
const good = (lines: Partial<Record<"from" | "env" | "user" | "health" | "copy" | "cmd", string>> = {}) =>
  [
    `FROM ${PINNED} AS base`,
    "FROM base AS runtime",
    lines.env ?? "ENV NODE_ENV=production",
    lines.copy ?? "COPY . /app",
    lines.user ?? "USER 10001:10001",
    lines.health ?? "HEALTHCHECK CMD node probe.cjs",
    lines.cmd ?? 'CMD ["main.js"]',
  ].join("\n");
const rules = (text: string) => lintDockerfile(text).map((f) => `${f.rule}: ${f.message}`);

describe("the image's Dockerfile (deploy/docker/Dockerfile)", () => {
  it("passes every rule: base pinned by digest, numeric non-root USER, HEALTHCHECK, no secret in ENV/ARG, COPY, exec form", () => {
    expect(lintDockerfile(readFileSync(join(root, "deploy/docker/Dockerfile"), "utf8"))).toEqual([]);
    expect(lintDockerfile(good())).toEqual([]);
  });

  it("refuses a base image by tag alone, latest, no tag, or a build argument with no default", () => {
    expect(rules(`FROM node:20-bookworm-slim\nUSER 1000\nHEALTHCHECK CMD true`)).toEqual([
      "pinned-base: node:20-bookworm-slim: not pinned by digest (@sha256:…)",
    ]);
    expect(rules(`FROM node:latest\nUSER 1000\nHEALTHCHECK CMD true`)).toEqual([
      "pinned-base: node:latest: not pinned by digest (@sha256:…)",
      "pinned-base: node:latest: give a version tag, never latest",
    ]);
    expect(rules(`FROM node@sha256:${"a".repeat(64)}\nUSER 1000\nHEALTHCHECK CMD true`)).toEqual([
      `pinned-base: node@sha256:${"a".repeat(64)}: give a version tag, never latest`,
    ]);
    expect(rules(`ARG BASE\nFROM \${BASE}\nUSER 1000\nHEALTHCHECK CMD true`)).toEqual(["pinned-base: ${BASE}: a build argument without a default"]);
    // A default given in a global ARG is what the FROM uses; a later stage may name an earlier one.
    expect(rules(`ARG BASE=${PINNED}\nFROM \${BASE} AS a\nFROM a\nUSER 1000\nHEALTHCHECK CMD true`)).toEqual([]);
  });

  it("refuses a final stage that runs as root, by name, or with no USER", () => {
    expect(rules(good({ user: "USER root" }))).toEqual(["non-root-user: USER root: use a numeric, non-zero UID"]);
    expect(rules(good({ user: "USER 0:0" }))).toEqual(["non-root-user: USER 0:0: use a numeric, non-zero UID"]);
    expect(rules(good({ user: "USER node" }))).toEqual(["non-root-user: USER node: use a numeric, non-zero UID"]);
    expect(rules(good({ user: "" }))).toEqual(["non-root-user: the final stage sets no USER (it would run as root)"]);
  });

  it("refuses a missing or disabled HEALTHCHECK", () => {
    expect(rules(good({ health: "" }))).toEqual(["healthcheck: the final stage has no HEALTHCHECK"]);
    expect(rules(good({ health: "HEALTHCHECK NONE" }))).toEqual(["healthcheck: the final stage has no HEALTHCHECK"]);
  });

  it("refuses secret-looking ENV and ARG, ADD, and shell-form CMD", () => {
    expect(rules(good({ env: "ENV NODE_ENV=production FACILITATOR_PRIVATE_KEY=0xabc" }))).toEqual([
      "secret-in-build: ENV FACILITATOR_PRIVATE_KEY: secrets belong in the runtime environment, not in the image",
    ]);
    expect(rules(good({ env: "ARG NPM_TOKEN" }))).toEqual(["secret-in-build: ARG NPM_TOKEN: secrets belong in the runtime environment, not in the image"]);
    expect(rules(good({ copy: "ADD . /app" }))).toEqual(["copy-not-add: use COPY (ADD also fetches URLs and unpacks archives)"]);
    expect(rules(good({ cmd: "CMD node main.js" }))).toEqual(["exec-form: CMD in shell form: signals would reach the shell, not Node"]);
  });
});
