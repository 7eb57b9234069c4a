import { Address, StrKey, hash, xdr } from "@stellar/stellar-base";
import { INVALID_PARAMS, RpcError } from "@c402/json-rpc-server";
import { accountEntry, nonceEntry, usdcEntry, usdcKey, type AccountRecord, type UsdcRecord } from "./ledger-entries";
import { PROTOCOL_VERSION, type NetworkFacts } from "./network";
import { appliedResult, errorDiagnostic, feeEvent, invalidResult, transactionMeta } from "./results";
import { checkValidity, invokeOperation, parseEnvelope, type Invalid, type ParsedEnvelope } from "./transactions";
import { callContract, type CallOutcome, type ContractState, type Transfer } from "./usdc-contract";

/**
 * The stand-in's ledger: accounts, USDC holdings and nonces, transactions
 * waiting for the next ledger, and the ledgers closed so far. A ledger
 * closes on a timer (or on demand); each one applies the transactions sent
 * since the last, in the order they came, after checking again that they are
 * still valid (a transaction that no longer is is dropped, as core drops it).
 */

/** A transaction a ledger included, with what getTransaction answers about it. */
export interface IncludedTransaction {
  hash: string;
  ledger: number;
  createdAt: number;
  applicationOrder: number;
  feeBump: boolean;
  successful: boolean;
  envelopeXdr: string;
  resultXdr: string;
  resultMetaXdr: string;
  diagnosticEventsXdr: string[];
  contractEventsXdr: string[][];
  transactionEventsXdr: string[];
}

export interface ClosedLedger {
  sequence: number;
  /** Hex SHA-256 of the ledger header. */
  hash: string;
  /** Unix seconds. */
  closeTime: number;
  headerXdr: string;
  metadataXdr: string;
}

export interface TransferRecord extends Transfer {
  hash: string;
  ledger: number;
}

export type SendOutcome =
  | { status: "PENDING" | "DUPLICATE" | "TRY_AGAIN_LATER"; hash: string }
  | { status: "ERROR"; hash: string; errorResultXdr: string; diagnosticEventsXdr: string[] };

export interface LedgerOptions {
  firstLedger: number;
  /** Ledgers whose transactions getTransaction still finds (stellar-rpc's default: 17,280, a day of 5 s ledgers). */
  retentionLedgers: number;
}

const ZERO_HASH = Buffer.alloc(32);
/** Persistent entries here never expire: they answer the longest time to live the networks allow. */
const MAX_ENTRY_TTL = 3_110_400;
const TOTAL_COINS = 1_000_000_000_000_000_000n;
const BASE_RESERVE = 5_000_000;
const int64 = (value: bigint) => xdr.Int64.fromString(value.toString());
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The holder in an asset contract's balance key `["Balance", holder]`, or null for another key. */
function balanceHolder(key: xdr.ScVal): string | null {
  const parts = key.switch().name === "scvVec" ? (key.vec() ?? []) : [];
  if (parts.length !== 2 || parts[0]!.switch().name !== "scvSymbol" || parts[0]!.sym().toString() !== "Balance" || parts[1]!.switch().name !== "scvAddress")
    return null;
  return Address.fromScAddress(parts[1]!.address()).toString();
}

export class StellarLedger implements ContractState {
  readonly accounts = new Map<string, AccountRecord>();
  readonly usdc = new Map<string, UsdcRecord>();
  readonly nonces = new Map<string, { expiration: number; ledger: number }>();
  private pending: ParsedEnvelope[] = [];
  private readonly included = new Map<string, IncludedTransaction>();
  private readonly transferLog: TransferRecord[] = [];
  private readonly closed: { sequence: number; closeTime: number; hashes: string[] }[] = [];
  private latestLedger: ClosedLedger;
  private feePool = 0n;
  private readonly networkId: Buffer;
  /** Failures armed by failNextTransaction, in the order armed: each the account it waits for (null: any transaction). */
  private readonly armedFailures: (string | null)[] = [];

  constructor(
    readonly facts: NetworkFacts,
    private readonly options: LedgerOptions,
  ) {
    this.networkId = hash(Buffer.from(facts.passphrase));
    this.latestLedger = this.writeLedger(options.firstLedger, nowSeconds(), ZERO_HASH, [], []);
    this.closed.push({ sequence: options.firstLedger, closeTime: this.latestLedger.closeTime, hashes: [] });
  }

  get latest(): ClosedLedger {
    return this.latestLedger;
  }

  get oldest(): { sequence: number; closeTime: number } {
    return this.closed[0]!;
  }

