import { bytesToHex, getAddress, hexToBytes, keccak256, stringToBytes, toHex, type Hex, type LocalAccount } from "viem";
import { keccak256Bytes } from "./keccak";
import { recoverSigner } from "./recover-signer";
import { ADDRESS, MAX_UINT256, NONCE, type ExactEvmAuthorization, type PaymentPayload, type PaymentRequirements } from "./wire";

/** USDC on the EVM networks this service serves, with its EIP-712 domain. */
export const EVM_NETWORKS = {
  "eip155:8453": { chainId: 8453, usdc: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", name: "USD Coin", version: "2", testnet: false, v1Name: "base" },
  "eip155:84532": { chainId: 84532, usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", name: "USDC", version: "2", testnet: true, v1Name: "base-sepolia" },
} as const;

export type EvmNetwork = keyof typeof EVM_NETWORKS;

export function isEvmNetwork(network: string): network is EvmNetwork {
  return Object.prototype.hasOwnProperty.call(EVM_NETWORKS, network);
}

/** Whether a network id is an EVM chain's (CAIP-2 `eip155:…`): its payloads carry an EIP-3009 authorization. */
export function isEvmNetworkId(network: string): boolean {
  return network.startsWith("eip155:");
}

/** EIP-3009's authorization fields, the same for a transfer anyone may submit and a receive only its payee may. */
const EIP3009_AUTHORIZATION_FIELDS = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
] as const;

export const TRANSFER_WITH_AUTHORIZATION_TYPES = { TransferWithAuthorization: EIP3009_AUTHORIZATION_FIELDS } as const;

/** USDC's EIP-3009 `ReceiveWithAuthorization`: only its payee (`to`, as msg.sender) can execute it, e.g. an escrow's deposit. */
export const RECEIVE_WITH_AUTHORIZATION_TYPES = { ReceiveWithAuthorization: EIP3009_AUTHORIZATION_FIELDS } as const;

export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: `0x${string}`;
}

/** The EIP-712 typed data a buyer signs for an `exact` EIP-3009 payment. */
export function transferWithAuthorizationTypedData(requirement: PaymentRequirements, authorization: ExactEvmAuthorization) {
  return {
    domain: domainOf(requirement),
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

/** The EIP-712 domain of a requirement's asset: the token's name and version (from `extra`), the chain and the token contract. */
function domainOf(requirement: PaymentRequirements): Eip712Domain {
  return {
    name: String(requirement.extra.name),
    version: String(requirement.extra.version),
    chainId: Number(requirement.network.split(":")[1]),
    verifyingContract: getAddress(requirement.asset),
  };
}

/**
 * The EIP-712 typed data a buyer signs for an `escrow` deposit (ADR 19):
 * USDC's ReceiveWithAuthorization to the escrow contract (only it may execute
 * it), whose nonce the service set to the escrow id of the deposit's terms.
 */
export function receiveWithAuthorizationTypedData(requirement: PaymentRequirements, authorization: ExactEvmAuthorization) {
  return {
    ...transferWithAuthorizationTypedData(requirement, authorization),
    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
    primaryType: "ReceiveWithAuthorization" as const,
  };
}

/**
 * What a buyer without an x402 client needs to pay (the prepare step): the
 * EIP-712 typed data to sign, with its EIP712Domain type as eth_signTypedData_v4
 * wallets want it, and the v2 payload with the signature left empty.
 */
export function preparedPayment(requirement: PaymentRequirements, authorization: ExactEvmAuthorization, resourceUrl: string) {
  return {
    typedData: forWallets(transferWithAuthorizationTypedData(requirement, authorization)),
    payloadStub: { x402Version: 2 as const, resource: { url: resourceUrl }, accepted: requirement, payload: { signature: "", authorization } },
  };
}

/**
 * The prepare step of an `escrow` deposit (ADR 19), as preparedPayment's:
 * the ReceiveWithAuthorization to sign, and the payload, which brings back
 * the terms' `salt` the prepare answer gave.
 */
export function preparedEscrowDeposit(requirement: PaymentRequirements, authorization: ExactEvmAuthorization, resourceUrl: string, salt: string) {
  return {
    typedData: forWallets(receiveWithAuthorizationTypedData(requirement, authorization)),
    payloadStub: { x402Version: 2 as const, resource: { url: resourceUrl }, accepted: requirement, payload: { signature: "", authorization, salt } },
  };
}

/** Typed data with its EIP712Domain type, as eth_signTypedData_v4 wallets want it. */
function forWallets<T extends { types: object; primaryType: string; domain: Eip712Domain; message: object }>(typed: T) {
  return {
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" },
      ],
      ...(typed.types as T["types"]),
    },
    primaryType: typed.primaryType as T["primaryType"],
    domain: typed.domain,
    message: typed.message as T["message"],
  };
}

