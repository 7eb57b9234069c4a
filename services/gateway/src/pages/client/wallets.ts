import type { PageNetwork } from "../page-data";
import type { FaceClient, PayAnswer } from "./face-client";

/**
 * A wallet the buyer can pick on the page: an EIP-6963 provider on an EVM
 * network (evm-wallets.ts) or a Wallet-Standard wallet on Solana
 * (solana-wallets.ts). `pay` asks the wallet for its account, has the face
 * prepare what that account signs, has the wallet sign exactly that, and
 * presents it.
 */
export interface PayingWallet {
  /** Unique on the page (the wallet's id and the network). */
  key: string;
  name: string;
  /** A data: URI, as both standards require; null without one. */
  icon: string | null;
  network: PageNetwork;
  pay(face: FaceClient): Promise<PayAnswer>;
}

/** Called once per wallet found, and again whenever another announces itself. */
export type WalletFound = (wallet: PayingWallet) => void;

/** A wallet's refusal (the user declined): said plainly, not as an error. */
export function declined(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
  return e?.code === 4001 || e?.name === "WalletSignTransactionError" || /reject|denied|declined/i.test(String(e?.message ?? ""));
}