  /** Creates the account with `stroops` XLM, or adds them to it. Its first sequence number is the ledger's, shifted 32 bits, as on the network. */
  fundAccount(accountId: string, stroops: bigint): void {
    if (!StrKey.isValidEd25519PublicKey(accountId)) throw new Error(`not an account id (G…): ${accountId}`);
    if (stroops < 0n) throw new Error("stroops must not be negative");
    const sequence = this.latestLedger.sequence;
    const account = this.accounts.get(accountId);
    if (account) this.accounts.set(accountId, { ...account, balance: account.balance + stroops, lastModified: sequence });
    else this.accounts.set(accountId, { accountId, balance: stroops, seqNum: BigInt(sequence) << 32n, lastModified: sequence });
  }

  /** Adds USDC to a holding, creating it (an account's trustline needs the account to exist). */
  mintUsdc(holder: string, amount: bigint): void {
    if (amount < 0n) throw new Error("amount must not be negative");
    if (StrKey.isValidEd25519PublicKey(holder)) {
      if (!this.accounts.has(holder)) throw new Error(`${holder} has no account: fund it first (a trustline belongs to an account)`);
    } else if (!StrKey.isValidContract(holder)) {
      throw new Error(`not an account (G…) or contract (C…) address: ${holder}`);
    }
    this.usdc.set(holder, { balance: (this.usdc.get(holder)?.balance ?? 0n) + amount, lastModified: this.latestLedger.sequence });
  }

  /**
   * Makes the next transaction to apply whose source, operation source or fee
   * source is `source` (any transaction when null) land FAILED, its call
   * trapping as a contract call traps on the network: txFAILED /
   * INVOKE_HOST_FUNCTION_TRAPPED, the fee charged, the sequence number used,
   * nothing moved, no nonce spent. Each call arms one failure; a transaction
   * refused or dropped before it applies uses none.
   */
  failNextTransaction(source: string | null): void {
    if (source !== null && !StrKey.isValidEd25519PublicKey(source)) throw new Error(`not an account id (G…): ${source}`);
    this.armedFailures.push(source);
  }

  /** Takes the first armed failure waiting for one of `parties` (or for any transaction), if there is one. */
  private takeArmedFailure(parties: string[]): boolean {
    const index = this.armedFailures.findIndex((source) => source === null || parties.includes(source));
    if (index < 0) return false;
    this.armedFailures.splice(index, 1);
    return true;
  }

  usdcBalance(holder: string): bigint {
    return this.usdc.get(holder)?.balance ?? 0n;
  }

  transfers(): ReadonlyArray<TransferRecord> {
    return this.transferLog;
  }

  transaction(hashHex: string): IncludedTransaction | undefined {
    return this.included.get(hashHex);
  }

  /** sendTransaction: checks the envelope as core would and queues it for the next ledger. */
  send(base64: string): SendOutcome {
    let parsed: ReturnType<typeof parseEnvelope>;
    try {
      parsed = parseEnvelope(base64, this.facts.passphrase);
    } catch {
      throw new RpcError(INVALID_PARAMS, "invalid_xdr");
    }
    if ("v0Hash" in parsed) {
      return this.refused(parsed.v0Hash, { code: "txNotSupported", reason: "v0 envelopes cannot carry Soroban data" }, 0n, ZERO_HASH);
    }
    if (this.pending.some((queued) => queued.hash === parsed.hash)) return { status: "DUPLICATE", hash: parsed.hash };
    // Core queues one transaction per account at a time: another waits for the next ledger.
    const parties = new Set([parsed.inner.source, parsed.feeSource]);
    if (this.pending.some((queued) => parties.has(queued.inner.source) || parties.has(queued.feeSource)))
      return { status: "TRY_AGAIN_LATER", hash: parsed.hash };
    const invalid = checkValidity(parsed, {
      accounts: this.accounts,
      ledgerSeq: this.latestLedger.sequence + 1,
      closeTime: nowSeconds(),
      networkId: this.networkId,
    });
    if (invalid) return this.refused(parsed.hash, invalid, parsed.fee, parsed.inner.hash);
    this.pending.push(parsed);
    return { status: "PENDING", hash: parsed.hash };
  }

  private refused(hashHex: string, invalid: Invalid, fee: bigint, innerHash: Buffer): SendOutcome {
    return {
      status: "ERROR",
      hash: hashHex,
      errorResultXdr: invalidResult(invalid, fee, innerHash).toXDR("base64"),
      diagnosticEventsXdr: [errorDiagnostic(invalid.reason).toXDR("base64")],
    };
  }

