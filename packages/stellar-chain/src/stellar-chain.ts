import https from "node:https";
import {
  Account,
  Asset,
  FeeBumpTransaction,
  Keypair,
  Operation,
  rpc,
  StrKey,
  TimeoutInfinite,
  TransactionBuilder,
  xdr,
  type Transaction,
} from "@stellar/stellar-sdk";
import {
  checkSimulatedTransfer,
  DEFAULT_LEDGER_SECONDS,
  DEFAULT_MAX_FEE_STROOPS,
  verifyExactStellarPaymentOffline,
  type ExactStellarPolicy,
  type ExactStellarRequirement,
} from "./checks";
import { decodeExactStellarPayment, type ExactStellarPayment } from "./decode";
import { Lanes, type Lane } from "./lanes";
import { sendByTime, type ClosedLedger } from "./ledger-time";
import { networkPassphraseOf, usdcAssetOf } from "./networks";
import { StellarPaymentRejected, StellarRejection, StellarSendRefusal, StellarSendRefused } from "./rejections";
import { serviceKeypair } from "./service-keys";
import { buildSettlementTransaction, type SignedSettlement } from "./settlement-transaction";

export interface StellarChainOptions {
  /** CAIP-2 id, e.g. STELLAR_TESTNET. */
  network: string;
  /** Soroban JSON-RPC over HTTPS. */
  rpcUrl: string;
  /** The token contract payments move (USDC's on this network). */
  usdcContract: string;
  /** The service's account (S… secret): the settlement's source, or the fee-bump payer when channel accounts are given. */
  accountSecret: string;
  /** Channel accounts (S… secrets): each a source of its own sequence numbers, settling in parallel; fees paid by the service's account in a fee bump. */
  channelSecrets?: readonly string[];
  /** Default: the network's own (STELLAR_NETWORKS). */
  networkPassphrase?: string;
  /** A private CA the RPC's certificate is issued by (PEM), besides the system's. */
  caCertificatePem?: string;
  /** How long one JSON-RPC call may take (default 10 s). */
  rpcTimeoutMs?: number;
  /** The most a settlement's fee may be, in stroops (default 50,000, the official facilitator's cap). */
  maxFeeStroops?: bigint;
  /** Stroops bid per operation for inclusion (default 100, the network's minimum). */
  inclusionFeeStroops?: bigint;
  /**
   * Seconds per ledger, the shortest a ledger takes (default 5, the network's target): turns a requirement's
   * maxTimeoutSeconds into ledgers, and an authorization's last ledger into the time a settlement must be sent by
   * (`sendBy`).
   */
  ledgerSeconds?: number;
  /** How often a settlement's status is asked while it is followed (default 1 s). */
  pollIntervalMs?: number;
}

/**
 * Where a settlement transaction stands. Stellar's closed ledgers are final,
 * and the RPC reports a transaction only once it is in one: "unseen" covers
 * both queued and lost, and `canStillLand` says which way it can go — false
 * once its sequence number was used by another transaction or its last
 * ledger is closed (nothing moved, no fee taken, and never will).
 */
export type StellarTransactionStatus =
  | { state: "success"; ledger: number }
  | { state: "failed"; ledger: number; error: string }
  | { state: "unseen"; canStillLand: true }
  | { state: "unseen"; canStillLand: false; reason: string };

/** What a send did: queued now, already queued or applied (the same bytes again), or not queued now (the node asked to be asked later, or the transaction's first ledger is not closed yet). */
export type StellarSendResult = "sent" | "duplicate" | "busy";

export interface SettleOptions {
  /** Called with each signed transaction before it is sent (the saga stores it); when it throws, nothing is sent. */
  beforeSend?: (signed: SignedSettlement) => Promise<void>;
  /** Called once a signed transaction was sent and the network took it (queued now, or already there), before it is followed; not after a refusal, a busy node or a failed call. */
  afterSend?: (signed: SignedSettlement) => void;
  /** How long to follow the transaction before answering "unseen, can still land" (default 90 s). */
  timeoutMs?: number;
}

/** A settlement sent and followed: the transaction last signed and where it stands. */
export interface StellarSettlement {
  signed: SignedSettlement;
  status: StellarTransactionStatus;
}

