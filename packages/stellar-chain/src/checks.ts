import { Address, hash, Keypair, StrKey, xdr } from "@stellar/stellar-sdk";
import { addressOf, type ExactStellarPayment, type StellarAuthEntry } from "./decode";
import { StellarPaymentRejected, StellarRejection, type StellarRejectionReason } from "./rejections";

/** What the service requires of an exact Stellar payment (from the requirement it issued). */
export interface ExactStellarRequirement {
  payTo: string;
  /** The token contract (C…). */
  asset: string;
  /** Token units (7 decimals for USDC). */
  amount: bigint;
  maxTimeoutSeconds: number;
}

/** The limits this service holds a payment to: whose accounts must stay out of it, which token, how much fee it pays. */
export interface ExactStellarPolicy {
  /** Every account of the service's (the settlement source, the fee-bump payer, channel accounts): none may appear in a payment. */
  serviceAccounts: readonly string[];
  usdcContract: string;
  /** The most a settlement's fee may be, in stroops (the transaction's, or the fee bump's when there is one). */
  maxFeeStroops: bigint;
  /** Seconds per ledger, to turn maxTimeoutSeconds into ledgers. */
  ledgerSeconds: number;
}

/** The official facilitator's fee cap: 50,000 stroops (0.005 XLM). */
export const DEFAULT_MAX_FEE_STROOPS = 50_000n;
/** The spec's fallback estimate of a ledger's duration, which the official client uses when Horizon does not answer. */
export const DEFAULT_LEDGER_SECONDS = 5;
/** Ledgers an authorization may outlast the bound, as in the official facilitator (its client reads the ledger a moment earlier). */
const EXPIRATION_TOLERANCE_LEDGERS = 2;

function reject(reason: StellarRejectionReason, message: string): never {
  throw new StellarPaymentRejected(reason, message);
}

/** The last ledger a payment's authorization may be good for, read at `latestLedger`. */
export function latestExpirationAllowed(requirement: ExactStellarRequirement, policy: ExactStellarPolicy, latestLedger: number): number {
  return latestLedger + Math.ceil(requirement.maxTimeoutSeconds / policy.ledgerSeconds) + EXPIRATION_TOLERANCE_LEDGERS;
}

/** The payer's authorization entry: the one entry with address credentials for `from` (undefined when there is none). */
export function payerAuthEntry(payment: ExactStellarPayment): StellarAuthEntry | undefined {
  return payment.authEntries.find((entry) => entry.credentials === "address" && entry.address === payment.payer);
}

/**
 * The static checks of an exact Stellar payment against the requirement it
 * answers, at `latestLedger`, throwing StellarPaymentRejected: the official
 * 2.9 facilitator's rules and codes (its order) and stricter ones of ours —
 * the asset is this chain's USDC; the operation names no source; exactly
 * one authorization entry, the payer's, authorizing exactly the transfer the
 * transaction calls and not yet expired. Its signature is only seen to be
 * there; `verifyPayerSignature` checks it. The simulation's rules are
 * `checkSimulatedTransfer`'s. `latestLedger` null: no ledger is known (no
 * chain is asked, `verifyExactStellarPaymentWithoutChain`), and the
 * authorizations' ledgers (expired, good for too long) are not judged.
 */
export function checkExactStellarPayment(
  payment: ExactStellarPayment,
  requirement: ExactStellarRequirement,
  policy: ExactStellarPolicy,
  latestLedger: number | null,
): void {
  const service = new Set(policy.serviceAccounts);
  // The payload's source and the operation's are replaced when settling; the official rule refuses ours, and
  // c402 refuses any operation source: the settlement's operation has none.
  if (service.has(payment.sourceAccount)) reject(StellarRejection.unsafeSource, "The transaction's source is the facilitator's account.");
  if (payment.operationSource !== undefined) {
    reject(StellarRejection.unsafeSource, `The operation names a source (${payment.operationSource}); an exact payment's operation has none.`);
  }
  if (payment.contract !== requirement.asset || requirement.asset !== policy.usdcContract) {
    reject(StellarRejection.wrongAsset, `The transaction calls ${payment.contract}, not ${requirement.asset}.`);
  }
  if (service.has(payment.payer)) reject(StellarRejection.facilitatorIsPayer, "The transfer's from is the facilitator's account.");
  if (payment.payTo !== requirement.payTo) reject(StellarRejection.wrongRecipient, `The transfer pays ${payment.payTo}, not ${requirement.payTo}.`);
  if (payment.amount !== requirement.amount) reject(StellarRejection.wrongAmount, `The transfer moves ${payment.amount} units, not ${requirement.amount}.`);
  if (payment.fee > policy.maxFeeStroops) {
    reject(StellarRejection.feeExceedsMaximum, `The transaction's fee is ${payment.fee} stroops; at most ${policy.maxFeeStroops} are paid.`);
  }
  const ledgers = latestLedger === null ? null : { lastExpiration: latestExpirationAllowed(requirement, policy, latestLedger), latestLedger };
  checkAuthEntries(payment, service, ledgers);
}

