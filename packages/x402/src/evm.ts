import { getAddress, hashTypedData, keccak256, toHex, type Hex, type LocalAccount } from "viem";
import { recoverSigner } from "./recover-signer";
import type { ExactEvmAuthorization, PaymentPayload, PaymentRequirements } from "./wire";

/** USDC on the EVM networks this service serves, with its EIP-712 domain. */
export const EVM_NETWORKS = {
  "eip155:8453": { chainId: 8453, usdc: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", name: "USD Coin", version: "2", testnet: false, v1Name: "base" },
  "eip155:84532": { chainId: 84532, usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", name: "USDC", version: "2", testnet: true, v1Name: "base-sepolia" },
} as const;

export type EvmNetwork = keyof typeof EVM_NETWORKS;

export function isEvmNetwork(network: string): network is EvmNetwork {
  return Object.prototype.hasOwnProperty.call(EVM_NETWORKS, network);
}

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: `0x${string}`;
}

/** The EIP-712 typed data a buyer signs for an `exact` EIP-3009 payment. */
export function transferWithAuthorizationTypedData(requirement: PaymentRequirements, authorization: ExactEvmAuthorization) {
  const chainId = Number(requirement.network.split(":")[1]);
  const domain: Eip712Domain = {
    name: String(requirement.extra.name),
    version: String(requirement.extra.version),
    chainId,
    verifyingContract: getAddress(requirement.asset),
  };
  return {
    domain,
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization" as const,
    message: {
      from: getAddress(authorization.from),
      to: getAddress(authorization.to),
      value: authorization.value,
      validAfter: authorization.validAfter,
      validBefore: authorization.validBefore,
      nonce: authorization.nonce,
    },
  };
}

/**
 * What a buyer without an x402 client needs to pay (the prepare step): the
 * EIP-712 typed data to sign, with its EIP712Domain type as eth_signTypedData_v4
 * wallets want it, and the v2 payload with the signature left empty.
 */
export function preparedPayment(requirement: PaymentRequirements, authorization: ExactEvmAuthorization, resourceUrl: string) {
  const typed = transferWithAuthorizationTypedData(requirement, authorization);
  return {
    typedData: {
      types: {
        EIP712Domain: [
          { name: "name", type: "string" },
          { name: "version", type: "string" },
          { name: "chainId", type: "uint256" },
          { name: "verifyingContract", type: "address" },
        ],
        ...TRANSFER_WITH_AUTHORIZATION_TYPES,
      },
      primaryType: typed.primaryType,
      domain: typed.domain,
      message: typed.message,
    },
    payloadStub: { x402Version: 2 as const, resource: { url: resourceUrl }, accepted: requirement, payload: { signature: "", authorization } },
  };
}

/** The typed data with the numeric fields as bigints, as viem signs and verifies it. */
export function viemTypedData(typed: ReturnType<typeof transferWithAuthorizationTypedData>) {
  return {
    domain: typed.domain,
    types: typed.types,
    primaryType: typed.primaryType,
    message: {
      ...typed.message,
      value: BigInt(typed.message.value),
      validAfter: BigInt(typed.message.validAfter),
      validBefore: BigInt(typed.message.validBefore),
      nonce: typed.message.nonce as Hex,
    },
  };
}

/** True when `signature` is the EOA signature of `authorization.from` over the typed data. */
export async function isValidEoaSignature(requirement: PaymentRequirements, authorization: ExactEvmAuthorization, signature: string): Promise<boolean> {
  try {
    return recoverSigner(authorizationDigest(requirement, authorization), signature) === getAddress(authorization.from);
  } catch {
    return false;
  }
}

/** The EIP-712 digest of the authorization: what an EIP-1271 contract wallet is asked to approve. */
export function authorizationDigest(requirement: PaymentRequirements, authorization: ExactEvmAuthorization): Hex {
  return hashTypedData(viemTypedData(transferWithAuthorizationTypedData(requirement, authorization)));
}

/** Asks the chain whether the contract at `signer` approves `signature` over `digest` (EIP-1271). */
export type ContractSignatureCheck = (signer: Hex, digest: Hex, signature: Hex) => Promise<boolean>;

export function randomNonce(): Hex {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Signs an `exact` payment for a requirement the way the official v2 client
 * does (validAfter 0, validBefore now + maxTimeoutSeconds, random nonce). Used
 * by the repo's buyer script and tests; real buyers use the official clients.
 */
export async function signExactEvmPayment(
  account: LocalAccount,
  requirement: PaymentRequirements,
  opts: { resourceUrl?: string; now?: number; overrides?: Partial<ExactEvmAuthorization> } = {},
): Promise<PaymentPayload> {
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  const authorization: ExactEvmAuthorization = {
    from: account.address,
    to: getAddress(requirement.payTo),
    value: requirement.amount,
    validAfter: "0",
    validBefore: String(now + requirement.maxTimeoutSeconds),
    nonce: randomNonce(),
    ...opts.overrides,
  };
  const typed = transferWithAuthorizationTypedData(requirement, authorization);
  const signature = await account.signTypedData(viemTypedData(typed));
  return {
    x402Version: 2,
    ...(opts.resourceUrl ? { resource: { url: opts.resourceUrl } } : {}),
    accepted: requirement,
    payload: { signature, authorization },
  };
}

/** A deterministic, clearly synthetic transaction hash for a simulated settlement. */
export function syntheticTxHash(network: string, payer: string, nonce: string): Hex {
  return keccak256(toHex(`c402-rehearsal:${network}:${payer.toLowerCase()}:${nonce.toLowerCase()}`));
}