/** The typed data with the numeric fields as bigints, as viem signs and verifies it. */
export function viemTypedData(typed: ReturnType<typeof transferWithAuthorizationTypedData>) {
  return {
    domain: typed.domain,
    types: typed.types,
    primaryType: typed.primaryType,
    message: signableAuthorization(typed.message),
  };
}

/** An EIP-3009 authorization's message with its numbers as bigints and its nonce as hex, as viem signs it. */
function signableAuthorization<M extends ExactEvmAuthorization>(m: M) {
  return { ...m, value: BigInt(m.value), validAfter: BigInt(m.validAfter), validBefore: BigInt(m.validBefore), nonce: m.nonce as Hex };
}

/** True when `signature` is the EOA signature of `authorization.from` over the typed data. */
export async function isValidEoaSignature(requirement: PaymentRequirements, authorization: ExactEvmAuthorization, signature: string): Promise<boolean> {
  try {
    return recoverSigner(authorizationDigest(requirement, authorization), signature) === getAddress(authorization.from);
  } catch {
    return false;
  }
}

/**
 * The EIP-712 digest of the authorization: what the buyer signed, and what an
 * EIP-1271 contract wallet is asked to approve. The same value as viem's
 * hashTypedData over transferWithAuthorizationTypedData (a property test holds
 * them equal), in two keccak-256 rounds instead of about seven: the type hash
 * is a constant and the domain separator is kept per domain (a handful: one per
 * network and asset), so only the message's struct hash and the digest are
 * computed per payment, which every paid request verifies.
 */
export function authorizationDigest(requirement: PaymentRequirements, authorization: ExactEvmAuthorization): Hex {
  const words = new Uint8Array(7 * 32);
  words.set(TRANSFER_TYPE_HASH, 0);
  words.set(addressWord(authorization.from), 32);
  words.set(addressWord(authorization.to), 64);
  words.set(uint256Word(authorization.value), 96);
  words.set(uint256Word(authorization.validAfter), 128);
  words.set(uint256Word(authorization.validBefore), 160);
  if (!NONCE.test(authorization.nonce)) throw new Error("the authorization's nonce is not 32 bytes of hex");
  words.set(hexToBytes(authorization.nonce as Hex), 192);
  const digest = new Uint8Array(2 + 32 + 32);
  digest.set([0x19, 0x01], 0);
  digest.set(domainSeparator(requirement), 2);
  digest.set(keccak256Bytes(words), 34);
  return bytesToHex(keccak256Bytes(digest));
}

const TRANSFER_TYPE_HASH = keccak256(
  stringToBytes("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"),
  "bytes",
);
const DOMAIN_TYPE_HASH = keccak256(stringToBytes("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"), "bytes");
/** Domain separators by domain; bounded all the same (the requirement's domain is ours, but a bound costs nothing). */
const domainSeparators = new Map<string, Uint8Array>();
const DOMAIN_SEPARATORS_KEPT = 64;

function domainSeparator(requirement: PaymentRequirements): Uint8Array {
  const domain = domainOf(requirement);
  const key = `${domain.name}\u0000${domain.version}\u0000${domain.chainId}\u0000${domain.verifyingContract}`;
  const known = domainSeparators.get(key);
  if (known) return known;
  const words = new Uint8Array(5 * 32);
  words.set(DOMAIN_TYPE_HASH, 0);
  words.set(keccak256(stringToBytes(domain.name), "bytes"), 32);
  words.set(keccak256(stringToBytes(domain.version), "bytes"), 64);
  words.set(uint256Word(String(domain.chainId)), 96);
  words.set(addressWord(domain.verifyingContract), 128);
  const separator = keccak256(words, "bytes");
  if (domainSeparators.size >= DOMAIN_SEPARATORS_KEPT) domainSeparators.clear();
  domainSeparators.set(key, separator);
  return separator;
}

/** An address as its ABI word: twelve zero bytes, then its twenty. */
function addressWord(address: string): Uint8Array {
  if (!ADDRESS.test(address)) throw new Error(`not an address: ${address.slice(0, 50)}`);
  const word = new Uint8Array(32);
  word.set(hexToBytes(address.toLowerCase() as Hex), 12);
  return word;
}