/** `ledgers`: the last ledger an authorization may be good for and the latest closed one; null when no ledger is known. */
function checkAuthEntries(payment: ExactStellarPayment, service: ReadonlySet<string>, ledgers: { lastExpiration: number; latestLedger: number } | null): void {
  if (payment.authEntries.length === 0) reject(StellarRejection.noAuthEntries, "The operation carries no authorization entry.");
  for (const entry of payment.authEntries) {
    // Source-account credentials would be authorized by the settlement's source: the service's account.
    if (entry.credentials !== "address") {
      reject(StellarRejection.unsupportedCredentialType, "An authorization entry uses source-account credentials; only address credentials are taken.");
    }
    if (service.has(entry.address!)) reject(StellarRejection.facilitatorInAuth, "An authorization entry is the facilitator's.");
    const expiration = entry.signatureExpirationLedger!;
    if (ledgers && expiration > ledgers.lastExpiration) {
      reject(StellarRejection.expirationTooFar, `An authorization is good until ledger ${expiration}; the payment's timeout allows ${ledgers.lastExpiration}.`);
    }
    if (entry.subInvocations > 0) reject(StellarRejection.hasSubinvocations, "An authorization entry authorizes sub-invocations besides the transfer.");
  }
  const payer = payerAuthEntry(payment);
  if (!payer?.signed) reject(StellarRejection.missingPayerSignature, "The payer has not signed an authorization for the transfer.");
  const others = payment.authEntries.filter((entry) => entry !== payer);
  if (others.some((entry) => !entry.signed)) {
    reject(StellarRejection.unexpectedPendingSignatures, "An authorization entry besides the payer's is waiting for a signature.");
  }
  if (others.length > 0) reject(StellarRejection.unexpectedAuthEntries, "The operation carries authorization entries besides the payer's.");
  if (!authorizesExactly(payer.entry, payment.hostFunction)) {
    reject(StellarRejection.authInvocationMismatch, "The payer's authorization is for another call than the transaction's transfer.");
  }
  // The transfer is applied in the next ledger at the earliest; the host refuses an authorization past its last ledger.
  if (ledgers && payer.signatureExpirationLedger! <= ledgers.latestLedger) {
    reject(
      StellarRejection.signatureExpired,
      `The payer's authorization expired at ledger ${payer.signatureExpirationLedger}; ledger ${ledgers.latestLedger} is closed.`,
    );
  }
}

/** The entry authorizes the very contract call the operation makes (same contract, function and arguments, byte for byte). */
function authorizesExactly(entry: xdr.SorobanAuthorizationEntry, hostFunction: xdr.HostFunction): boolean {
  const authorized = entry.rootInvocation().function();
  if (authorized.switch() !== xdr.SorobanAuthorizedFunctionType.sorobanAuthorizedFunctionTypeContractFn()) return false;
  return authorized.contractFn().toXDR().equals(hostFunction.invokeContract().toXDR());
}

/**
 * The payer's signature on its authorization entry, checked offline when the
 * payer is an account (G…): the signature value is Soroban's account form
 * (one `{ public_key, signature }`), the key is the payer's own, and the
 * ed25519 signature verifies over the entry's preimage for this network
 * (network id, nonce, expiration ledger, invocation) — so a payment signed
 * for another network is refused here. A contract payer (C…) authorizes in
 * its own `__check_auth`, which only the simulation runs.
 */