/** How many times a settlement is rebuilt after its sequence number was taken (by another process sharing the account). */
const MAX_SEQUENCE_RETRIES = 3;
/** While a transaction is unseen, its bytes are sent again every this many polls (a resend of the same bytes is harmless). */
const RESEND_EVERY_POLLS = 5;

/**
 * The Stellar side of settlement: the exact Stellar payment's checks, the
 * re-simulation, the settlement transaction built with the service's account
 * (or a channel) as source and signed, sent and followed over Soroban
 * JSON-RPC. The service's keys pay only the fee: a payment that names them
 * is refused before anything is signed. Nothing here knows whether the RPC is
 * the local stand-in or a real network.
 */
export class StellarChain {
  readonly network: string;
  readonly networkPassphrase: string;
  readonly usdcContract: string;
  /** The service's account (G…): the source, or the fee-bump payer with channels. */
  readonly account: string;
  /** Every account of the service's: the account and the channels. */
  readonly serviceAccounts: readonly string[];
  private readonly policy: ExactStellarPolicy;
  private readonly keypair: Keypair;
  private readonly lanes: Lanes;
  private readonly feeBump: boolean;
  private readonly inclusionFee: bigint;
  private readonly pollIntervalMs: number;
  private readonly server: rpc.Server;
  private readonly rpcOrigin: string;
  /** The classic asset whose asset contract `usdcContract` is, where known: an account receives it only through its trustline. */
  private readonly usdcAsset: Asset | undefined;

  constructor(opts: StellarChainOptions) {
    this.network = opts.network;
    this.networkPassphrase = opts.networkPassphrase ?? networkPassphraseOf(opts.network);
    this.usdcContract = opts.usdcContract;
    this.usdcAsset = usdcAssetOf(this.network, this.networkPassphrase, opts.usdcContract);
    this.keypair = serviceKeypair(opts.accountSecret, "account secret");
    const channels = (opts.channelSecrets ?? []).map((secret, i) => serviceKeypair(secret, `channel secret #${i + 1}`));
    this.account = this.keypair.publicKey();
    this.serviceAccounts = [this.account, ...channels.map((c) => c.publicKey())];
    if (new Set(this.serviceAccounts).size !== this.serviceAccounts.length) throw new Error("the account and the channel accounts must all differ");
    this.feeBump = channels.length > 0;
    this.lanes = new Lanes(this.feeBump ? channels : [this.keypair]);
    this.inclusionFee = opts.inclusionFeeStroops ?? 100n;
    this.pollIntervalMs = opts.pollIntervalMs ?? 1_000;
    this.policy = {
      serviceAccounts: this.serviceAccounts,
      usdcContract: opts.usdcContract,
      maxFeeStroops: opts.maxFeeStroops ?? DEFAULT_MAX_FEE_STROOPS,
      ledgerSeconds: opts.ledgerSeconds ?? DEFAULT_LEDGER_SECONDS,
    };
    this.server = new rpc.Server(opts.rpcUrl);
    this.server.httpClient.defaults.timeout = opts.rpcTimeoutMs ?? 10_000;
    // The SDK's HTTP client is axios: a private CA goes in through its agent.
    if (opts.caCertificatePem) {
      (this.server.httpClient.defaults as { httpsAgent?: https.Agent }).httpsAgent = new https.Agent({ ca: opts.caCertificatePem, keepAlive: true });
    }
    // The node by its origin only: providers put API keys in the path.
    this.rpcOrigin = new URL(opts.rpcUrl).origin;
  }

  /** Decodes a payload's transaction for this network. */
  decode(transactionBase64: string): ExactStellarPayment {
    return decodeExactStellarPayment(transactionBase64, this.networkPassphrase);
  }

