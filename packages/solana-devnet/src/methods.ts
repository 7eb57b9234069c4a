import type { PositionalRpcMethod } from "@c402/json-rpc-server";
import {
  getBase58Decoder,
  getBase58Encoder,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  isAddress,
  type Address,
} from "@solana/kit";
import { accountInfoJson, readTokenAccount, tokenAmountJson, type AccountEncoding, type DataSlice } from "./accounts";
import type { ExecutionOutcome, LandedTransaction, SolanaLedger, TokenAccountUpdate } from "./ledger";
import { AGAVE_VERSION, SLOTS_PER_EPOCH, SOLANA_DEVNET_GENESIS_HASH } from "./network";
import {
  BLOCK_CLEANED_UP,
  BLOCK_NOT_AVAILABLE,
  INVALID_PARAMS,
  MIN_CONTEXT_SLOT_NOT_REACHED,
  RpcError,
  SEND_TRANSACTION_PREFLIGHT_FAILURE,
  UNSUPPORTED_TRANSACTION_VERSION,
} from "./rpc-errors";
import { transactionErrorText } from "./transaction-errors";
import { decodeTransaction, isWritableIndex, transactionFee, withRecentBlockhash, type CompiledMessage, type DecodedTransaction } from "./transactions";

/** A wire transaction can be no longer than a packet (PACKET_DATA_SIZE). */
const MAX_TRANSACTION_BYTES = 1232;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_SIGNATURE_STATUSES = 256;
/** surfnet_advanceBlocks produces at most this many blocks a call (each one hashes; the server waits meanwhile). */
const MAX_BLOCKS_AT_ONCE = 100_000n;
/** A validator's feature-set id; this devnet has a single feature set, so any fixed number does. */
const FEATURE_SET = 0;

type Config = Record<string, unknown>;

function configAt(params: unknown[], index: number): Config {
  const config = params[index];
  if (config === undefined || config === null) return {};
  if (typeof config !== "object" || Array.isArray(config)) throw new RpcError(INVALID_PARAMS, "Invalid params: config must be an object");
  return config as Config;
}

function addressAt(params: unknown[], index: number): Address {
  const value = params[index];
  if (typeof value !== "string" || !isAddress(value)) throw new RpcError(INVALID_PARAMS, "Invalid param: Invalid");
  return value;
}

function stringAt(params: unknown[], index: number, what: string): string {
  const value = params[index];
  if (typeof value !== "string") throw new RpcError(INVALID_PARAMS, `Invalid params: ${what} must be a string`);
  return value;
}

function unsignedInteger(value: unknown, what: string): bigint {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === "string" && /^\d{1,20}$/.test(value) && BigInt(value) < 2n ** 64n) return BigInt(value);
  throw new RpcError(INVALID_PARAMS, `Invalid params: ${what} must be an unsigned integer`);
}

function optionalAddress(value: unknown, what: string): Address | null | undefined {
  if (value === undefined) return undefined;
  // surfpool writes "no account" as null or "noAccount", and an account as a string or { account }.
  if (value === null || value === "noAccount") return null;
  const candidate = typeof value === "object" && "account" in value ? (value as { account: unknown }).account : value;
  if (typeof candidate !== "string" || !isAddress(candidate)) throw new RpcError(INVALID_PARAMS, `Invalid params: ${what} must be an address`);
  return candidate;
}

function wireBytes(encoded: string, encoding: unknown): Uint8Array {
  let bytes: Uint8Array;
  try {
    if (encoding === "base64") bytes = new Uint8Array(getBase64Encoder().encode(encoded));
    else if (encoding === undefined || encoding === "base58") bytes = new Uint8Array(getBase58Encoder().encode(encoded));
    else throw new RpcError(INVALID_PARAMS, `Invalid params: unsupported encoding: ${String(encoding)}. Supported encodings: base58, base64`);
  } catch (err) {
    if (err instanceof RpcError) throw err;
    throw new RpcError(INVALID_PARAMS, `invalid ${String(encoding ?? "base58")} encoding: ${(err as Error).message}`);
  }
  if (bytes.length > MAX_TRANSACTION_BYTES) {
    throw new RpcError(INVALID_PARAMS, `transaction too large: ${bytes.length} bytes (max: ${MAX_TRANSACTION_BYTES} bytes)`);
  }
  return bytes;
}

