#!/usr/bin/env node
// The e2e suite clicks the OAuth consent in a real headless Chromium, driven
// by playwright-core, which cannot download a browser here: it uses Debian's
// `chromium` package. This installs it with apt-get when it is missing and
// the machine allows it (root, apt-get present); otherwise it says what to do.
// CHROMIUM_PATH names another binary.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

export const chromiumPath = () => process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function ensureChromium() {
  if (existsSync(chromiumPath())) return true;
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  if (!root || !existsSync("/usr/bin/apt-get")) {
    process.stderr.write(`chromium is missing at ${chromiumPath()}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH\n`);
    return false;
  }
  process.stderr.write("installing Debian's chromium for the browser tests ...\n");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  try {
    execFileSync("apt-get", ["update", "-qq"], { stdio: ["ignore", "inherit", "inherit"], env });
    execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: ["ignore", "inherit", "inherit"], env });
  } catch (err) {
    process.stderr.write(`chromium could not be installed: ${err.message}\n`);
  }
  return existsSync(chromiumPath());
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(ensureChromium() ? 0 : 1);