/** A uint256 (as the payload writes it, a decimal string) as its ABI word, big-endian. */
function uint256Word(value: string): Uint8Array {
  const n = BigInt(value);
  if (n < 0n || n > MAX_UINT256) throw new Error("a uint256 is out of range");
  return hexToBytes(`0x${n.toString(16).padStart(64, "0")}`);
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

/**
 * A deterministic, clearly synthetic transaction hash for a simulated
 * settlement (ADR 5): keccak256("c402-rehearsal:<network>:<payer>:<nonce>")
 * as 0x and 64 hex digits, on every family. EVM payers and nonces are hex,
 * read lowercase; a Solana payer and nonce (the message hash) are read as
 * written, base58 being case-sensitive. On Solana the form can never be
 * mistaken for a transaction signature: "0" and "x" are not base58 digits.
 */
export function syntheticTxHash(network: string, payer: string, nonce: string): Hex {
  const caseless = network.startsWith("eip155:");
  const [who, what] = caseless ? [payer.toLowerCase(), nonce.toLowerCase()] : [payer, nonce];
  return bytesToHex(keccak256Bytes(stringToBytes(`c402-rehearsal:${network}:${who}:${what}`)));
}

/**
 * An escrow deposit's payment (scheme `escrow`, ADR 19), signed by `account`: the
 * ReceiveWithAuthorization a face's prepare answered (its nonce is the terms' escrow id),
 * in the payload stub with the salt that prepare answered, as a buyer presents it.
 */
export async function signEscrowDeposit(
  account: LocalAccount,
  prepared: { requirement: PaymentRequirements; authorization: ExactEvmAuthorization; resourceUrl: string; salt: string },
): Promise<PaymentPayload> {
  const { payloadStub } = preparedEscrowDeposit(prepared.requirement, prepared.authorization, prepared.resourceUrl, prepared.salt);
  const typed = receiveWithAuthorizationTypedData(prepared.requirement, prepared.authorization);
  const signature = await account.signTypedData({
    domain: typed.domain,
    types: typed.types,
    primaryType: typed.primaryType,
    message: signableAuthorization(typed.message),
  });
  return { ...payloadStub, payload: { ...payloadStub.payload, signature } } as PaymentPayload;
}

/** USDC's EIP-3009 `CancelAuthorization`: the authorizer voids an unused nonce, so nobody can ever submit it. */
export const CANCEL_AUTHORIZATION_TYPES = {
  CancelAuthorization: [
    { name: "authorizer", type: "address" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/**
 * The typed data a series' payer signs (eth_signTypedData_v4) to cancel one
 * held period's authorization on chain (ADR 20): USDC's CancelAuthorization
 * under the token's own domain (the rehearsal domain for a test-mode series).
 */
export function cancelAuthorizationTypedData(domain: Eip712Domain, authorizer: string, nonce: string) {
  return forWallets({
    domain: { ...domain, verifyingContract: getAddress(domain.verifyingContract) },
    types: CANCEL_AUTHORIZATION_TYPES,
    primaryType: "CancelAuthorization" as const,
    message: { authorizer: getAddress(authorizer), nonce: nonce as Hex },
  });
}

/** The EIP-712 domain of a requirement's token (its asset, chain and extra.name/version). */
export function tokenDomainOf(requirement: Pick<PaymentRequirements, "network" | "asset" | "extra">): Eip712Domain {
  return domainOf(requirement as PaymentRequirements);
}

/**
 * A series' held period's authorization nonce (ADR 20): derived from period
 * 0's nonce, the period and its window, so the service that issued them can
 * derive each again and tell its own held authorizations from any other:
 * keccak256(abi.encode(bytes32 nonce0, uint256 period, uint256 validAfter, uint256 validBefore)).
 */
export function heldPeriodNonce(nonce0: string, period: number, validAfter: bigint | string, validBefore: bigint | string): Hex {
  if (!NONCE.test(nonce0)) throw new Error("nonce0 must be 0x and 64 hex digits");
  const words = [hexToBytes(nonce0 as Hex), uint256Word(String(period)), uint256Word(String(validAfter)), uint256Word(String(validBefore))];
  const packed = new Uint8Array(32 * words.length);
  words.forEach((w, i) => packed.set(w, 32 * i));
  return keccak256(packed);
}
