import { Keypair, Transaction, hash, xdr } from "@stellar/stellar-base";
import { accountIdOf, type AccountRecord } from "./ledger-entries";

/**
 * Transaction envelopes as stellar-core takes them in: decoded from real XDR,
 * hashed with the network id, and checked for validity (what core answers
 * `ERROR` with, before anything runs): operations, bounds, fee, source
 * account, sequence number, envelope signatures, fee balance.
 */

/** The inclusion fee floor: 100 stroops per operation (the networks' base fee when they are not in surge). */
export const BASE_FEE = 100n;

export type TransactionResultCodeName =
  | "txTooEarly"
  | "txTooLate"
  | "txMissingOperation"
  | "txBadSeq"
  | "txBadAuth"
  | "txInsufficientBalance"
  | "txNoAccount"
  | "txInsufficientFee"
  | "txBadAuthExtra"
  | "txNotSupported"
  | "txMalformed";

/** One transaction (the whole of a plain envelope, or a fee bump's inner one). */
export interface InnerTransaction {
  hash: Buffer;
  tx: xdr.Transaction;
  source: string;
  seqNum: bigint;
  fee: bigint;
  signatures: xdr.DecoratedSignature[];
}

export interface ParsedEnvelope {
  /** Hex hash of the envelope (of the fee bump, for a fee bump). */
  hash: string;
  envelope: xdr.TransactionEnvelope;
  envelopeXdr: string;
  inner: InnerTransaction;
  feeBump: { hash: Buffer; feeSource: string; fee: bigint; signatures: xdr.DecoratedSignature[] } | null;
  /** Who pays the fee, and how much at most. */
  feeSource: string;
  fee: bigint;
}

/** What a validity check found wrong: the code, and for a fee bump whose inner transaction is invalid, the inner code. */
export interface Invalid {
  code: TransactionResultCodeName | "txFeeBumpInnerFailed";
  innerCode?: TransactionResultCodeName;
  reason: string;
}

export interface ValidityContext {
  accounts: ReadonlyMap<string, AccountRecord>;
  /** The ledger the transaction would be (or is being) applied in, and its close time (unix seconds). */
  ledgerSeq: number;
  closeTime: number;
  networkId: Buffer;
}

/** A v0 envelope (pre-protocol-13) cannot carry Soroban data: only its hash is computed, through stellar-base. */
function v0Hash(envelope: xdr.TransactionEnvelope, passphrase: string): Buffer {
  return new Transaction(envelope, passphrase).hash();
}

function innerOf(tx: xdr.Transaction, signatures: xdr.DecoratedSignature[], networkId: Buffer): InnerTransaction {
  const payload = new xdr.TransactionSignaturePayload({ networkId, taggedTransaction: xdr.TransactionSignaturePayloadTaggedTransaction.envelopeTypeTx(tx) });
  return { hash: hash(payload.toXDR()), tx, source: accountIdOf(tx.sourceAccount()), seqNum: tx.seqNum().toBigInt(), fee: BigInt(tx.fee()), signatures };
}

/** Decodes a base64 envelope; throws on bytes that are not a TransactionEnvelope. A v0 envelope is answered with its hash only. */
export function parseEnvelope(base64: string, passphrase: string): ParsedEnvelope | { v0Hash: string } {
  const envelope = xdr.TransactionEnvelope.fromXDR(base64, "base64");
  const networkId = hash(Buffer.from(passphrase));
  const envelopeXdr = envelope.toXDR("base64");
  switch (envelope.switch().name) {
    case "envelopeTypeTxV0":
      return { v0Hash: v0Hash(envelope, passphrase).toString("hex") };
    case "envelopeTypeTx": {
      const inner = innerOf(envelope.v1().tx(), envelope.v1().signatures(), networkId);
      return { hash: inner.hash.toString("hex"), envelope, envelopeXdr, inner, feeBump: null, feeSource: inner.source, fee: inner.fee };
    }
    default: {
      const bump = envelope.feeBump();
      const tx = bump.tx();
      const payload = new xdr.TransactionSignaturePayload({
        networkId,
        taggedTransaction: xdr.TransactionSignaturePayloadTaggedTransaction.envelopeTypeTxFeeBump(tx),
      });
      const bumpHash = hash(payload.toXDR());
      const inner = innerOf(tx.innerTx().v1().tx(), tx.innerTx().v1().signatures(), networkId);
      const feeSource = accountIdOf(tx.feeSource());
      const fee = tx.fee().toBigInt();
      return {
        hash: bumpHash.toString("hex"),
        envelope,
        envelopeXdr,
        inner,
        feeBump: { hash: bumpHash, feeSource, fee, signatures: bump.signatures() },
        feeSource,
        fee,
      };
    }
  }
}