export function verifyPayerSignature(payment: ExactStellarPayment): void {
  const entry = payerAuthEntry(payment);
  if (!entry?.signed) reject(StellarRejection.missingPayerSignature, "The payer has not signed an authorization for the transfer.");
  if (!StrKey.isValidEd25519PublicKey(payment.payer)) return;
  const credentials = entry.entry.credentials().address();
  const invalid = (why: string) => reject(StellarRejection.signatureInvalid, `The payer's authorization signature ${why}.`);
  const signatures = credentials.signature();
  if (signatures.switch() !== xdr.ScValType.scvVec() || signatures.vec()!.length !== 1) invalid("is not one account signature");
  const fields = signatures.vec()![0]!;
  if (fields.switch() !== xdr.ScValType.scvMap()) invalid("is not an account signature");
  const field = (name: string) =>
    fields
      .map()!
      .find((e) => e.key().switch() === xdr.ScValType.scvSymbol() && e.key().sym().toString() === name)
      ?.val();
  const publicKey = field("public_key");
  const signature = field("signature");
  if (fields.map()!.length !== 2 || publicKey?.switch() !== xdr.ScValType.scvBytes() || signature?.switch() !== xdr.ScValType.scvBytes()) {
    invalid("is not an account signature ({ public_key, signature })");
  }
  if (!publicKey!.bytes().equals(StrKey.decodeEd25519PublicKey(payment.payer))) invalid("is by another key than the payer's");
  const preimage = xdr.HashIdPreimage.envelopeTypeSorobanAuthorization(
    new xdr.HashIdPreimageSorobanAuthorization({
      networkId: hash(Buffer.from(payment.networkPassphrase)),
      nonce: credentials.nonce(),
      signatureExpirationLedger: credentials.signatureExpirationLedger(),
      invocation: entry.entry.rootInvocation(),
    }),
  );
  let valid = false;
  try {
    valid = Keypair.fromPublicKey(payment.payer).verify(hash(preimage.toXDR()), signature!.bytes());
  } catch {}
  if (!valid) invalid("does not verify for this network");
}

/**
 * Everything that can be judged of a payment without simulating it: the
 * static checks at `latestLedger`, then the payer's signature.
 */
export function verifyExactStellarPaymentOffline(
  payment: ExactStellarPayment,
  requirement: ExactStellarRequirement,
  policy: ExactStellarPolicy,
  latestLedger: number,
): void {
  checkExactStellarPayment(payment, requirement, policy, latestLedger);
  verifyPayerSignature(payment);
}

/**
 * Everything that can be judged of a payment with no chain at all (a
 * rehearsal, which is never submitted, ADR 5): the static checks but the
 * authorization's ledgers (no ledger is read); in place of the simulated
 * footprint's rule, the transfer's `to` (the one balance it writes besides
 * the payer's) is none of the service's accounts; then the payer's
 * signature, which must be an account's (G…): a contract payer authorizes in
 * its own `__check_auth`, which only a simulation runs, so it is refused here.
 */
export function verifyExactStellarPaymentWithoutChain(payment: ExactStellarPayment, requirement: ExactStellarRequirement, policy: ExactStellarPolicy): void {
  checkExactStellarPayment(payment, requirement, policy, null);
  if (policy.serviceAccounts.includes(payment.payTo)) {
    reject(StellarRejection.facilitatorInFootprint, `The transfer would write a balance of the facilitator's account ${payment.payTo}.`);
  }
  if (!StrKey.isValidEd25519PublicKey(payment.payer)) {
    reject(
      StellarRejection.signatureInvalid,
      `The payer ${payment.payer} is a contract, whose authorization only a simulation can check; pay from an account (G…).`,
    );
  }
  verifyPayerSignature(payment);
}

/** What a successful simulation of the settlement says: its minimum resource fee, its events, its footprint. */
export interface SimulatedTransfer {
  minResourceFee: bigint;
  events: readonly xdr.DiagnosticEvent[];
  footprint: readonly xdr.LedgerKey[];
}

/**
 * The official facilitator's rules on the simulation: the payment's declared
 * fee covers the minimum resource fee, and its contract events are exactly
 * one `transfer` of the asset, from the payer to payTo of the amount (so no
 * other balance changes); plus ours: the footprint names none of the
 * service's accounts.
 */
