import {
  createSolanaRpcFromTransport,
  getAddressFromPublicKey,
  getBase58Decoder,
  getBase64Decoder,
  getShortU16Encoder,
  isSolanaError,
  signBytes,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_CLEANED_UP,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type Address,
  type Base64EncodedWireTransaction,
  type Blockhash,
  type Signature,
  type SolanaRpcApi,
  type Rpc,
} from "@solana/kit";
import { getTokenDecoder } from "@solana-program/token";
import { associatedTokenAddress } from "./associated-token-address";
import {
  assertFeePayerIsolated,
  checkExactSvmPayment,
  DEFAULT_MAX_COMPUTE_UNIT_PRICE,
  DEFAULT_MAX_COMPUTE_UNITS,
  verifyExactSvmPaymentOffline,
  type ExactSvmPolicy,
  type ExactSvmRequirement,
} from "./checks";
import type { ExactSvmPayment } from "./decode";
import { feePayerKeyPair, type FeePayerKeyPair } from "./fee-payer-key";
import { TOKEN_PROGRAM_ADDRESS } from "./programs";
import { SvmPaymentRejected, SvmRejection, SvmSendRefusal, SvmSendRefused } from "./rejections";
import { rpcTransportWithTimeout } from "./rpc-transport";

export interface SvmChainOptions {
  /** CAIP-2 id, e.g. SOLANA_DEVNET. */
  network: string;
  rpcUrl: string;
  usdcMint: string;
  /** Base58 64-byte secret key, or a JSON array of 64 numbers (solana-keygen format). */
  feePayerSecret: string;
  /** How long one JSON-RPC call may take (default 10 s). */
  rpcTimeoutMs?: number;
  /** Microlamports per compute unit a payment may offer (default 5,000,000, the official facilitator's cap). */
  maxComputeUnitPrice?: bigint;
  /** Compute units a payment may ask for (default 200,000). */
  maxComputeUnits?: number;
}

/**
 * Where a transaction stands. "processed": in a block the cluster has not
 * confirmed yet (it may still be dropped with its fork, whatever its outcome
 * there): wait, conclude nothing.
 */
export type SvmTransactionStatus = { state: "confirmed" } | { state: "failed"; error: string } | { state: "processed" } | { state: "unseen" };

/** How often waitFor asks. */
const STATUS_POLL_MS = 200;

/** A validator lands a transaction while the chain is at most this many blocks past its blockhash's block (MAX_PROCESSING_AGE). */
export const BLOCKHASH_MAX_AGE_BLOCKS = 150n;

/** How many recent slots `blocksLeft` reads, newest first, and how many at once. */
const BLOCKHASH_SCAN_SLOTS = 100n;
const BLOCKHASH_SCAN_BATCH = 8n;

const base58Decoder = getBase58Decoder();
const base64Decoder = getBase64Decoder();
const shortU16Encoder = getShortU16Encoder();

/**
 * The Solana side of settlement: the exact SVM payment's checks, the fee
 * payer's co-signature, and sending and following the transaction over
 * JSON-RPC. The fee payer pays only the transaction fee: a payment that names
 * it in any instruction is refused before it is signed. Nothing here knows
 * whether the node is the local devnet or a real cluster.
 */
export class SvmChain {
  readonly network: string;
  readonly usdcMint: string;
  /** The fee payer's address (base58). */
  readonly feePayer: string;
  private readonly policy: ExactSvmPolicy;

  private constructor(
    opts: SvmChainOptions,
    feePayer: string,
    private readonly keyPair: FeePayerKeyPair,
    private readonly rpc: Rpc<SolanaRpcApi>,
  ) {
    this.network = opts.network;
    this.usdcMint = opts.usdcMint;
    this.feePayer = feePayer;
    this.policy = {
      feePayer,
      usdcMint: opts.usdcMint,
      maxComputeUnits: opts.maxComputeUnits ?? DEFAULT_MAX_COMPUTE_UNITS,
      maxComputeUnitPrice: opts.maxComputeUnitPrice ?? DEFAULT_MAX_COMPUTE_UNIT_PRICE,
    };
  }

  /** Async because WebCrypto imports keys asynchronously; it makes no RPC call. */
  static async create(opts: SvmChainOptions): Promise<SvmChain> {
    const keyPair = await feePayerKeyPair(opts.feePayerSecret);
    const feePayer = await getAddressFromPublicKey(keyPair.publicKey);
    const rpc = createSolanaRpcFromTransport(rpcTransportWithTimeout(opts.rpcUrl, opts.rpcTimeoutMs ?? 10_000));
    return new SvmChain(opts, feePayer, keyPair, rpc);
  }

