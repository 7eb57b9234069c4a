import type { SecretSealer } from "@c402/sealed-secrets";
import type { ChainReader } from "../chain/chain-readers";
import type { KeyRotation } from "./key-rotation";
import type { WalletChain } from "./ports";

export interface SelfCheckProblem {
  component: "keyring" | "base" | "solana" | "database";
  message: string;
}

/** How long a chain's RPC may take to answer the self-check. */
const RPC_TIMEOUT_MS = 3_000;

/**
 * What is wrong now (GET /v1/spending-wallets/health): the keyring cannot seal
 * and open, a chain's RPC does not answer, wallets are still sealed under a
 * retired key (the old key must not be dropped yet). Never names a secret.
 */
export async function selfCheck(o: {
  sealer: SecretSealer;
  chains: ReadonlyMap<WalletChain, ChainReader>;
  rotation: KeyRotation;
}): Promise<SelfCheckProblem[]> {
  const problems: SelfCheckProblem[] = [];
  try {
    const probe = "self-check";
    if (o.sealer.open(o.sealer.seal(probe, "spending-wallets/self-check"), "spending-wallets/self-check") !== probe) throw new Error("round trip differs");
  } catch {
    problems.push({ component: "keyring", message: "SPENDING_WALLETS_KEYRING cannot seal and open a secret" });
  }
  await Promise.all(
    [...o.chains.values()].map(async (reader) => {
      try {
        await reader.ping(RPC_TIMEOUT_MS);
      } catch {
        problems.push({ component: reader.chain, message: `the ${reader.chain} RPC (${reader.network}) did not answer within ${RPC_TIMEOUT_MS} ms` });
      }
    }),
  );
  try {
    const retired = await o.rotation.stillRetired();
    if (retired.count > 0) {
      problems.push({ component: "keyring", message: `${retired.count} wallet(s) still sealed under retired key(s) ${retired.keyIds.join(", ")}` });
    }
  } catch {
    problems.push({ component: "database", message: "the wallets could not be read" });
  }
  return problems;
}
