import type { SecretSealer } from "@c402/sealed-secrets";
import { walletStore, type SpendingWalletsDb } from "../store/wallet-store";
import type { KeyVault, PayingWallet, WalletChain } from "./ports";
import { secretKeyBytes, type WalletSecret } from "./wallet-keys";

/** The sealed secret's associated data: a secret copied into another wallet's row, account or chain does not open. */
export function walletAad(w: { id: string; accountId: string; chain: WalletChain }): string {
  return `spending-wallets/v1/wallet/${w.id}/account/${w.accountId}/chain/${w.chain}`;
}

export function sealWalletSecret(sealer: SecretSealer, w: { id: string; accountId: string; chain: WalletChain }, secret: WalletSecret): string {
  return sealer.seal(JSON.stringify(secret), walletAad(w));
}

export function openWalletSecret(sealer: SecretSealer, w: { id: string; accountId: string; chain: WalletChain }, sealed: string): WalletSecret {
  return JSON.parse(sealer.open(sealed, walletAad(w))) as WalletSecret;
}

/**
 * Opens a wallet's key for the duration of one use. The sealed value is read
 * from the row at that instant (so a re-wrap in between is seen), the key
 * bytes are handed over and zero-filled after, whatever the use did.
 */
export class SealedKeyVault implements KeyVault {
  constructor(
    private readonly db: SpendingWalletsDb,
    private readonly sealer: SecretSealer,
  ) {}

  async withKey<T>(wallet: PayingWallet, use: (secretKey: Uint8Array) => Promise<T>): Promise<T> {
    const row = await walletStore.byId(this.db, wallet.id);
    if (!row || row.account_id !== wallet.accountId || row.chain !== wallet.chain) throw new Error(`no wallet ${wallet.id} of that account and chain`);
    const secret = openWalletSecret(this.sealer, wallet, row.sealed_secret);
    const key = secretKeyBytes(wallet.chain, secret);
    try {
      return await use(key);
    } finally {
      key.fill(0);
    }
  }
}