  /**
   * The offline checks at the latest ledger and the payer's signature, then
   * the settlement simulated (this service's account as source, the
   * payment's call and authorization: what would be sent) and its result
   * checked. Nothing is signed or sent. A refusal is StellarPaymentRejected;
   * a failed RPC call is a plain error (the payment was not judged).
   * Answers what settling needs: the simulation's Soroban data and the ledger.
   */
  async verify(payment: ExactStellarPayment, requirement: ExactStellarRequirement): Promise<{ sorobanData: xdr.SorobanTransactionData; latestLedger: number }> {
    const latestLedger = await this.latestLedger();
    verifyExactStellarPaymentOffline(payment, requirement, this.policy, latestLedger);
    const unsigned = new TransactionBuilder(new Account(this.account, "0"), { fee: this.inclusionFee.toString(), networkPassphrase: this.networkPassphrase })
      .setTimeout(TimeoutInfinite)
      .addOperation(Operation.invokeHostFunction({ func: payment.hostFunction, auth: payment.authEntries.map((a) => a.entry) }))
      .build();
    const simulation = await this.call("simulateTransaction", () => this.server.simulateTransaction(unsigned));
    if (rpc.Api.isSimulationError(simulation)) {
      throw new StellarPaymentRejected(StellarRejection.simulationFailed, `The transfer would fail: ${simulation.error}.`);
    }
    if (rpc.Api.isSimulationRestore(simulation)) {
      throw new StellarPaymentRejected(StellarRejection.simulationFailed, "The transfer needs archived ledger entries restored first.");
    }
    const sorobanData = simulation.transactionData.build();
    const footprint = sorobanData.resources().footprint();
    checkSimulatedTransfer(
      payment,
      requirement,
      { minResourceFee: BigInt(simulation.minResourceFee), events: simulation.events, footprint: [...footprint.readOnly(), ...footprint.readWrite()] },
      this.policy,
    );
    return { sorobanData, latestLedger };
  }

  /**
   * Verifies the payment again (settle never trusts an earlier verify), then
   * on a free lane: builds the settlement with the lane's next sequence
   * number, signs it, hands it to `beforeSend`, sends it (then `afterSend`
   * when the network took it) and follows it to a
   * final status, sending the same bytes again while it is unseen and can
   * still land. Rebuilt (a new hash, `beforeSend` again) only when its
   * sequence number was taken, when the old one can never land. Answers the
   * last transaction and its status — "unseen, can still land" when the time
   * ran out; throws StellarPaymentRejected (nothing signed), StellarSendRefused
   * (refused at submission, nothing applied), or a plain error when the RPC
   * could not be asked (the transaction may be in flight: ask `status`).
   */
  async settle(payment: ExactStellarPayment, requirement: ExactStellarRequirement, opts: SettleOptions = {}): Promise<StellarSettlement> {
    const { sorobanData, latestLedger } = await this.verify(payment, requirement);
    const until = Date.now() + (opts.timeoutMs ?? 90_000);
    return this.lanes.run(async (lane) => {
      for (let attempt = 1; ; attempt++) {
        lane.sequence ??= await this.sequenceOf(lane.keypair.publicKey());
        const signed = buildSettlementTransaction({
          payment,
          source: lane.keypair,
          sequence: lane.sequence,
          ...(this.feeBump ? { feeBump: this.keypair } : {}),
          sorobanData,
          inclusionFee: this.inclusionFee,
          latestLedger,
          serviceAccounts: this.serviceAccounts,
          maxFee: this.policy.maxFeeStroops,
          networkPassphrase: this.networkPassphrase,
        });
        await opts.beforeSend?.(signed);
        let sent: StellarSendResult | "unknown";
        try {
          sent = await this.send(signed.xdr);
        } catch (err) {
          if (err instanceof StellarSendRefused) {
            // Refused at submission: nothing applied. A taken sequence number is re-read and the settlement rebuilt.
            if (err.reason === StellarSendRefusal.badSequence) {
              lane.sequence = undefined;
              if (attempt < MAX_SEQUENCE_RETRIES) continue;
            }
            throw err;
          }
          // The outcome is unknown: the bytes may have reached the network. Follow them like any other.
          sent = "unknown";
        }
        if (sent === "sent" || sent === "duplicate") opts.afterSend?.(signed);
        return { signed, status: await this.follow(lane, signed, until, sent === "busy") };
      }
    });
  }