  /** Static checks, no RPC: throws SvmPaymentRejected. */
  check(payment: ExactSvmPayment, requirement: ExactSvmRequirement): void {
    checkExactSvmPayment(payment, requirement, this.policy);
  }

  /**
   * `check`, every signature but the fee payer's verified here, then a
   * simulation of the transaction as it would be sent (co-signed, signature
   * verification on). Nothing is sent. A refusal is SvmPaymentRejected; a
   * failed RPC call is a plain error (the payment was not judged).
   */
  async verify(payment: ExactSvmPayment, requirement: ExactSvmRequirement): Promise<void> {
    await verifyExactSvmPaymentOffline(payment, requirement, this.policy);
    const { wire } = await this.cosign(payment);
    const { value } = await this.rpc
      .simulateTransaction(wire as Base64EncodedWireTransaction, {
        encoding: "base64",
        sigVerify: true,
        replaceRecentBlockhash: false,
        commitment: "confirmed",
      })
      .send();
    if (value.err) {
      const logs = (value.logs ?? []).slice(-3).join(" | ");
      throw new SvmPaymentRejected(SvmRejection.simulationFailed, `The transaction would fail: ${describe(value.err)}${logs ? ` (${logs})` : ""}.`);
    }
  }

  /**
   * The transaction with the fee payer's signature in slot 0 (whatever was
   * there is replaced), and that signature in base58: the transaction id.
   * ed25519 is deterministic, so one message always gets the same id. Call it
   * only for a payment `check` passed; it refuses, whatever the caller did, a
   * transaction whose fee payer is not ours or is named by an instruction.
   */
  async cosign(payment: ExactSvmPayment): Promise<{ wire: string; signature: string }> {
    if (payment.feePayer !== this.feePayer) {
      throw new SvmPaymentRejected(SvmRejection.feePayerMismatch, `The transaction's fee payer is ${payment.feePayer}, not ${this.feePayer}.`);
    }
    assertFeePayerIsolated(payment, this.feePayer);
    const feePayerSignature = new Uint8Array(await signBytes(this.keyPair.privateKey, payment.messageBytes));
    // Wire format: the signature count (compact-u16), the signatures in signer order, the message.
    const signatures = payment.signatures.map((presented, i) => (i === 0 ? feePayerSignature : (presented ?? new Uint8Array(64))));
    const wire = Buffer.concat([Uint8Array.from(shortU16Encoder.encode(signatures.length)), ...signatures, payment.messageBytes]);
    return { wire: base64Decoder.decode(wire), signature: base58Decoder.decode(feePayerSignature) };
  }