  /** Closes the next ledger: applies the transactions waiting that are still valid, in the order they came. */
  closeLedger(): ClosedLedger {
    const sequence = this.latestLedger.sequence + 1;
    // Close times never go back; two ledgers closed within a second share one.
    const closeTime = Math.max(nowSeconds(), this.latestLedger.closeTime);
    const waiting = this.pending;
    this.pending = [];
    const processed: xdr.TransactionResultMetaV1[] = [];
    const envelopes: xdr.TransactionEnvelope[] = [];
    for (const parsed of waiting) {
      if (checkValidity(parsed, { accounts: this.accounts, ledgerSeq: sequence, closeTime, networkId: this.networkId })) continue;
      envelopes.push(parsed.envelope);
      processed.push(this.apply(parsed, sequence, closeTime, processed.length + 1));
    }
    this.latestLedger = this.writeLedger(sequence, closeTime, Buffer.from(this.latestLedger.hash, "hex"), envelopes, processed);
    this.closed.push({ sequence, closeTime, hashes: processed.map((meta) => meta.result().transactionHash().toString("hex")) });
    this.forgetOldLedgers(sequence);
    return this.latestLedger;
  }

  /** Applies a valid transaction: charges the fee, takes the sequence number, runs the call; a failed call still pays. */
  private apply(parsed: ParsedEnvelope, sequence: number, closeTime: number, applicationOrder: number): xdr.TransactionResultMetaV1 {
    const entryOf = (accountId: string) => accountEntry(this.accounts.get(accountId)!, this.usdc.has(accountId));
    const update = (accountId: string, change: (account: AccountRecord) => Partial<AccountRecord>): xdr.LedgerEntryChange[] => {
      const before = entryOf(accountId);
      const account = this.accounts.get(accountId)!;
      this.accounts.set(accountId, { ...account, ...change(account), lastModified: sequence });
      return [xdr.LedgerEntryChange.ledgerEntryState(before), xdr.LedgerEntryChange.ledgerEntryUpdated(entryOf(accountId))];
    };
    const feeProcessing = update(parsed.feeSource, (account) => ({ balance: account.balance - parsed.fee }));
    this.feePool += parsed.fee;
    const txChangesBefore = update(parsed.inner.source, () => ({ seqNum: parsed.inner.seqNum }));

    const { op, source } = invokeOperation(parsed.inner.tx);
    const invoker = source ?? parsed.inner.source;
    const outcome: CallOutcome = this.takeArmedFailure([parsed.inner.source, invoker, parsed.feeSource])
      ? { ok: false, error: "HostError: Error(WasmVm, InvalidAction): the call trapped (the stand-in was told to fail this transaction: failNextTransaction)" }
      : callContract(op, { facts: this.facts, state: this, invoker, ledgerSeq: sequence, authMode: "enforce" });
    if (outcome.ok) {
      outcome.commit();
      this.transferLog.push({ ...outcome.transfer, hash: parsed.hash, ledger: sequence });
    }
    const events = outcome.ok ? [outcome.event] : null;
    const result = appliedResult({ events, feeCharged: parsed.fee, feeBumpInnerHash: parsed.feeBump ? parsed.inner.hash : null });
    const fee = feeEvent(this.facts.nativeContract, parsed.feeSource, parsed.fee);
    const diagnostics = outcome.ok ? [] : [errorDiagnostic(outcome.error)];
    const meta = transactionMeta({
      succeeded: outcome.ok,
      txChangesBefore,
      operationChanges: outcome.ok ? outcome.changes : [],
      operationEvents: events ?? [],
      transactionEvents: [fee],
      diagnosticEvents: diagnostics,
    });
    this.included.set(parsed.hash, {
      hash: parsed.hash,
      ledger: sequence,
      createdAt: closeTime,
      applicationOrder,
      feeBump: parsed.feeBump !== null,
      successful: outcome.ok,
      envelopeXdr: parsed.envelopeXdr,
      resultXdr: result.toXDR("base64"),
      resultMetaXdr: meta.toXDR("base64"),
      diagnosticEventsXdr: diagnostics.map((event) => event.toXDR("base64")),
      contractEventsXdr: events ? [events.map((event) => event.toXDR("base64"))] : [],
      transactionEventsXdr: [fee.toXDR("base64")],
    });
    return new xdr.TransactionResultMetaV1({
      ext: new xdr.ExtensionPoint(0),
      result: new xdr.TransactionResultPair({ transactionHash: Buffer.from(parsed.hash, "hex"), result }),
      feeProcessing,
      txApplyProcessing: meta,
      postTxApplyFeeProcessing: [],
    });
  }