  /**
   * Follows a stored settlement to a final status (the sweep's step after a
   * crash): on the lane of its source, when it is one of ours, so no new
   * settlement takes that account's sequence number meanwhile; sends the same
   * bytes again while it is unseen and can still land. Answers its status,
   * "unseen, can still land" when `timeoutMs` (90 s) ran out; a plain error
   * when the RPC could not be asked.
   */
  async resume(signedXdr: string, timeoutMs = 90_000): Promise<StellarTransactionStatus> {
    const settlement = readSettlement(signedXdr, this.networkPassphrase);
    const until = Date.now() + timeoutMs;
    const follow = async (lane: Lane) => {
      const sent = await this.send(signedXdr).catch(() => "unknown" as const);
      return this.follow(lane, { xdr: signedXdr, sequence: settlement.sequence }, until, sent === "busy");
    };
    if (this.lanes.has(settlement.source)) return this.lanes.run(follow, settlement.source);
    // A source no longer configured: followed without a lane.
    return follow({ keypair: Keypair.fromPublicKey(settlement.source), sequence: undefined });
  }

  /**
   * Asks until the transaction is final or can never land, or `until`; sends
   * the same bytes again while it is unseen, at once after the node was busy
   * (it queued nothing), else every few polls. The lane's sequence number is
   * known again only when the transaction is in a ledger (success or failed
   * both use it); otherwise it is read from the chain next time.
   */
  private async follow(lane: Lane, signed: Pick<SignedSettlement, "xdr" | "sequence">, until: number, busy: boolean): Promise<StellarTransactionStatus> {
    let failure: unknown;
    let resendNow = busy;
    for (let poll = 1; ; poll++) {
      let status: StellarTransactionStatus | undefined;
      try {
        status = await this.status(signed.xdr);
        failure = undefined;
      } catch (err) {
        failure = err;
      }
      if (status && (status.state !== "unseen" || !status.canStillLand)) {
        lane.sequence = status.state === "unseen" ? undefined : signed.sequence;
        return status;
      }
      if (Date.now() >= until) {
        lane.sequence = undefined;
        if (status) return status;
        throw failure;
      }
      if (resendNow || poll % RESEND_EVERY_POLLS === 0) resendNow = (await this.send(signed.xdr).catch(() => "unknown")) === "busy";
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(this.pollIntervalMs, until - Date.now()))));
    }
  }

  /**
   * Sends a signed settlement. "sent": queued; "duplicate": these bytes are
   * already queued or applied (a resend never applies twice: the sequence
   * number is used once); "busy": not queued now (the node asked to be
   * asked later, or the transaction's first ledger is still to come). A refusal (nothing applied, no fee) throws StellarSendRefused;
   * a failed call throws a plain error: the outcome is unknown.
   */
  async send(signedXdr: string): Promise<StellarSendResult> {
    const envelope = TransactionBuilder.fromXDR(signedXdr, this.networkPassphrase);
    const answer = await this.call("sendTransaction", () => this.server.sendTransaction(envelope));
    switch (answer.status) {
      case "PENDING":
        return "sent";
      case "DUPLICATE":
        return "duplicate";
      case "TRY_AGAIN_LATER":
        return "busy";
      default: {
        // A fee bump refused for its inner transaction is judged by the inner transaction's code.
        const code = resultCode(answer.errorResult, true);
        const named = resultCode(answer.errorResult);
        // A used sequence number or closed bounds may be this very transaction's, applied earlier.
        if (code === "txBadSeq" || code === "txTooLate") {
          const found = await this.call("getTransaction", () => this.server.getTransaction(answer.hash));
          if (found.status !== rpc.Api.GetTransactionStatus.NOT_FOUND) return "duplicate";
        }
        if (code === "txBadSeq") throw new StellarSendRefused(StellarSendRefusal.badSequence, named, "The transaction's sequence number is already used.");
        // Before its first ledger (an RPC behind the one it was built from): not queued, valid later.
        if (code === "txTooEarly") return "busy";
        if (code === "txTooLate") {
          throw new StellarSendRefused(StellarSendRefusal.expired, named, "The transaction is outside its ledger bounds: it can never land.");
        }
        throw new StellarSendRefused(StellarSendRefusal.submissionFailed, named, `The network refused the transaction: ${named}.`);
      }
    }
  }

  /**
   * Where a signed settlement stands (see StellarTransactionStatus). The
   * source's sequence number is read before the transaction is looked up,
   * so a number found used means another transaction used it. A failed call
   * throws ("could not ask" is never "unseen"); so does a transaction that
   * could have landed in ledgers older than the RPC's history.
   */
  async status(signedXdr: string): Promise<StellarTransactionStatus> {
    const settlement = readSettlement(signedXdr, this.networkPassphrase);
    const accountSequence = await this.sequenceOf(settlement.source);
    const found = await this.call("getTransaction", () => this.server.getTransaction(settlement.hash));
    if (found.status === rpc.Api.GetTransactionStatus.SUCCESS) return { state: "success", ledger: found.ledger };
    if (found.status === rpc.Api.GetTransactionStatus.FAILED) return { state: "failed", ledger: found.ledger, error: failureOf(found.resultXdr) };
    if (found.oldestLedger > settlement.minLedger) {
      throw new Error(`transaction ${settlement.hash} could have landed before ledger ${found.oldestLedger}, the oldest the RPC at ${this.rpcOrigin} keeps`);
    }
    const next = found.latestLedger + 1;
    const never = (reason: string): StellarTransactionStatus => ({ state: "unseen", canStillLand: false, reason });
    if (accountSequence >= settlement.sequence) return never(`its sequence number ${settlement.sequence} was used by another transaction`);
    if (settlement.maxLedger !== 0 && next >= settlement.maxLedger) return never(`its last ledger ${settlement.maxLedger - 1} is closed`);
    if (settlement.authExpiration !== undefined && next > settlement.authExpiration) {
      return never(`its authorization expired at ledger ${settlement.authExpiration}`);
    }
    if (settlement.maxTime !== 0n && BigInt(found.latestLedgerCloseTime) >= settlement.maxTime) return never("its time bound has passed");
    return { state: "unseen", canStillLand: true };
  }

  /** Asks until the transaction is final or can never land, or timeoutMs has passed (then the last answer; the last error if every call failed). */
  async waitFor(signedXdr: string, timeoutMs: number): Promise<StellarTransactionStatus> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      let status: StellarTransactionStatus | undefined;
      let failure: unknown;
      try {
        status = await this.status(signedXdr);
        if (status.state !== "unseen" || !status.canStillLand) return status;
      } catch (err) {
        failure = err;
      }
      const left = until - Date.now();
      if (left <= 0) {
        if (status) return status;
        throw failure;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.pollIntervalMs, left)));
    }
  }

  /** The latest closed ledger the RPC knows. */
  async latestLedger(): Promise<number> {
    return (await this.latestClosed()).sequence;
  }

  /**
   * The latest time (unix ms) a settlement can be sent and still land by
   * ledger `ledger` (the last a payer's authorization is good for): when the
   * ledger before it closes, at the earliest (`sendByTime`): the latest closed
   * ledger's close time plus `ledgerSeconds` for each ledger in between,
   * `ledgerSeconds` being the shortest a ledger takes (the network's 5 s
   * target; real ledgers run a little longer, so the bound errs early). An RPC
   * that does not say when its latest ledger closed (`getLatestLedger`'s
   * `closeTime`, unix seconds) counts it closed a ledger before `now`.
   */
  async sendBy(ledger: number, now: number = Date.now()): Promise<number> {
    return sendByTime(await this.latestClosed(), ledger, this.policy.ledgerSeconds, now);
  }

  /** The latest closed ledger, and when it closed where the RPC says (stellar-rpc answers `closeTime`; stellar-sdk 14's type leaves it out). */
  private async latestClosed(): Promise<ClosedLedger> {
    const latest: rpc.Api.GetLatestLedgerResponse & { closeTime?: string | number } = await this.call("getLatestLedger", () => this.server.getLatestLedger());
    const closeTime = Number(latest.closeTime);
    return { sequence: latest.sequence, ...(latest.closeTime !== undefined && Number.isSafeInteger(closeTime) && closeTime > 0 ? { closeTime } : {}) };
  }

  /**
   * Whether `address` can be paid USDC: a contract (C…) holds an asset contract balance and always can; an
   * account (G…) only through its USDC trustline, which the service never creates (its reserve would be the
   * service's to pay, for any account a seller names). Undefined where `usdcContract` is not the network's
   * Circle USDC (a token whose classic asset this chain does not know: nothing to look for).
   */
  async receivesUsdc(address: string): Promise<boolean | undefined> {
    if (StrKey.isValidContract(address)) return true;
    const asset = this.usdcAsset;
    if (!asset) return undefined;
    const key = xdr.LedgerKey.trustline(
      new xdr.LedgerKeyTrustLine({ accountId: Keypair.fromPublicKey(address).xdrAccountId(), asset: asset.toTrustLineXDRObject() }),
    );
    const { entries } = await this.call("getLedgerEntries", () => this.server.getLedgerEntries(key));
    return entries.length > 0;
  }

  /** The classic asset a trustline to USDC names (CODE:ISSUER), where known. */
  get usdcAssetName(): string | undefined {
    return this.usdcAsset ? `${this.usdcAsset.getCode()}:${this.usdcAsset.getIssuer()}` : undefined;
  }

  async ping(): Promise<void> {
    await this.latestLedger();
  }

  /** An account's current sequence number (its next transaction uses this plus one). */
  async sequenceOf(account: string): Promise<bigint> {
    return BigInt((await this.call("getAccount", () => this.server.getAccount(account))).sequenceNumber());
  }

  /** One RPC call, its failure an Error naming the method and the node by its origin (JSON-RPC errors arrive as plain objects). */
  private async call<T>(method: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const detail = err instanceof Error ? err.message : typeof err === "object" && err !== null && "message" in err ? String(err.message) : String(err);
      throw new Error(`the Stellar RPC at ${this.rpcOrigin} failed ${method}: ${detail}`, { cause: err });
    }
  }
}

