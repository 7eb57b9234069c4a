import { randomBytes } from "node:crypto";
import { Address, Keypair, StrKey, hash, scValToBigInt, xdr } from "@stellar/stellar-base";
import { i128, nonceEntry, usdcEntry, type AccountRecord, type UsdcRecord } from "./ledger-entries";
import type { NetworkFacts } from "./network";

/**
 * USDC's Stellar Asset Contract, as far as the stand-in runs it: `transfer(from, to, amount)`
 * with the host's authorization rules for classic accounts. Anything else a
 * transaction may invoke (another contract, another function, an upload or a
 * deployment) cannot run here and traps.
 */

/**
 * How many ledgers ahead a signature may expire: the networks' `maxEntryTTL`
 * (3,110,400 ledgers, about 180 days), since the nonce entry must live that long.
 */
export const MAX_SIGNATURE_EXPIRATION_LEDGERS = 3_110_400;

/** The state a call reads and, once it succeeds, writes. */
export interface ContractState {
  accounts: ReadonlyMap<string, AccountRecord>;
  usdc: Map<string, UsdcRecord>;
  /** `${address}/${nonce}` → the ledger the nonce's signature expires at, and the one that used it. */
  nonces: Map<string, { expiration: number; ledger: number }>;
}

export interface CallContext {
  facts: NetworkFacts;
  state: ContractState;
  /** The account the operation runs as (the operation's source, else the transaction's). */
  invoker: string;
  /** The ledger the call runs in (for a simulation, the next one). */
  ledgerSeq: number;
  /**
   * enforce: authorization entries are checked as when the transaction applies;
   * record: there are none, and the simulation answers the ones the call needs.
   */
  authMode: "enforce" | "record";
}

export interface Transfer {
  from: string;
  to: string;
  amount: bigint;
}

export type CallOutcome =
  | {
      ok: true;
      transfer: Transfer;
      /** The asset contract's `transfer` event (CAP-67: topics transfer, from, to, asset; data amount). */
      event: xdr.ContractEvent;
      /** Recorded authorization entries (record mode only). */
      recordedAuth: xdr.SorobanAuthorizationEntry[];
      /** Entry changes the call makes (state then updated or created), for the meta. */
      changes: xdr.LedgerEntryChange[];
      /** Writes the call's effects (balances, nonces) into the state. */
      commit(): void;
    }
  | { ok: false; error: string };

function fail(error: string): CallOutcome {
  return { ok: false, error };
}

const nonceId = (address: string, nonce: xdr.Int64) => `${address}/${nonce.toBigInt()}`;

/** A fresh nonce as the host picks one for a recorded entry: a random non-negative i64. */
function freshNonce(): xdr.Int64 {
  return xdr.Int64.fromString(BigInt.asIntN(64, randomBytes(8).readBigUInt64BE() >> 1n).toString());
}

/** G… or C… from an address ScVal; null for anything else (muxed, claimable balance, pool, non-address). */
function plainAddress(value: xdr.ScVal | undefined): string | null {
  if (value?.switch().name !== "scvAddress") return null;
  const kind = value.address().switch().name;
  if (kind !== "scAddressTypeAccount" && kind !== "scAddressTypeContract") return null;
  return Address.fromScAddress(value.address()).toString();
}

/**
 * The classic account's check of an address credential's signature, as the host does it
 * (`check_account_authentication`): a vector of {public_key, signature}, ordered by
 * key without repeats, each key a signer of the account, each signature ed25519 over
 * sha256 of the authorization preimage, and enough weight. The stand-in's
 * accounts have one signer, their master key (weight 1).
 */
function checkAccountSignature(accountId: string, signature: xdr.ScVal, payload: Buffer): string | null {
  if (signature.switch().name !== "scvVec" || !signature.vec()) return "the signature is not a vector of {public_key, signature}";
  const signatures = signature.vec()!;
  if (signatures.length === 0) return "no signature";
  let previousKey: Buffer | null = null;
  let weight = 0;
  for (const item of signatures) {
    const fields = new Map(
      (item.switch().name === "scvMap" ? (item.map() ?? []) : []).map((entry) => [
        entry.key().switch().name === "scvSymbol" ? entry.key().sym().toString() : "",
        entry.val(),
      ]),
    );
    const publicKey = fields.get("public_key");
    const bytes = fields.get("signature");
    if (fields.size !== 2 || publicKey?.switch().name !== "scvBytes" || bytes?.switch().name !== "scvBytes")
      return "a signature is not {public_key: bytes, signature: bytes}";
    const key = publicKey.bytes();
    if (key.length !== 32 || bytes.bytes().length !== 64) return "a signature has a key or signature of the wrong length";
    if (previousKey !== null && Buffer.compare(previousKey, key) >= 0) return "signatures are not ordered by public key";
    previousKey = key;
    if (StrKey.encodeEd25519PublicKey(key) !== accountId) return `${StrKey.encodeEd25519PublicKey(key)} is not a signer of ${accountId}`;
    if (!Keypair.fromPublicKey(accountId).verify(payload, bytes.bytes())) return "the signature does not verify";
    weight += 1;
  }
  // A master key of weight 1 against a medium threshold of 0 still needs one signature.
  return weight >= 1 ? null : "not enough signing weight";
}