/** The resource fee a Soroban transaction declares (0 without Soroban data). */
export function declaredResourceFee(tx: xdr.Transaction): bigint {
  return tx.ext().switch() === 1 ? tx.ext().sorobanData().resourceFee().toBigInt() : 0n;
}

/** The one InvokeHostFunction operation of a valid transaction. */
export function invokeOperation(tx: xdr.Transaction): { op: xdr.InvokeHostFunctionOp; source: string | null } {
  const operation = tx.operations()[0]!;
  const source = operation.sourceAccount();
  return { op: operation.body().invokeHostFunctionOp(), source: source ? accountIdOf(source) : null };
}

/**
 * Checks the envelope signatures against the signers a transaction needs (the stand-in's
 * accounts have one signer each, their master key): each needed signer must have signed,
 * and no signature may be left over.
 */
function checkSignatures(signed: Buffer, signatures: xdr.DecoratedSignature[], signers: string[]): Invalid | null {
  const used = new Set<number>();
  for (const signer of signers) {
    const keypair = Keypair.fromPublicKey(signer);
    const hint = keypair.signatureHint();
    const index = signatures.findIndex((signature) => Buffer.compare(signature.hint(), hint) === 0 && keypair.verify(signed, signature.signature()));
    if (index < 0) return { code: "txBadAuth", reason: `no valid signature of ${signer}` };
    used.add(index);
  }
  if (used.size < signatures.length) return { code: "txBadAuthExtra", reason: "a signature of no needed signer" };
  return null;
}

/** The checks of one transaction (plain, or the inner one of a fee bump), in core's order. */
function checkTransaction(inner: InnerTransaction, context: ValidityContext, paysOwnFee: boolean): Invalid | null {
  const { tx } = inner;
  const operations = tx.operations();
  if (operations.length === 0) return { code: "txMissingOperation", reason: "no operation" };
  const soroban = operations.some((op) => ["invokeHostFunction", "extendFootprintTtl", "restoreFootprint"].includes(op.body().switch().name));
  if (!soroban) return { code: "txNotSupported", reason: "the stand-in takes Soroban transactions only (one InvokeHostFunction)" };
  if (operations.length !== 1) return { code: "txMalformed", reason: "a Soroban transaction has exactly one operation" };
  if (tx.ext().switch() !== 1) return { code: "txMalformed", reason: "a Soroban transaction carries SorobanTransactionData" };
  if (operations[0]!.body().switch().name !== "invokeHostFunction") {
    return { code: "txNotSupported", reason: "the stand-in takes InvokeHostFunction only (no TTL extension or restore: nothing expires here)" };
  }

  const bounds = boundsOf(tx.cond());
  if (bounds === "unsupported") return { code: "txNotSupported", reason: "minSeqAge, minSeqLedgerGap and extraSigners are not modelled by the stand-in" };
  if (bounds.minTime > BigInt(context.closeTime) || bounds.minLedger > context.ledgerSeq)
    return { code: "txTooEarly", reason: "before its time or ledger bounds" };
  if ((bounds.maxTime !== 0n && bounds.maxTime < BigInt(context.closeTime)) || (bounds.maxLedger !== 0 && bounds.maxLedger <= context.ledgerSeq)) {
    return { code: "txTooLate", reason: "after its time or ledger bounds" };
  }

  const resourceFee = declaredResourceFee(tx);
  if (paysOwnFee && inner.fee < resourceFee + BASE_FEE * BigInt(operations.length)) {
    return { code: "txInsufficientFee", reason: `fee ${inner.fee} is below the resource fee ${resourceFee} plus ${BASE_FEE} per operation` };
  }
  const account = context.accounts.get(inner.source);
  if (!account) return { code: "txNoAccount", reason: `source account ${inner.source} does not exist` };
  // With a minSeqNum precondition (CAP-21) a transaction may skip sequence numbers: minSeqNum <= current < its own.
  if (bounds.minSeqNum === null ? inner.seqNum !== account.seqNum + 1n : account.seqNum < bounds.minSeqNum || inner.seqNum <= account.seqNum) {
    return {
      code: "txBadSeq",
      reason: `sequence number ${inner.seqNum} does not follow ${account.seqNum}${bounds.minSeqNum === null ? "" : ` (minSeqNum ${bounds.minSeqNum})`}`,
    };
  }
  const opSource = operations[0]!.sourceAccount();
  const signers = [inner.source];
  if (opSource && accountIdOf(opSource) !== inner.source) {
    if (!context.accounts.has(accountIdOf(opSource))) return { code: "txNoAccount", reason: `operation source ${accountIdOf(opSource)} does not exist` };
    signers.push(accountIdOf(opSource));
  }
  const badSignature = checkSignatures(inner.hash, inner.signatures, signers);
  if (badSignature) return badSignature;
  if (paysOwnFee && account.balance < inner.fee)
    return { code: "txInsufficientBalance", reason: `${inner.source} holds ${account.balance} stroops, less than the fee ${inner.fee}` };
  return null;
}

