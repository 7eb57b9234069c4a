import { createStore, type EIP1193Provider, type EIP6963ProviderDetail } from "mipd";
import type { PageNetwork } from "../page-data";
import { PageError, type FaceClient, type TypedData } from "./face-client";
import type { WalletFound } from "./wallets";

/**
 * EVM wallets found with EIP-6963 (mipd's store): one entry per wallet and
 * EVM network the face offers. Paying signs the /prepare typed data with
 * eth_signTypedData_v4, after asking the wallet to switch to the network's
 * chain (wallets check the domain's chainId against their current chain).
 */
export function discoverEvmWallets(networks: readonly PageNetwork[], found: WalletFound): void {
  const evm = networks.filter((n) => n.family === "evm" && n.chain_id !== null);
  if (evm.length === 0) return;
  const seen = new Set<string>();
  const announce = (details: readonly EIP6963ProviderDetail[]) => {
    for (const d of details) {
      for (const network of evm) {
        const key = `${d.info.uuid}:${network.network}`;
        if (seen.has(key)) continue;
        seen.add(key);
        found({ key, name: d.info.name, icon: d.info.icon ?? null, network, pay: (face) => payWith(d.provider, network, face) });
      }
    }
  };
  const store = createStore();
  announce(store.getProviders());
  store.subscribe((details) => announce(details));
}

async function payWith(provider: EIP1193Provider, network: PageNetwork, face: FaceClient) {
  const accounts = (await provider.request({ method: "eth_requestAccounts" })) as string[];
  const payer = accounts[0];
  if (!payer) throw new PageError("The wallet shared no account.");
  await switchChain(provider, network);
  const prepared = await face.prepare(payer, network.network);
  if (!prepared.typed_data) throw new PageError("This face has nothing for an EVM wallet to sign.");
  prepared.payload_stub.payload.signature = await signTypedData(provider, payer, prepared.typed_data);
  const held = [];
  for (const period of prepared.schedule ?? []) {
    period.payload_stub.payload.signature = await signTypedData(provider, payer, period.typed_data);
    held.push(period.payload_stub);
  }
  return face.present(prepared.payload_stub, held);
}

async function switchChain(provider: EIP1193Provider, network: PageNetwork): Promise<void> {
  const chainId = `0x${(network.chain_id ?? 0).toString(16)}`;
  const current = await provider.request({ method: "eth_chainId" }).catch(() => null);
  if (current === chainId) return;
  try {
    await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId }] });
  } catch (err) {
    if ((err as { code?: unknown }).code === 4902) throw new PageError(`Add ${network.label} (chain ${network.chain_id}) to your wallet, then pay again.`);
    // A wallet that cannot switch may still sign: its own check has the last word.
  }
}

/** eth_signTypedData_v4 with the domain's type spelled out (some wallets need EIP712Domain in `types`). */
function signTypedData(provider: EIP1193Provider, payer: string, typed: TypedData): Promise<`0x${string}`> {
  const types = typed.types.EIP712Domain ? typed.types : { EIP712Domain: domainTypeOf(typed.domain), ...typed.types };
  return provider.request({ method: "eth_signTypedData_v4", params: [payer as `0x${string}`, JSON.stringify({ ...typed, types })] }) as Promise<`0x${string}`>;
}

const DOMAIN_FIELDS = [
  ["name", "string"],
  ["version", "string"],
  ["chainId", "uint256"],
  ["verifyingContract", "address"],
  ["salt", "bytes32"],
] as const;

function domainTypeOf(domain: Record<string, unknown>) {
  return DOMAIN_FIELDS.filter(([name]) => domain[name] !== undefined).map(([name, type]) => ({ name, type }));
}