export function checkSimulatedTransfer(
  payment: ExactStellarPayment,
  requirement: ExactStellarRequirement,
  simulated: SimulatedTransfer,
  policy: ExactStellarPolicy,
): void {
  if (payment.fee < simulated.minResourceFee) {
    reject(StellarRejection.feeBelowMinimum, `The transaction's fee ${payment.fee} is below the simulated resource fee ${simulated.minResourceFee}.`);
  }
  checkTransferEvents(simulated.events, payment.payer, requirement);
  const service = new Set(policy.serviceAccounts);
  for (const key of simulated.footprint) {
    const named = accountsOfLedgerKey(key).find((account) => service.has(account));
    if (named) reject(StellarRejection.facilitatorInFootprint, `The transfer would read or write a ledger entry of the facilitator's account ${named}.`);
  }
}

function checkTransferEvents(events: readonly xdr.DiagnosticEvent[], payer: string, requirement: ExactStellarRequirement): void {
  const transfers: { from?: string; to?: string; amount?: bigint }[] = [];
  for (const diagnostic of events) {
    const event = diagnostic.event();
    if (event.type() !== xdr.ContractEventType.contract()) continue;
    const body = event.body().v0();
    const topics = body.topics();
    if (topics.length < 3 || topics[0]!.switch() !== xdr.ScValType.scvSymbol() || topics[0]!.sym().toString() !== "transfer") {
      reject(StellarRejection.eventNotTransfer, "The simulation emits a contract event that is not a transfer.");
    }
    const contractId = event.contractId();
    if (!contractId) reject(StellarRejection.eventMissingContractId, "The simulation's transfer event names no contract.");
    if (Address.fromScAddress(xdr.ScAddress.scAddressTypeContract(contractId)).toString() !== requirement.asset) {
      reject(StellarRejection.eventWrongAsset, "The simulation's transfer event is of another token.");
    }
    const data = body.data();
    transfers.push({
      from: addressOf(topics[1]!),
      to: addressOf(topics[2]!),
      amount: data.switch() === xdr.ScValType.scvI128() ? i128(data) : undefined,
    });
  }
  if (transfers.length === 0) reject(StellarRejection.noTransferEvents, "The simulation emits no transfer event.");
  if (transfers.length > 1) reject(StellarRejection.multipleTransfers, `The simulation emits ${transfers.length} transfer events; a payment is one.`);
  const [transfer] = transfers as [{ from?: string; to?: string; amount?: bigint }];
  if (transfer.from !== payer) reject(StellarRejection.eventWrongFrom, "The simulated transfer is not from the payer.");
  if (transfer.to !== requirement.payTo) reject(StellarRejection.eventWrongTo, "The simulated transfer does not pay payTo.");
  if (transfer.amount !== requirement.amount) reject(StellarRejection.eventWrongAmount, "The simulated transfer moves another amount.");
}

function i128(value: xdr.ScVal): bigint {
  const parts = value.i128();
  return (parts.hi().toBigInt() << 64n) | parts.lo().toBigInt();
}

/** The accounts (G…) and addresses a ledger key belongs to or names. */
function accountsOfLedgerKey(key: xdr.LedgerKey): string[] {
  const account = (id: xdr.AccountId) => StrKey.encodeEd25519PublicKey(id.ed25519());
  switch (key.switch()) {
    case xdr.LedgerEntryType.account():
      return [account(key.account().accountId())];
    case xdr.LedgerEntryType.trustline():
      return [account(key.trustLine().accountId())];
    case xdr.LedgerEntryType.offer():
      return [account(key.offer().sellerId())];
    case xdr.LedgerEntryType.data():
      return [account(key.data().accountId())];
    case xdr.LedgerEntryType.contractData():
      return [Address.fromScAddress(key.contractData().contract()).toString(), ...addressesIn(key.contractData().key())];
    default:
      return [];
  }
}

/** Every address inside a value (a balance key is `["Balance", address]`), depth-bounded. */
function addressesIn(value: xdr.ScVal, depth = 0): string[] {
  if (depth > 8) return [];
  switch (value.switch()) {
    case xdr.ScValType.scvAddress():
      return [Address.fromScAddress(value.address()).toString()];
    case xdr.ScValType.scvVec():
      return (value.vec() ?? []).flatMap((v) => addressesIn(v, depth + 1));
    case xdr.ScValType.scvMap():
      return (value.map() ?? []).flatMap((e) => [...addressesIn(e.key(), depth + 1), ...addressesIn(e.val(), depth + 1)]);
    default:
      return [];
  }
}