function dataSliceOf(config: Config): DataSlice | undefined {
  const slice = config.dataSlice as { offset?: unknown; length?: unknown } | undefined;
  if (!slice) return undefined;
  return { offset: Number(unsignedInteger(slice.offset, "dataSlice.offset")), length: Number(unsignedInteger(slice.length, "dataSlice.length")) };
}

function transactionStatus(err: unknown) {
  return err === null ? { Ok: null } : { Err: err };
}

function compiledInstructionsJson(message: CompiledMessage) {
  return message.instructions.map((instruction) => ({
    programIdIndex: instruction.programAddressIndex,
    accounts: instruction.accountIndices ?? [],
    data: getBase58Decoder().decode(instruction.data ?? new Uint8Array()),
    stackHeight: null,
  }));
}

/** The transaction as getTransaction writes it in the json and jsonParsed encodings. */
function transactionJson(decoded: DecodedTransaction, parsed: boolean) {
  const { message, transaction } = decoded;
  const keys = message.staticAccounts;
  const signerCount = message.header.numSignerAccounts;
  const accountKeys = parsed
    ? keys.map((pubkey, index) => ({ pubkey, signer: index < signerCount, writable: isWritableIndex(message, index), source: "transaction" }))
    : keys;
  const instructions = parsed
    ? compiledInstructionsJson(message).map((instruction) => ({
        programId: keys[instruction.programIdIndex],
        accounts: instruction.accounts.map((index) => keys[index]),
        data: instruction.data,
        stackHeight: null,
      }))
    : compiledInstructionsJson(message);
  const lookups =
    message.version === 0
      ? {
          addressTableLookups: (message.addressTableLookups ?? []).map((lookup) => ({
            accountKey: lookup.lookupTableAddress,
            writableIndexes: lookup.writableIndexes,
            readonlyIndexes: lookup.readonlyIndexes,
          })),
        }
      : {};
  return {
    signatures: keys.slice(0, signerCount).map((key) => getBase58Decoder().decode(transaction.signatures[key] ?? new Uint8Array(64))),
    message: {
      accountKeys,
      header: {
        numRequiredSignatures: signerCount,
        numReadonlySignedAccounts: message.header.numReadonlySignerAccounts,
        numReadonlyUnsignedAccounts: message.header.numReadonlyNonSignerAccounts,
      },
      recentBlockhash: decoded.recentBlockhash,
      instructions,
      ...lookups,
    },
  };
}

function innerInstructionsJson(outcome: ExecutionOutcome, keys: readonly Address[], parsed: boolean) {
  if (!parsed) return outcome.innerInstructions;
  return outcome.innerInstructions.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map((instruction) => ({
      programId: keys[instruction.programIdIndex],
      accounts: instruction.accounts.map((account) => keys[account]),
      data: instruction.data,
      stackHeight: instruction.stackHeight,
    })),
  }));
}

