import type { SolanaSignTransactionFeature } from "@solana/wallet-standard-features";
import { getWallets } from "@wallet-standard/app";
import type { Wallet, WalletAccount } from "@wallet-standard/base";
import type { StandardConnectFeature } from "@wallet-standard/features";
import type { PageNetwork } from "../page-data";
import { base64ToBytes, bytesToBase64, PageError, type FaceClient } from "./face-client";
import type { WalletFound } from "./wallets";

// The feature names as literals (not the packages' constants): the page's bundle only needs the types.
const CONNECT = "standard:connect";
const SIGN_TRANSACTION = "solana:signTransaction";

type SolanaPayingWallet = Wallet & { features: StandardConnectFeature & SolanaSignTransactionFeature };

/**
 * Solana wallets found with the Wallet Standard (@wallet-standard/app's
 * registry, which also catches wallets that register after the page starts):
 * one entry per wallet and Solana network the face offers, when the wallet
 * can connect, sign a transaction, and says it is on that network's chain.
 * Paying has the wallet sign the /prepare transaction in its own slot only
 * (solana:signTransaction; the service's fee payer co-signs at settlement).
 */
export function discoverSolanaWallets(networks: readonly PageNetwork[], found: WalletFound): void {
  const solana = networks.filter((n) => n.family === "solana" && n.wallet_chain !== null);
  if (solana.length === 0) return;
  const seen = new Set<string>();
  const announce = (wallets: readonly Wallet[]) => {
    for (const wallet of wallets) {
      if (!canPay(wallet)) continue;
      for (const network of solana) {
        const key = `${wallet.name}:${network.network}`;
        if (seen.has(key) || !wallet.chains.includes(network.wallet_chain as `${string}:${string}`)) continue;
        seen.add(key);
        found({ key, name: wallet.name, icon: wallet.icon ?? null, network, pay: (face) => payWith(wallet, network, face) });
      }
    }
  };
  const registry = getWallets();
  announce(registry.get());
  registry.on("register", (...wallets) => announce(wallets));
}

function canPay(wallet: Wallet): wallet is SolanaPayingWallet {
  return CONNECT in wallet.features && SIGN_TRANSACTION in wallet.features;
}

async function payWith(wallet: SolanaPayingWallet, network: PageNetwork, face: FaceClient) {
  const chain = network.wallet_chain as `${string}:${string}`;
  const { accounts } = await wallet.features[CONNECT].connect();
  const account: WalletAccount | undefined = accounts.find((a) => a.chains.includes(chain)) ?? accounts[0];
  if (!account) throw new PageError("The wallet shared no account.");
  const prepared = await face.prepare(account.address, network.network);
  if (!prepared.transaction) throw new PageError("This face has nothing for a Solana wallet to sign.");
  const [signed] = await wallet.features[SIGN_TRANSACTION].signTransaction({ account, transaction: base64ToBytes(prepared.transaction), chain });
  if (!signed) throw new PageError("The wallet returned no signed transaction.");
  prepared.payload_stub.payload.transaction = bytesToBase64(signed.signedTransaction);
  return face.present(prepared.payload_stub);
}