interface Bounds {
  minSeqNum: bigint | null;
  minTime: bigint;
  maxTime: bigint;
  minLedger: number;
  maxLedger: number;
}

function boundsOf(cond: xdr.Preconditions): Bounds | "unsupported" {
  const none: Bounds = { minSeqNum: null, minTime: 0n, maxTime: 0n, minLedger: 0, maxLedger: 0 };
  const time = (bounds: xdr.TimeBounds | null) => (bounds ? { minTime: bounds.minTime().toBigInt(), maxTime: bounds.maxTime().toBigInt() } : {});
  switch (cond.switch().name) {
    case "precondNone":
      return none;
    case "precondTime":
      return { ...none, ...time(cond.timeBounds()) };
    default: {
      const v2 = cond.v2();
      // The stand-in keeps no sequence age or ledger of an account, nor signers other than the master key.
      if (v2.minSeqAge().toBigInt() !== 0n || v2.minSeqLedgerGap() !== 0 || v2.extraSigners().length > 0) return "unsupported";
      const ledgers = v2.ledgerBounds();
      return {
        ...none,
        minSeqNum: v2.minSeqNum()?.toBigInt() ?? null,
        ...time(v2.timeBounds()),
        ...(ledgers ? { minLedger: ledgers.minLedger(), maxLedger: ledgers.maxLedger() } : {}),
      };
    }
  }
}

/** stellar-core's validity checks of an envelope against the ledger it would apply in; null when valid. */
export function checkValidity(parsed: ParsedEnvelope, context: ValidityContext): Invalid | null {
  const { feeBump, inner } = parsed;
  if (!feeBump) return checkTransaction(inner, context, true);
  const feeSource = context.accounts.get(feeBump.feeSource);
  if (!feeSource) return { code: "txNoAccount", reason: `fee source ${feeBump.feeSource} does not exist` };
  const operations = BigInt(inner.tx.operations().length);
  const resourceFee = declaredResourceFee(inner.tx);
  const innerInclusionRate = operations === 0n ? 0n : (inner.fee - resourceFee) / operations;
  const outerInclusion = feeBump.fee - resourceFee;
  // A fee bump pays for one more "operation" (itself), at a rate no lower than the inner transaction's.
  if (outerInclusion < BASE_FEE * (operations + 1n) || outerInclusion < innerInclusionRate * (operations + 1n)) {
    return { code: "txInsufficientFee", reason: `fee bump fee ${feeBump.fee} is below what it must pay` };
  }
  const badSignature = checkSignatures(feeBump.hash, feeBump.signatures, [feeBump.feeSource]);
  if (badSignature) return badSignature;
  const innerProblem = checkTransaction(inner, context, false);
  if (innerProblem)
    return { code: "txFeeBumpInnerFailed", innerCode: innerProblem.code as TransactionResultCodeName, reason: `inner transaction: ${innerProblem.reason}` };
  if (feeSource.balance < feeBump.fee)
    return { code: "txInsufficientBalance", reason: `${feeBump.feeSource} holds ${feeSource.balance} stroops, less than the fee ${feeBump.fee}` };
  return null;
}
