import { newId } from "@c402/ids";
import type { SecretSealer } from "@c402/sealed-secrets";
import type { PayingWallet, WalletChain } from "../../src";
import { generateWallet, type WalletSecret } from "../../src/domain/wallet-keys";
import { sealWalletSecret } from "../../src/domain/wallet-vault";
import { walletStore, type SpendingWalletsDb } from "../../src/store/wallet-store";

/** An active wallet straight into the book (a real key sealed under `sealer`, or a placeholder when the test never opens it). */
export async function seedWallet(
  db: SpendingWalletsDb,
  o: { accountId?: string; chain?: WalletChain; sealer?: SecretSealer } = {},
): Promise<{ wallet: PayingWallet; secret?: WalletSecret }> {
  const accountId = o.accountId ?? newId("account");
  const chain = o.chain ?? "base";
  const id = newId("spendingWallet");
  const generated = o.sealer ? generateWallet(chain) : undefined;
  const sealed = o.sealer && generated ? sealWalletSecret(o.sealer, { id, accountId, chain }, generated.secret) : "v1.none.placeholder";
  const network = chain === "base" ? "eip155:84532" : "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
  const address = generated?.address ?? `addr_${id}`;
  await walletStore.insertWallet(db, {
    id,
    account_id: accountId,
    chain,
    network,
    address,
    sealed_secret: sealed,
    key_id: o.sealer ? o.sealer.keyIdOf(sealed) : "none",
    status: "active",
    created_at: new Date(),
    revealed_at: null,
    revealed_by: null,
    archived_at: null,
    balance_flagged: false,
  });
  return { wallet: { id, accountId, chain, network, address }, ...(generated ? { secret: generated.secret } : {}) };
}