/** The methods this devnet answers, by name. */
export function createRpcMethods(ledger: SolanaLedger): Record<string, PositionalRpcMethod> {
  const context = () => ({ slot: ledger.currentSlot, apiVersion: AGAVE_VERSION });
  const respond = (value: unknown) => ({ context: context(), value });

  // Every slot here is final: a minContextSlot ahead of the chain is the only thing to refuse.
  const checkMinContextSlot = (config: Config) => {
    if (config.minContextSlot === undefined) return;
    if (unsignedInteger(config.minContextSlot, "minContextSlot") > ledger.currentSlot) {
      throw new RpcError(MIN_CONTEXT_SLOT_NOT_REACHED, "Minimum context slot has not been reached", { contextSlot: ledger.currentSlot });
    }
  };

  const accountJson = (account: Address, config: Config) =>
    accountInfoJson(ledger.getAccount(account), config.encoding as AccountEncoding | undefined, dataSliceOf(config), ledger.decimalsOfMint);

  const simulationJson = (outcome: ExecutionOutcome, config: Config, replacementBlockhash: unknown) => {
    const accountsConfig = config.accounts as { addresses?: unknown[]; encoding?: AccountEncoding } | undefined;
    let accounts: unknown = null;
    if (accountsConfig && outcome.err === null) {
      const addresses = (accountsConfig.addresses ?? []).map((_, index, all) => addressAt(all, index));
      accounts = addresses.map((account) =>
        accountInfoJson(outcome.accountAfter(account), accountsConfig.encoding ?? "base64", undefined, ledger.decimalsOfMint),
      );
    }
    return {
      err: outcome.err,
      logs: outcome.logs,
      accounts,
      unitsConsumed: outcome.unitsConsumed,
      loadedAccountsDataSize: 0,
      returnData: outcome.returnData,
      innerInstructions: config.innerInstructions === true ? outcome.innerInstructions : null,
      replacementBlockhash,
      fee: outcome.fee,
      preBalances: outcome.preBalances,
      postBalances: outcome.postBalances,
      preTokenBalances: outcome.preTokenBalances,
      postTokenBalances: outcome.postTokenBalances,
      loadedAddresses: { readonly: [], writable: [] },
    };
  };

  const landedTransactionJson = (landed: LandedTransaction, config: Config) => {
    const encoding = config.encoding ?? "json";
    const version = landed.decoded.message.version;
    const maxVersion = config.maxSupportedTransactionVersion;
    if (version === 0 && maxVersion === undefined) {
      throw new RpcError(
        UNSUPPORTED_TRANSACTION_VERSION,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    }
    let transaction: unknown;
    if (encoding === "base64") transaction = [getBase64Decoder().decode(landed.decoded.wire), "base64"];
    else if (encoding === "base58") transaction = [getBase58Decoder().decode(landed.decoded.wire), "base58"];
    else if (encoding === "json" || encoding === "jsonParsed") transaction = transactionJson(landed.decoded, encoding === "jsonParsed");
    else throw new RpcError(INVALID_PARAMS, `Invalid params: unsupported encoding ${String(encoding)}`);
    return {
      slot: landed.slot,
      blockTime: landed.blockTime,
      ...(maxVersion === undefined ? {} : { version }),
      transaction,
      meta: {
        err: landed.err,
        status: transactionStatus(landed.err),
        fee: landed.fee,
        preBalances: landed.preBalances,
        postBalances: landed.postBalances,
        innerInstructions: innerInstructionsJson(landed, landed.decoded.message.staticAccounts, encoding === "jsonParsed"),
        logMessages: landed.logs,
        preTokenBalances: landed.preTokenBalances,
        postTokenBalances: landed.postTokenBalances,
        rewards: [],
        loadedAddresses: { writable: [], readonly: [] },
        computeUnitsConsumed: landed.unitsConsumed,
        ...(landed.returnData ? { returnData: landed.returnData } : {}),
      },
    };
  };

  return {
    getHealth: () => "ok",
    getVersion: () => ({ "solana-core": AGAVE_VERSION, "feature-set": FEATURE_SET }),
    getGenesisHash: () => SOLANA_DEVNET_GENESIS_HASH,
    getSlot: (params) => (checkMinContextSlot(configAt(params, 0)), ledger.currentSlot),
    getBlockHeight: (params) => (checkMinContextSlot(configAt(params, 0)), ledger.blockHeight),
    getTransactionCount: () => ledger.transactionCount,
    getEpochInfo: (params) => {
      checkMinContextSlot(configAt(params, 0));
      return {
        absoluteSlot: ledger.currentSlot,
        blockHeight: ledger.blockHeight,
        epoch: ledger.epoch,
        slotIndex: ledger.currentSlot % SLOTS_PER_EPOCH,
        slotsInEpoch: SLOTS_PER_EPOCH,
        transactionCount: ledger.transactionCount,
      };
    },
    getLatestBlockhash: (params) => (checkMinContextSlot(configAt(params, 0)), respond(ledger.latestBlockhash())),
    isBlockhashValid: (params) => {
      const blockhash = stringAt(params, 0, "blockhash");
      checkMinContextSlot(configAt(params, 1));
      return respond(ledger.isBlockhashValid(blockhash));
    },
    // A recent block's header (transactionDetails "none"): what a service reads to learn when a blockhash was issued.
    getBlock: (params) => {
      const slot = unsignedInteger(params[0], "slot");
      const config = configAt(params, 1);
      if (config.transactionDetails !== "none") {
        throw new RpcError(INVALID_PARAMS, 'Invalid params: this devnet answers getBlock with transactionDetails "none" only');
      }
      if (slot > ledger.currentSlot) throw new RpcError(BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
      const found = ledger.blockAt(slot);
      if (!found) throw new RpcError(BLOCK_CLEANED_UP, `Block ${slot} cleaned up, does not exist on node.`);
      const { block, previous } = found;
      return {
        blockhash: block.blockhash,
        previousBlockhash: previous?.blockhash ?? block.blockhash,
        parentSlot: block.slot - 1n,
        blockHeight: block.blockHeight,
        blockTime: block.blockTime,
        ...(config.rewards === false ? {} : { rewards: [] }),
      };
    },
    getMinimumBalanceForRentExemption: (params) => ledger.svm.minimumBalanceForRentExemption(unsignedInteger(params[0] ?? 0, "data length")),
    getBalance: (params) => {
      const account = ledger.getAccount(addressAt(params, 0));
      checkMinContextSlot(configAt(params, 1));
      return respond(account.exists ? BigInt(account.lamports) : 0n);
    },
    getAccountInfo: (params) => {
      const account = addressAt(params, 0);
      const config = configAt(params, 1);
      checkMinContextSlot(config);
      return respond(accountJson(account, config));
    },
    getMultipleAccounts: (params) => {
      const addresses = params[0];
      if (!Array.isArray(addresses)) throw new RpcError(INVALID_PARAMS, "Invalid params: expected an array of addresses");
      if (addresses.length > MAX_MULTIPLE_ACCOUNTS) throw new RpcError(INVALID_PARAMS, `Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
      const config = configAt(params, 1);
      checkMinContextSlot(config);
      return respond(addresses.map((_, index) => accountJson(addressAt(addresses, index), config)));
    },
    getTokenAccountBalance: (params) => {
      const account = ledger.getAccount(addressAt(params, 0));
      checkMinContextSlot(configAt(params, 1));
      if (!account.exists) throw new RpcError(INVALID_PARAMS, "Invalid param: could not find account");
      const token = readTokenAccount(account);
      const decimals = token && ledger.decimalsOfMint(token.mint);
      if (!token || decimals === null) throw new RpcError(INVALID_PARAMS, "Invalid param: not a Token account");
      return respond(tokenAmountJson(token.amount, decimals));
    },
    getFeeForMessage: (params) => {
      const config = configAt(params, 1);
      checkMinContextSlot(config);
      let message: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>["decode"]>;
      try {
        message = getCompiledTransactionMessageDecoder().decode(getBase64Encoder().encode(stringAt(params, 0, "message")));
      } catch (err) {
        if (err instanceof RpcError) throw err;
        throw new RpcError(INVALID_PARAMS, `invalid message: ${(err as Error).message}`);
      }
      if (message.version !== "legacy" && message.version !== 0) throw new RpcError(INVALID_PARAMS, "Invalid params: unsupported message version");
      // A validator prices a message only against a blockhash it still holds.
      return respond(ledger.isBlockhashValid(message.lifetimeToken) ? transactionFee(message) : null);
    },
    simulateTransaction: (params) => {
      const config = configAt(params, 1);
      checkMinContextSlot(config);
      if (config.sigVerify === true && config.replaceRecentBlockhash === true) {
        throw new RpcError(INVALID_PARAMS, "sigVerify may not be used with replaceRecentBlockhash");
      }
      let decoded = decodeTransaction(wireBytes(stringAt(params, 0, "transaction"), config.encoding));
      let replacementBlockhash: unknown = null;
      if (config.replaceRecentBlockhash === true) {
        const latest = ledger.latestBlockhash();
        decoded = withRecentBlockhash(decoded, latest.blockhash);
        replacementBlockhash = latest;
      }
      return respond(simulationJson(ledger.simulate(decoded, config.sigVerify === true), config, replacementBlockhash));
    },
    sendTransaction: (params) => {
      const config = configAt(params, 1);
      checkMinContextSlot(config);
      const decoded = decodeTransaction(wireBytes(stringAt(params, 0, "transaction"), config.encoding));
      if (config.skipPreflight !== true) {
        const preflight = ledger.simulate(decoded, true);
        if (preflight.err !== null) {
          throw new RpcError(
            SEND_TRANSACTION_PREFLIGHT_FAILURE,
            `Transaction simulation failed: ${transactionErrorText(preflight.err)}`,
            simulationJson(preflight, {}, null),
          );
        }
      }
      // Without preflight a validator answers the signature whatever becomes of the transaction.
      ledger.execute(decoded);
      return decoded.signature;
    },
    getSignatureStatuses: (params) => {
      const signatures = params[0];
      if (!Array.isArray(signatures)) throw new RpcError(INVALID_PARAMS, "Invalid params: expected an array of signatures");
      if (signatures.length > MAX_SIGNATURE_STATUSES) throw new RpcError(INVALID_PARAMS, `Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
      const searchTransactionHistory = configAt(params, 1).searchTransactionHistory === true;
      return respond(
        signatures.map((signature, index) => {
          const landed = ledger.landedTransaction(stringAt(signatures, index, "signature"), searchTransactionHistory);
          if (!landed) return null;
          // One slot is final here: nothing can roll a landed transaction back.
          return { slot: landed.slot, confirmations: null, err: landed.err, status: transactionStatus(landed.err), confirmationStatus: "finalized" };
        }),
      );
    },
    getTransaction: (params) => {
      const landed = ledger.landedTransaction(stringAt(params, 0, "signature"));
      const config = configAt(params, 1);
      return landed ? landedTransactionJson(landed, config) : null;
    },
    requestAirdrop: async (params) => {
      const recipient = addressAt(params, 0);
      return ledger.airdrop(recipient, unsignedInteger(params[1], "lamports"));
    },

    // Test cheats. surfnet_setTokenAccount takes surfpool's params: [owner, mint, update, tokenProgram?].
    surfnet_setTokenAccount: async (params) => {
      const owner = addressAt(params, 0);
      const mint = addressAt(params, 1);
      const raw = configAt(params, 2);
      const update: TokenAccountUpdate = {
        amount: raw.amount === undefined ? undefined : unsignedInteger(raw.amount, "amount"),
        delegate: optionalAddress(raw.delegate, "delegate"),
        delegatedAmount: raw.delegatedAmount === undefined ? undefined : unsignedInteger(raw.delegatedAmount, "delegatedAmount"),
        closeAuthority: optionalAddress(raw.closeAuthority, "closeAuthority"),
      };
      if (raw.state !== undefined) {
        if (raw.state !== "initialized" && raw.state !== "frozen") throw new RpcError(INVALID_PARAMS, "Invalid params: state must be initialized or frozen");
        update.state = raw.state;
      }
      await ledger.setTokenAccount(owner, mint, update, params[3] === undefined || params[3] === null ? undefined : addressAt(params, 3));
      return respond(null);
    },
    // This devnet's own: [count] produces that many blocks at once, so blockhashes age without waiting.
    surfnet_advanceBlocks: (params) => {
      const count = params[0] === undefined ? 1n : unsignedInteger(params[0], "count");
      if (count > MAX_BLOCKS_AT_ONCE) throw new RpcError(INVALID_PARAMS, `Invalid params: count must be at most ${MAX_BLOCKS_AT_ONCE}`);
      ledger.advanceBlocks(Number(count));
      return respond({ slot: ledger.currentSlot, blockHeight: ledger.blockHeight });
    },
  };
}