/** What status needs of a signed settlement: its hash, the source and sequence number, its bounds and the authorization's expiry. */
function readSettlement(signedXdr: string, networkPassphrase: string) {
  const envelope = TransactionBuilder.fromXDR(signedXdr, networkPassphrase);
  const inner: Transaction = envelope instanceof FeeBumpTransaction ? envelope.innerTransaction : envelope;
  const expirations = inner.operations.flatMap((op) =>
    op.type === "invokeHostFunction"
      ? (op.auth ?? []).flatMap((entry) =>
          entry.credentials().switch() === xdr.SorobanCredentialsType.sorobanCredentialsAddress()
            ? [entry.credentials().address().signatureExpirationLedger()]
            : [],
        )
      : [],
  );
  return {
    hash: envelope.hash().toString("hex"),
    source: inner.source,
    sequence: BigInt(inner.sequence),
    minLedger: inner.ledgerBounds?.minLedger ?? 0,
    maxLedger: inner.ledgerBounds?.maxLedger ?? 0,
    maxTime: BigInt(inner.timeBounds?.maxTime ?? "0"),
    authExpiration: expirations.length > 0 ? Math.min(...expirations) : undefined,
  };
}

/**
 * A transaction result's code, e.g. "txBadSeq"; for a fee bump, its inner
 * transaction's appended ("txFeeBumpInnerFailed: txBadSeq"), or alone when
 * `inner` is asked for.
 */
function resultCode(result: xdr.TransactionResult | undefined, inner = false): string {
  if (!result) return "unknown";
  const outcome = result.result();
  if (outcome.switch() === xdr.TransactionResultCode.txFeeBumpInnerFailed() || outcome.switch() === xdr.TransactionResultCode.txFeeBumpInnerSuccess()) {
    const innerCode = outcome.innerResultPair().result().result().switch().name;
    return inner ? innerCode : `${outcome.switch().name}: ${innerCode}`;
  }
  return outcome.switch().name;
}

/** Why a transaction that landed failed: its result code and, for a failed operation, the operation's. */
function failureOf(result: xdr.TransactionResult): string {
  const outcome = result.result();
  const code = resultCode(result);
  if (outcome.switch() !== xdr.TransactionResultCode.txFailed()) return code;
  const operation = outcome.results()[0];
  if (!operation) return code;
  const inner = operation.switch() === xdr.OperationResultCode.opInner() ? operation.tr().value() : undefined;
  const innerCode = inner && typeof (inner as { switch?: unknown }).switch === "function" ? (inner as { switch(): { name: string } }).switch().name : undefined;
  return innerCode ? `${code}: ${innerCode}` : `${code}: ${operation.switch().name}`;
}