/** Runs an InvokeHostFunction operation against the stand-in's USDC asset contract. */
export function callContract(op: xdr.InvokeHostFunctionOp, context: CallContext): CallOutcome {
  const { facts, state, ledgerSeq } = context;
  const hostFunction = op.hostFunction();
  if (hostFunction.switch().name !== "hostFunctionTypeInvokeContract") {
    return fail("HostError: Error(Context, InvalidAction): the stand-in runs contract calls only (no uploads or deployments)");
  }
  const call = hostFunction.invokeContract();
  const contract = Address.fromScAddress(call.contractAddress()).toString();
  if (contract !== facts.usdcContract) {
    return fail(
      `HostError: Error(Storage, MissingValue): contract ${contract} is not on this ledger (the stand-in runs only USDC's asset contract ${facts.usdcContract})`,
    );
  }
  const functionName = call.functionName().toString();
  if (functionName !== "transfer")
    return fail(`HostError: Error(Context, InvalidAction): USDC's asset contract here answers transfer only, not ${functionName}`);
  const args = call.args();
  const from = plainAddress(args[0]);
  const to = plainAddress(args[1]);
  if (args.length !== 3 || from === null || to === null || args[2]!.switch().name !== "scvI128") {
    return fail("HostError: Error(Value, UnexpectedType): transfer takes (from: G… or C… address, to: G… or C… address, amount: i128)");
  }
  const amount = scValToBigInt(args[2]!);
  if (amount < 0n) return fail(`HostError: Error(Contract, #5): negative amount ${amount}`);

  const authorized = new Set<string>();
  const usedNonces: { address: string; nonce: xdr.Int64; expiration: number }[] = [];
  let recordedAuth: xdr.SorobanAuthorizationEntry[] = [];
  const callXdr = call.toXDR("base64");
  if (context.authMode === "record") {
    if (op.auth().length > 0) return fail("cannot record authorization for an operation that carries authorization entries");
    // What the host records: the invoker authorizes through the transaction's own signature, anyone else by an address credential.
    const invocation = new xdr.SorobanAuthorizedInvocation({
      function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(call),
      subInvocations: [],
    });
    const credentials =
      from === context.invoker
        ? xdr.SorobanCredentials.sorobanCredentialsSourceAccount()
        : xdr.SorobanCredentials.sorobanCredentialsAddress(
            new xdr.SorobanAddressCredentials({
              address: new Address(from).toScAddress(),
              nonce: freshNonce(),
              signatureExpirationLedger: 0,
              signature: xdr.ScVal.scvVoid(),
            }),
          );
    recordedAuth = [new xdr.SorobanAuthorizationEntry({ credentials, rootInvocation: invocation })];
    authorized.add(from);
  } else {
    const networkId = hash(Buffer.from(facts.passphrase));
    for (const entry of op.auth()) {
      const root = entry.rootInvocation();
      if (root.function().switch().name !== "sorobanAuthorizedFunctionTypeContractFn" || root.function().contractFn().toXDR("base64") !== callXdr) {
        return fail("HostError: Error(Auth, InvalidAction): an authorization entry authorizes another call than this transfer");
      }
      if (root.subInvocations().length > 0)
        return fail("HostError: Error(Auth, InvalidAction): an authorization entry has sub-invocations this transfer never makes");
      const credentials = entry.credentials();
      if (credentials.switch().name === "sorobanCredentialsSourceAccount") {
        authorized.add(context.invoker);
        continue;
      }
      const address = credentials.address();
      const signer = Address.fromScAddress(address.address()).toString();
      if (signer !== from) return fail(`HostError: Error(Auth, InvalidAction): an authorization entry of ${signer}, who is not the payer`);
      if (!StrKey.isValidEd25519PublicKey(signer))
        return fail(`HostError: Error(Auth, InvalidAction): ${signer} is a contract account, whose __check_auth the stand-in cannot run`);
      if (!state.accounts.has(signer)) return fail(`HostError: Error(Storage, MissingValue): account ${signer} does not exist`);
      const expiration = address.signatureExpirationLedger();
      if (expiration < ledgerSeq) return fail(`HostError: Error(Auth, InvalidInput): signature expired at ledger ${expiration} (this is ledger ${ledgerSeq})`);
      if (expiration > ledgerSeq + MAX_SIGNATURE_EXPIRATION_LEDGERS - 1) {
        return fail(
          `HostError: Error(Auth, InvalidInput): signature expiration ledger ${expiration} is beyond the largest allowed, ${ledgerSeq + MAX_SIGNATURE_EXPIRATION_LEDGERS - 1}`,
        );
      }
      const nonce = address.nonce();
      if (state.nonces.has(nonceId(signer, nonce)) || usedNonces.some((used) => used.address === signer && used.nonce.toBigInt() === nonce.toBigInt())) {
        return fail(`HostError: Error(Auth, ExistingValue): nonce ${nonce.toBigInt()} of ${signer} was already used`);
      }
      const preimage = xdr.HashIdPreimage.envelopeTypeSorobanAuthorization(
        new xdr.HashIdPreimageSorobanAuthorization({ networkId, nonce, signatureExpirationLedger: expiration, invocation: root }),
      );
      const problem = checkAccountSignature(signer, address.signature(), hash(preimage.toXDR()));
      if (problem !== null) return fail(`HostError: Error(Auth, InvalidAction): ${signer}'s authorization: ${problem}`);
      usedNonces.push({ address: signer, nonce, expiration });
      authorized.add(signer);
    }
    if (!authorized.has(from)) return fail(`HostError: Error(Auth, InvalidAction): ${from} has not authorized this transfer`);
  }

  const holding = (holder: string): UsdcRecord | undefined => state.usdc.get(holder);
  const isAccount = (holder: string) => StrKey.isValidEd25519PublicKey(holder);
  const fromHolding = holding(from);
  const toHolding = holding(to);
  if (isAccount(from) && !fromHolding) return fail(`HostError: Error(Contract, #13): trustline entry is missing for account ${from}`);
  if (isAccount(to) && !toHolding) return fail(`HostError: Error(Contract, #13): trustline entry is missing for account ${to}`);
  const fromBalance = fromHolding?.balance ?? 0n;
  if (fromBalance < amount) return fail(`HostError: Error(Contract, #10): balance is not sufficient to spend: ${fromBalance} < ${amount}`);

  const after = new Map<string, UsdcRecord>([[from, { balance: fromBalance - amount, lastModified: ledgerSeq }]]);
  after.set(to, { balance: (from === to ? fromBalance - amount : (toHolding?.balance ?? 0n)) + amount, lastModified: ledgerSeq });
  const changes: xdr.LedgerEntryChange[] = [];
  for (const [holder, record] of after) {
    const before = holding(holder);
    if (before) changes.push(xdr.LedgerEntryChange.ledgerEntryState(usdcEntry(holder, before, facts.usdcAsset, facts.usdcContract)));
    const entry = usdcEntry(holder, record, facts.usdcAsset, facts.usdcContract);
    changes.push(before ? xdr.LedgerEntryChange.ledgerEntryUpdated(entry) : xdr.LedgerEntryChange.ledgerEntryCreated(entry));
  }
  for (const used of usedNonces) changes.push(xdr.LedgerEntryChange.ledgerEntryCreated(nonceEntry(used.address, used.nonce, ledgerSeq)));

  const event = new xdr.ContractEvent({
    ext: new xdr.ExtensionPoint(0),
    contractId: Address.fromString(facts.usdcContract).toBuffer() as unknown as xdr.ContractId,
    type: xdr.ContractEventType.contract(),
    body: new xdr.ContractEventBody(
      0,
      new xdr.ContractEventV0({
        topics: [
          xdr.ScVal.scvSymbol("transfer"),
          new Address(from).toScVal(),
          new Address(to).toScVal(),
          xdr.ScVal.scvString(`${facts.usdcAsset.getCode()}:${facts.usdcAsset.getIssuer()}`),
        ],
        data: i128(amount),
      }),
    ),
  });
  return {
    ok: true,
    transfer: { from, to, amount },
    event,
    recordedAuth,
    changes,
    commit: () => {
      for (const [holder, record] of after) state.usdc.set(holder, record);
      for (const used of usedNonces) state.nonces.set(nonceId(used.address, used.nonce), { expiration: used.expiration, ledger: ledgerSeq });
    },
  };
}