  /** The header and close meta of a ledger, chained to the previous one by its hash. */
  private writeLedger(
    sequence: number,
    closeTime: number,
    previousHash: Buffer,
    envelopes: xdr.TransactionEnvelope[],
    processed: xdr.TransactionResultMetaV1[],
  ): ClosedLedger {
    const txSet = new xdr.GeneralizedTransactionSet(
      1,
      new xdr.TransactionSetV1({
        previousLedgerHash: previousHash,
        phases: [
          new xdr.TransactionPhase(0, []),
          new xdr.TransactionPhase(1, new xdr.ParallelTxsComponent({ baseFee: int64(100n), executionStages: envelopes.length > 0 ? [[envelopes]] : [] })),
        ],
      }),
    );
    const resultSet = new xdr.TransactionResultSet({ results: processed.map((meta) => meta.result()) });
    const header = new xdr.LedgerHeader({
      ledgerVersion: PROTOCOL_VERSION,
      previousLedgerHash: previousHash,
      scpValue: new xdr.StellarValue({
        txSetHash: hash(txSet.toXDR()),
        closeTime: xdr.Uint64.fromString(String(closeTime)),
        upgrades: [],
        ext: xdr.StellarValueExt.stellarValueBasic(),
      }),
      txSetResultHash: hash(resultSet.toXDR()),
      // The stand-in keeps no bucket list.
      bucketListHash: ZERO_HASH,
      ledgerSeq: sequence,
      totalCoins: int64(TOTAL_COINS),
      feePool: int64(this.feePool),
      inflationSeq: 0,
      idPool: xdr.Uint64.fromString("0"),
      baseFee: 100,
      baseReserve: BASE_RESERVE,
      maxTxSetSize: 1000,
      skipList: [ZERO_HASH, ZERO_HASH, ZERO_HASH, ZERO_HASH],
      ext: new xdr.LedgerHeaderExt(0),
    });
    const headerHash = hash(header.toXDR());
    const meta = new xdr.LedgerCloseMeta(
      2,
      new xdr.LedgerCloseMetaV2({
        ext: new xdr.LedgerCloseMetaExt(0),
        ledgerHeader: new xdr.LedgerHeaderHistoryEntry({ hash: headerHash, header, ext: new xdr.LedgerHeaderHistoryEntryExt(0) }),
        txSet,
        txProcessing: processed,
        upgradesProcessing: [],
        scpInfo: [],
        totalByteSizeOfLiveSorobanState: xdr.Uint64.fromString("0"),
        evictedKeys: [],
      }),
    );
    return { sequence, hash: headerHash.toString("hex"), closeTime, headerXdr: header.toXDR("base64"), metadataXdr: meta.toXDR("base64") };
  }

  /** Transactions older than the retention window are forgotten (NOT_FOUND), and so are nonces whose signatures expired. */
  private forgetOldLedgers(sequence: number): void {
    while (this.closed.length > this.options.retentionLedgers) {
      for (const old of this.closed.shift()!.hashes) this.included.delete(old);
    }
    for (const [nonce, used] of this.nonces) if (used.expiration < sequence) this.nonces.delete(nonce);
  }

  /** getLedgerEntries: the entry under a key, when the stand-in keeps one there. */
  ledgerEntry(key: xdr.LedgerKey): { entry: xdr.LedgerEntry; liveUntilLedgerSeq?: number } | null {
    const { usdcAsset, usdcContract } = this.facts;
    switch (key.switch().name) {
      case "account": {
        const accountId = StrKey.encodeEd25519PublicKey(key.account().accountId().ed25519());
        const account = this.accounts.get(accountId);
        return account ? { entry: accountEntry(account, this.usdc.has(accountId)) } : null;
      }
      case "trustline": {
        const accountId = StrKey.encodeEd25519PublicKey(key.trustLine().accountId().ed25519());
        const holding = this.usdc.get(accountId);
        return holding && key.toXDR("base64") === usdcKey(accountId, usdcAsset, usdcContract).toXDR("base64")
          ? { entry: usdcEntry(accountId, holding, usdcAsset, usdcContract) }
          : null;
      }
      case "contractData": {
        const data = key.contractData();
        const contract = Address.fromScAddress(data.contract()).toString();
        if (data.key().switch().name === "scvLedgerKeyNonce") {
          const nonce = data.key().nonceKey().nonce();
          const used = this.nonces.get(`${contract}/${nonce.toBigInt()}`);
          return used === undefined ? null : { entry: nonceEntry(contract, nonce, used.ledger), liveUntilLedgerSeq: used.expiration };
        }
        const holder = contract === usdcContract ? balanceHolder(data.key()) : null;
        const holding = holder && StrKey.isValidContract(holder) ? this.usdc.get(holder) : undefined;
        if (!holder || !holding || key.toXDR("base64") !== usdcKey(holder, usdcAsset, usdcContract).toXDR("base64")) return null;
        return { entry: usdcEntry(holder, holding, usdcAsset, usdcContract), liveUntilLedgerSeq: this.latestLedger.sequence + MAX_ENTRY_TTL };
        return null;
      }
      default:
        return null;
    }
  }
}
