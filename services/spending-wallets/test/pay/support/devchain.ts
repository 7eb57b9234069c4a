import { devchainKey, type DevchainInfo } from "@c402/devchain";
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createPublicClient, createWalletClient, getAddress, http, parseAbi, toHex, type Chain, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

/**
 * The devchain as the EVM pay tests use it: demo account 20 is the seller's
 * facilitator (it sends the settlements), 21 mints the test USDC to fresh
 * wallets. Both get gas with hardhat_setBalance (the devchain funds 0–19 only).
 */
export const FACILITATOR_INDEX = 20;
export const MINTER_INDEX = 21;

export const usdcAbi = parseAbi([
  "function mint(address to, uint256 amount)",
  "function balanceOf(address owner) view returns (uint256)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
]);

export function devchainTools(d: DevchainInfo) {
  const chain: Chain = {
    id: d.chainId,
    name: d.network,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [d.url] } },
  };
  const transport = http(d.url, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const facilitatorAccount = privateKeyToAccount(devchainKey(d.mnemonic, FACILITATOR_INDEX));
  const minter = privateKeyToAccount(devchainKey(d.mnemonic, MINTER_INDEX));
  const minterWallet = createWalletClient({ account: minter, chain, transport });

  const giveGas = (address: Hex) => publicClient.request({ method: "hardhat_setBalance" as never, params: [address, toHex(10n ** 20n)] as never });

  return {
    publicClient,
    async setUp(): Promise<void> {
      await giveGas(facilitatorAccount.address);
      await giveGas(minter.address);
    },
    /** The official EVM exact facilitator, signing settlements with account 20. */
    facilitator(): x402Facilitator {
      const wallet = createWalletClient({ account: facilitatorAccount, chain, transport });
      const signer = toFacilitatorEvmSigner({
        address: facilitatorAccount.address,
        getCode: (args) => publicClient.getCode(args),
        readContract: (args) => publicClient.readContract({ ...args, args: args.args ?? [] } as never),
        verifyTypedData: (args) => publicClient.verifyTypedData(args as never),
        writeContract: (args) => wallet.writeContract({ ...args, args: args.args ?? [] } as never),
        sendTransaction: (args) => wallet.sendTransaction(args as never),
        waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt(args),
      });
      const facilitator = new x402Facilitator();
      registerExactEvmScheme(facilitator, { signer, networks: d.network as `${string}:${string}` });
      return facilitator;
    },
    async mint(to: string, amount: bigint): Promise<void> {
      const hash = await minterWallet.writeContract({ address: d.usdc, abi: usdcAbi, functionName: "mint", args: [getAddress(to), amount] });
      await publicClient.waitForTransactionReceipt({ hash });
    },
    usdcOf: (owner: string) => publicClient.readContract({ address: d.usdc, abi: usdcAbi, functionName: "balanceOf", args: [getAddress(owner)] }),
    /** Transactions the address has sent (its nonce): an EIP-3009 payer sends none, the facilitator does. */
    sentBy: (address: string) => publicClient.getTransactionCount({ address: getAddress(address) }),
  };
}
