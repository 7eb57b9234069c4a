import { address, getBase58Decoder, getBase64Decoder, type Address, type MaybeEncodedAccount } from "@solana/kit";
import { AccountState, TOKEN_PROGRAM_ADDRESS, getMintDecoder, getMintSize, getTokenDecoder, getTokenSize, type Mint, type Token } from "@solana-program/token";
import { RpcError, INVALID_PARAMS } from "./rpc-errors";

export const TOKEN_2022_PROGRAM_ADDRESS: Address = address("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");

/** What validators report as the rentEpoch of every rent-exempt account (u64::MAX). */
const RENT_EXEMPT_EPOCH = 18_446_744_073_709_551_615n;

/** Token-2022 writes an account-type byte after the base account layout when an account has extensions. */
const TOKEN_2022_ACCOUNT_TYPE_OFFSET = 165;
const TOKEN_2022_MINT_TYPE = 1;
const TOKEN_2022_ACCOUNT_TYPE = 2;

/** Validators refuse base58 for account data longer than this. */
const MAX_BASE58_BYTES = 128;

export type AccountEncoding = "binary" | "base58" | "base64" | "base64+zstd" | "jsonParsed";

export interface DataSlice {
  offset: number;
  length: number;
}

function isTokenProgram(program: Address): boolean {
  return program === TOKEN_PROGRAM_ADDRESS || program === TOKEN_2022_PROGRAM_ADDRESS;
}

/** The token account stored in this account, if it is one (SPL Token or Token-2022). */
export function readTokenAccount(account: MaybeEncodedAccount): Token | null {
  if (!account.exists || !isTokenProgram(account.programAddress)) return null;
  const data = account.data;
  const plain = data.length === getTokenSize();
  const extended =
    account.programAddress === TOKEN_2022_PROGRAM_ADDRESS &&
    data.length > TOKEN_2022_ACCOUNT_TYPE_OFFSET &&
    data[TOKEN_2022_ACCOUNT_TYPE_OFFSET] === TOKEN_2022_ACCOUNT_TYPE;
  if (!plain && !extended) return null;
  const token = getTokenDecoder().decode(data.subarray(0, getTokenSize()));
  return token.state === AccountState.Uninitialized ? null : token;
}

/** The mint stored in this account, if it is one (SPL Token or Token-2022). */
export function readMint(account: MaybeEncodedAccount): Mint | null {
  if (!account.exists || !isTokenProgram(account.programAddress)) return null;
  const data = account.data;
  const plain = data.length === getMintSize();
  const extended =
    account.programAddress === TOKEN_2022_PROGRAM_ADDRESS &&
    data.length > TOKEN_2022_ACCOUNT_TYPE_OFFSET &&
    data[TOKEN_2022_ACCOUNT_TYPE_OFFSET] === TOKEN_2022_MINT_TYPE;
  if (!plain && !extended) return null;
  const mint = getMintDecoder().decode(data.subarray(0, getMintSize()));
  return mint.isInitialized ? mint : null;
}

/** A token amount as validators write it (UiTokenAmount). */
export function tokenAmountJson(amount: bigint, decimals: number) {
  const digits = amount.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  const uiAmountString = fraction ? `${whole}.${fraction}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

function optionJson(option: { __option: "Some"; value: Address } | { __option: "None" }): Address | null {
  return option.__option === "Some" ? option.value : null;
}

/** The jsonParsed form of a token account or mint, or null for any other account (answered in base64 then). */
function parsedTokenData(account: MaybeEncodedAccount, decimalsOfMint: (mint: Address) => number | null) {
  if (!account.exists) return null;
  const program = account.programAddress === TOKEN_2022_PROGRAM_ADDRESS ? "spl-token-2022" : "spl-token";
  const token = readTokenAccount(account);
  if (token) {
    const decimals = decimalsOfMint(token.mint);
    if (decimals === null) return null;
    const delegate = optionJson(token.delegate);
    const info: Record<string, unknown> = {
      isNative: token.isNative.__option === "Some",
      mint: token.mint,
      owner: token.owner,
      state: token.state === AccountState.Frozen ? "frozen" : "initialized",
      tokenAmount: tokenAmountJson(token.amount, decimals),
    };
    if (delegate) Object.assign(info, { delegate, delegatedAmount: tokenAmountJson(token.delegatedAmount, decimals) });
    const closeAuthority = optionJson(token.closeAuthority);
    if (closeAuthority) info.closeAuthority = closeAuthority;
    return { program, parsed: { info, type: "account" }, space: account.data.length };
  }
  const mint = readMint(account);
  if (mint) {
    const info = {
      decimals: mint.decimals,
      freezeAuthority: optionJson(mint.freezeAuthority),
      isInitialized: true,
      mintAuthority: optionJson(mint.mintAuthority),
      supply: mint.supply.toString(),
    };
    return { program, parsed: { info, type: "mint" }, space: account.data.length };
  }
  return null;
}

/** An account as getAccountInfo answers it (null when it does not exist). */
export function accountInfoJson(
  account: MaybeEncodedAccount,
  encoding: AccountEncoding | undefined,
  dataSlice: DataSlice | undefined,
  decimalsOfMint: (mint: Address) => number | null,
) {
  if (!account.exists) return null;
  const base = {
    executable: account.executable,
    lamports: BigInt(account.lamports),
    owner: account.programAddress,
    rentEpoch: RENT_EXEMPT_EPOCH,
    space: account.data.length,
  };
  const sliced = dataSlice ? account.data.subarray(dataSlice.offset, dataSlice.offset + dataSlice.length) : account.data;
  switch (encoding ?? "binary") {
    case "jsonParsed": {
      const parsed = parsedTokenData(account, decimalsOfMint);
      return { ...base, data: parsed ?? [getBase64Decoder().decode(account.data), "base64"] };
    }
    case "base64":
      return { ...base, data: [getBase64Decoder().decode(sliced), "base64"] };
    case "base58":
    case "binary": {
      if (sliced.length > MAX_BASE58_BYTES) {
        throw new RpcError(INVALID_PARAMS, `Encoded binary (base 58) data should be less than ${MAX_BASE58_BYTES} bytes, please use Base64 encoding.`);
      }
      const text = getBase58Decoder().decode(sliced);
      return { ...base, data: encoding === "base58" ? [text, "base58"] : text };
    }
    default:
      throw new RpcError(INVALID_PARAMS, `Invalid params: encoding ${String(encoding)} is not supported by this devnet`);
  }
}