  /**
   * Sends a co-signed transaction with preflight on. "Already processed" is
   * success (it is on chain; `statusOf` says how it ended). A refusal before
   * anything landed throws SvmSendRefused; anything else (transport, timeout,
   * an unhealthy node) throws a plain error: the outcome is unknown.
   */
  async send(wire: string): Promise<void> {
    try {
      await this.rpc
        .sendTransaction(wire as Base64EncodedWireTransaction, { encoding: "base64", skipPreflight: false, preflightCommitment: "confirmed" })
        .send();
    } catch (err) {
      if (isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) {
        const cause = err.cause;
        if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)) return;
        if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)) {
          throw new SvmSendRefused(SvmSendRefusal.blockhashNotFound, "The transaction's blockhash has expired: it can never land.");
        }
        throw new SvmSendRefused(SvmSendRefusal.simulationFailed, `The node's preflight refused the transaction: ${err.message}`);
      }
      if (isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE)) {
        throw new SvmSendRefused(SvmSendRefusal.signatureInvalid, `The node refused the transaction's signatures: ${err.message}`);
      }
      throw err;
    }
  }

  /** Where a transaction stands now. A failed call throws: "could not ask" is never "unseen". */
  async statusOf(signature: string): Promise<SvmTransactionStatus> {
    const { value } = await this.rpc.getSignatureStatuses([signature as Signature], { searchTransactionHistory: true }).send();
    const status = value[0];
    if (!status) return { state: "unseen" };
    if (status.confirmationStatus !== "confirmed" && status.confirmationStatus !== "finalized") return { state: "processed" };
    return status.err ? { state: "failed", error: describe(status.err) } : { state: "confirmed" };
  }

  /**
   * Asks until the transaction is confirmed or failed, or timeoutMs has passed
   * (then the last answer: "unseen" or "processed"). A call that fails is
   * asked again; if the last one failed, its error is thrown.
   */
  async waitFor(signature: string, timeoutMs: number): Promise<SvmTransactionStatus> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      let status: SvmTransactionStatus | undefined;
      let failure: unknown;
      try {
        status = await this.statusOf(signature);
        if (status.state === "confirmed" || status.state === "failed") return status;
      } catch (err) {
        failure = err;
      }
      const left = until - Date.now();
      if (left <= 0) {
        if (status) return status;
        throw failure;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(STATUS_POLL_MS, left)));
    }
  }

  /** Whether a transaction with this blockhash can still land: once false, an unseen transaction never will. */
  async blockhashValid(blockhash: string): Promise<boolean> {
    const { value } = await this.rpc.isBlockhashValid(blockhash as Blockhash, { commitment: "processed" }).send();
    return value;
  }

  /**
   * How many more blocks a transaction with this blockhash can land in: read
   * from the block that issued it, found among the last BLOCKHASH_SCAN_SLOTS
   * slots (newest first, a few at a time). Undefined when it is not among
   * them: older than that, or never issued by this cluster. A caller that
   * must finish something before the transaction expires (a relay sale calls
   * its origin first) learns how long it has.
   */
  async blocksLeft(blockhash: string): Promise<bigint | undefined> {
    const [tip, height] = await Promise.all([
      this.rpc.getSlot({ commitment: "confirmed" }).send(),
      this.rpc.getBlockHeight({ commitment: "confirmed" }).send(),
    ]);
    const oldest = tip >= BLOCKHASH_SCAN_SLOTS ? tip - BLOCKHASH_SCAN_SLOTS + 1n : 0n;
    for (let newest = tip; newest >= oldest; newest -= BLOCKHASH_SCAN_BATCH) {
      const slots: bigint[] = [];
      for (let slot = newest; slot >= oldest && slot > newest - BLOCKHASH_SCAN_BATCH; slot--) slots.push(slot);
      const blocks = await Promise.all(slots.map((slot) => this.blockHeader(slot)));
      for (const block of blocks) {
        if (block === "cleaned-up") return undefined;
        if (block?.blockhash === blockhash) {
          const left = block.blockHeight + BLOCKHASH_MAX_AGE_BLOCKS - height;
          return left > 0n ? left : 0n;
        }
      }
    }
    return undefined;
  }

  /** A block's hash and height; undefined for a slot with no block (skipped), "cleaned-up" past what the node keeps. */
  private async blockHeader(slot: bigint): Promise<{ blockhash: string; blockHeight: bigint } | "cleaned-up" | undefined> {
    try {
      const block = await this.rpc
        .getBlock(slot, { transactionDetails: "none", rewards: false, maxSupportedTransactionVersion: 0, commitment: "confirmed" })
        .send();
      return block ? { blockhash: block.blockhash, blockHeight: block.blockHeight } : undefined;
    } catch (err) {
      if (isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_CLEANED_UP)) return "cleaned-up";
      if (
        isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SLOT_SKIPPED) ||
        isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_LONG_TERM_STORAGE_SLOT_SKIPPED) ||
        isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_BLOCK_NOT_AVAILABLE)
      ) {
        return undefined;
      }
      throw err;
    }
  }

  /** The owner's associated USDC account, where payments to it go (the service never creates one). */
  usdcAccountOf(owner: string): string {
    return associatedTokenAddress(owner, this.usdcMint, TOKEN_PROGRAM_ADDRESS);
  }

  /** Whether owner's associated token account for USDC exists (a payout wallet is ready to be paid). */
  async tokenAccountExists(owner: string): Promise<boolean> {
    return (await this.usdcAccount(owner)) !== undefined;
  }

  /** Owner's USDC balance in base units (0 without a token account). */
  async tokenBalance(owner: string): Promise<bigint> {
    return (await this.usdcAccount(owner))?.amount ?? 0n;
  }

  private async usdcAccount(owner: string): Promise<{ amount: bigint } | undefined> {
    const { value } = await this.rpc.getAccountInfo(this.usdcAccountOf(owner) as Address, { encoding: "base64", commitment: "confirmed" }).send();
    if (!value || value.owner !== TOKEN_PROGRAM_ADDRESS) return undefined;
    const token = getTokenDecoder().decode(Buffer.from(value.data[0], "base64"));
    return token.mint === this.usdcMint ? { amount: token.amount } : undefined;
  }

  async ping(): Promise<void> {
    await this.rpc.getSlot({ commitment: "confirmed" }).send();
  }

  /** The latest blockhash and the last block height at which a transaction using it can land. */
  async latestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: bigint }> {
    const { value } = await this.rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
    return { blockhash: value.blockhash, lastValidBlockHeight: value.lastValidBlockHeight };
  }
}

/** A chain error (TransactionError JSON) as one line. */
function describe(err: unknown): string {
  return typeof err === "string" ? err : JSON.stringify(err, (_, v) => (typeof v === "bigint" ? v.toString() : v));
}
