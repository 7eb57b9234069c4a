import { formatUsd } from "@c402/money";
import type { ChainReader } from "../chain/chain-readers";

export interface FundingRequest {
  uri: string;
  links: { app: string; url: string }[];
}

/**
 * A payment request that funds `address` with USDC (EIP-681 on Base, Solana
 * Pay on Solana) and the wallet apps' links to it. Only documented link forms:
 * MetaMask's send deep link (EIP-681 after https://metamask.app.link/send/);
 * Phantom and Solflare open Solana Pay `solana:` URIs themselves, so theirs is
 * the URI (services/spending-wallets/README.md).
 */
export function fundingRequest(chain: ChainReader, address: string, amount: bigint | undefined, label: string): FundingRequest {
  if (chain.chain === "base") {
    const path = `${chain.usdc}@${chain.chainId}/transfer?address=${address}${amount !== undefined ? `&uint256=${amount}` : ""}`;
    return { uri: `ethereum:${path}`, links: [{ app: "metamask", url: `https://metamask.app.link/send/${path}` }] };
  }
  const query = new URLSearchParams();
  if (amount !== undefined) query.set("amount", solanaPayAmount(amount));
  query.set("spl-token", chain.usdc);
  query.set("label", label);
  const uri = `solana:${address}?${query.toString().replace(/\+/g, "%20")}`;
  return {
    uri,
    links: [
      { app: "phantom", url: uri },
      { app: "solflare", url: uri },
    ],
  };
}

/** Solana Pay's amount: a decimal in the token's units, without trailing zeros ("1.5", "2"). */
function solanaPayAmount(atomic: bigint): string {
  return formatUsd(atomic).replace(/\.?0+$/, "");
}
