#!/usr/bin/env node
// Installs the workspace's dependencies with the pinned pnpm when they are
// missing or older than the lockfile, so `npm start` and `npm test` work on a
// fresh machine that has only Node 20.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const marker = join(root, "node_modules/.modules.yaml");
const lock = join(root, "pnpm-lock.yaml");
const pnpm = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).packageManager;

if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) process.exit(0);
process.stderr.write(`installing dependencies with ${pnpm} ...\n`);
execFileSync("npx", ["-y", pnpm, "install", "--frozen-lockfile"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
