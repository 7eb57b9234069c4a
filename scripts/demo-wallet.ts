import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";

/** A demo wallet kept in a file (mode 0600), created on first use. For local demos only. */
export function demoWallet(file: string): PrivateKeyAccount {
  if (existsSync(file)) return privateKeyToAccount(JSON.parse(readFileSync(file, "utf8")).privateKey);
  const privateKey = generatePrivateKey();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ privateKey }), { mode: 0o600 });
  return privateKeyToAccount(privateKey);
}
