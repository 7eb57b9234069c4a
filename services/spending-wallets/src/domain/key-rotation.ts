import type { SecretSealer } from "@c402/sealed-secrets";
import { walletStore, type SpendingWalletsDb } from "../store/wallet-store";
import { walletAad } from "./wallet-vault";

export interface KeyRotationOptions {
  /** Wallets re-wrapped per round at most. */
  batchSize?: number;
  /** Called inside a row's transaction after its write, before the commit (a test throws here to crash mid re-wrap). */
  beforeCommit?: (walletId: string) => void;
}

/**
 * Moves every wallet sealed under a retired master key to the keyring's
 * current one. Each wallet is claimed (SKIP LOCKED: a replica's sweep and a
 * reveal never wait on each other), re-wrapped and written in its own short
 * transaction, so a crash anywhere leaves every row either as it was or done,
 * and the next round goes on from there. The data key and ciphertext are
 * unchanged: only the wrap of the data key moves.
 */
export class KeyRotation {
  private readonly batchSize: number;

  constructor(
    private readonly db: SpendingWalletsDb,
    private readonly sealer: SecretSealer,
    private readonly opts: KeyRotationOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 20;
  }

  /** One round: up to batchSize wallets re-wrapped; answers how many. */
  async round(): Promise<number> {
    let done = 0;
    while (done < this.batchSize) {
      const moved = await this.db.transaction().execute(async (trx) => {
        const row = await walletStore.claimOneToRewrap(trx, this.sealer.currentKeyId);
        if (!row) return false;
        const sealed = this.sealer.rewrap(row.sealed_secret, walletAad({ id: row.id, accountId: row.account_id, chain: row.chain }));
        await walletStore.rewrapped(trx, row.id, sealed, this.sealer.keyIdOf(sealed));
        this.opts.beforeCommit?.(row.id);
        return true;
      });
      if (!moved) break;
      done++;
    }
    return done;
  }

  /** Rounds until no wallet is left under a retired key (or one is locked by another replica). */
  async untilDone(): Promise<void> {
    while ((await this.round()) > 0);
  }

  stillRetired(): Promise<{ count: number; keyIds: string[] }> {
    return walletStore.retiredKeyUse(this.db, this.sealer.currentKeyId);
  }
}
