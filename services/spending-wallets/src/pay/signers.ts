import { createKeyPairSignerFromBytes, type Address, type TransactionPartialSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import type { ClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { ExactSvmSchemeV1, NETWORKS as SVM_V1_NETWORKS } from "@x402/svm/v1";
import { bytesToHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { KeyVault, PayingWallet } from "../domain/ports";

/**
 * The official scheme clients, given signers that open the wallet's key only
 * for the instant of one signature (KeyVault.withKey): the client is built
 * before anything is known about the payment, but the key is never read until
 * the official scheme asks for a signature, which is after the budget was
 * reserved and the balance read (the engine's before-payment hook).
 */

/** EIP-3009 typed data signed by a viem local account made from the key inside the callback. */
function lazyEvmSigner(vault: KeyVault, wallet: PayingWallet): ClientEvmSigner {
  return {
    address: wallet.address as `0x${string}`,
    signTypedData: (typed) =>
      // viem takes the key as hex: the string lives only in this callback's scope.
      vault.withKey(wallet, async (key) => privateKeyToAccount(bytesToHex(key)).signTypedData(typed as never)),
  };
}

/** A partial signer (the facilitator pays the fee) whose key pair is imported from the 64-byte secret inside the callback. */
function lazySvmSigner(vault: KeyVault, wallet: PayingWallet): TransactionPartialSigner {
  return {
    address: wallet.address as Address,
    signTransactions: (transactions) =>
      vault.withKey(wallet, async (key) => {
        // Not extractable: the imported CryptoKey cannot give the secret back.
        const pair = await createKeyPairSignerFromBytes(key);
        return pair.signTransactions(transactions);
      }),
  };
}

/**
 * An official x402Client able to pay from this wallet: the EVM exact scheme
 * (v2 on every eip155 network, v1 names too) or the SVM exact scheme (with the
 * Solana RPC the scheme reads the mint and the blockhash from).
 */
export function walletClient(vault: KeyVault, wallet: PayingWallet, solanaRpcUrl: string | undefined): x402Client {
  const client = new x402Client();
  if (wallet.chain === "base") return registerExactEvmScheme(client, { signer: lazyEvmSigner(vault, wallet) });
  if (!solanaRpcUrl) throw new Error(`no Solana RPC configured for ${wallet.network}`);
  const signer = lazySvmSigner(vault, wallet);
  client.register("solana:*", new ExactSvmScheme(signer, { rpcUrl: solanaRpcUrl }));
  const v1 = new ExactSvmSchemeV1(signer, { rpcUrl: solanaRpcUrl });
  for (const name of SVM_V1_NETWORKS) client.registerV1(name, v1);
  return client;
}
