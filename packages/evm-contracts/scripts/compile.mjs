#!/usr/bin/env node
// Compiles contracts/*.sol with solc-js (the npm package's bundled soljson: nothing is
// downloaded), writes artifacts/<Contract>.json and regenerates src/artifacts.ts.
// `--check` compiles in memory and exits 1 when the committed files differ.
// Output is reproducible: no metadata hash or CBOR trailer, sorted keys, Prettier-formatted.
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const solc = require("solc");
const prettier = await import("prettier");

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const contractsDir = join(pkgDir, "contracts");
const artifactsDir = join(pkgDir, "artifacts");
const tsOut = join(pkgDir, "src", "artifacts.ts");

/** The contracts exported as artifacts (other contracts and libraries are build inputs only). */
const EXPORTED = ["TestUSDC", "PaySplit", "SplitFactory", "Multicall3", "TestSmartWallet", "TestGasBurningWallet", "C402Escrow", "TestReentrantToken"];
/** Placed on the devchain with `hardhat_setCode` (no constructor run): their runtime code must not hold immutables. */
const SET_CODE = ["TestUSDC", "SplitFactory", "Multicall3", "C402Escrow"];

const check = process.argv.includes("--check");

function readSources() {
  const sources = {};
  for (const file of readdirSync(contractsDir).sort()) {
    if (file.endsWith(".sol")) sources[`contracts/${file}`] = { content: readFileSync(join(contractsDir, file), "utf8") };
  }
  return sources;
}

/** Resolves `@openzeppelin/...` (and any other package import) from node_modules; local paths from the package. */
function findImports(path) {
  try {
    if (path.startsWith("contracts/")) return { contents: readFileSync(join(pkgDir, path), "utf8") };
    const [scope, name, ...rest] = path.split("/");
    const pkg = scope.startsWith("@") ? `${scope}/${name}` : scope;
    const sub = scope.startsWith("@") ? rest : [name, ...rest];
    const root = dirname(require.resolve(`${pkg}/package.json`));
    return { contents: readFileSync(join(root, ...sub), "utf8") };
  } catch (err) {
    return { error: `cannot resolve import ${path}: ${err.message}` };
  }
}

function compile() {
  const input = {
    language: "Solidity",
    sources: readSources(),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      viaIR: true,
      metadata: { bytecodeHash: "none", appendCBOR: false },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "evm.deployedBytecode.immutableReferences"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  for (const e of output.errors ?? []) process.stderr.write(`${e.formattedMessage ?? e.message}\n`);
  if (errors.length > 0) {
    process.stderr.write(`compilation failed (${errors.length} error(s))\n`);
    process.exit(1);
  }
  const found = {};
  for (const [source, contracts] of Object.entries(output.contracts ?? {})) {
    for (const [contractName, c] of Object.entries(contracts)) {
      if (!EXPORTED.includes(contractName)) continue;
      if (SET_CODE.includes(contractName) && Object.keys(c.evm.deployedBytecode.immutableReferences ?? {}).length > 0) {
        throw new Error(`${contractName} is placed with hardhat_setCode, so it must not use immutables`);
      }
      if (found[contractName]) throw new Error(`contract ${contractName} is defined twice (${found[contractName].source}, ${source})`);
      found[contractName] = {
        source,
        artifact: {
          contractName,
          abi: c.abi,
          bytecode: `0x${c.evm.bytecode.object}`,
          deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
        },
      };
    }
  }
  for (const name of EXPORTED) if (!found[name]) throw new Error(`contract ${name} not found in the sources`);
  return EXPORTED.map((name) => found[name].artifact);
}

/** Deep copy with object keys sorted (array order is kept: it is meaningful in an ABI). */
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys(value[k])]),
    );
  }
  return value;
}

async function format(text, filepath, parser) {
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(text, { ...options, filepath, parser });
}

async function render(artifacts) {
  const files = new Map();
  for (const a of artifacts) {
    const path = join(artifactsDir, `${a.contractName}.json`);
    files.set(path, await format(JSON.stringify(sortKeys(a), null, 2), path, "json"));
  }
  const lines = [
    "// Generated by scripts/compile.mjs from contracts/*.sol: do not edit; run `pnpm --filter @c402/evm-contracts compile`.",
    `// solc ${solc.version()}, optimizer 200 runs, evmVersion cancun, no metadata trailer.`,
    "",
    "type Hex = `0x${string}`;",
    "",
  ];
  for (const a of artifacts) {
    const abi = JSON.stringify(sortKeys(a.abi));
    lines.push(
      `export const ${a.contractName} = {`,
      `  contractName: ${JSON.stringify(a.contractName)},`,
      `  abi: ${abi},`,
      `  bytecode: ${JSON.stringify(a.bytecode)} as Hex,`,
      `  deployedBytecode: ${JSON.stringify(a.deployedBytecode)} as Hex,`,
      "} as const;",
      "",
    );
  }
  files.set(tsOut, await format(lines.join("\n"), tsOut, "typescript"));
  return files;
}

const files = await render(compile());

if (check) {
  const stale = [];
  for (const [path, text] of files) {
    if (!existsSync(path) || readFileSync(path, "utf8") !== text) stale.push(relative(pkgDir, path));
  }
  const expected = new Set([...files.keys()].filter((p) => p.startsWith(artifactsDir)));
  if (existsSync(artifactsDir)) {
    for (const f of readdirSync(artifactsDir)) {
      const path = join(artifactsDir, f);
      if (f.endsWith(".json") && !expected.has(path)) stale.push(`${relative(pkgDir, path)} (no such contract)`);
    }
  }
  if (stale.length > 0) {
    process.stderr.write(`compiled contracts differ from the committed artifacts (run the compile script):\n  ${stale.join("\n  ")}\n`);
    process.exit(1);
  }
  process.stdout.write(`artifacts up to date (solc ${solc.version()})\n`);
} else {
  mkdirSync(artifactsDir, { recursive: true });
  for (const [path, text] of files) writeFileSync(path, text);
  for (const [path, text] of files) {
    if (path.startsWith(artifactsDir)) {
      const a = JSON.parse(text);
      process.stdout.write(`${a.contractName}: ${(a.bytecode.length - 2) / 2} bytes init, ${(a.deployedBytecode.length - 2) / 2} bytes runtime\n`);
    }
  }
  process.stdout.write(`wrote ${relative(pkgDir, artifactsDir)}/ and ${relative(pkgDir, tsOut)} (solc ${solc.version()})\n`);
}
