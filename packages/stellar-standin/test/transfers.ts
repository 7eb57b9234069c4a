import {
  Account,
  Address,
  Contract,
  Keypair,
  Operation,
  TransactionBuilder,
  authorizeEntry,
  nativeToScVal,
  rpc,
  xdr,
  type FeeBumpTransaction,
  type Transaction,
} from "@stellar/stellar-sdk";
import type { StellarStandin } from "../src";

/**
 * Building USDC transfers the way a rail does with stellar-sdk 15: simulate to get
 * the authorization entry and Soroban data, sign the entry as the payer, wrap it in
 * a transaction from the submitting account, sign that, send it.
 */
export interface PreparedTransfer {
  hostFunction: xdr.HostFunction;
  auth: xdr.SorobanAuthorizationEntry[];
  sorobanData: xdr.SorobanTransactionData;
}

export function transferOperation(contract: string, from: string, to: string, amount: bigint): xdr.Operation {
  return new Contract(contract).call("transfer", new Address(from).toScVal(), new Address(to).toScVal(), nativeToScVal(amount, { type: "i128" }));
}

export class Transfers {
  constructor(
    readonly standin: StellarStandin,
    readonly server: rpc.Server,
  ) {}

  /** The account as the stand-in holds it now (sequence number included). */
  account(keypair: Keypair): Account {
    return new Account(keypair.publicKey(), this.standin.sequenceNumber(keypair.publicKey())!.toString());
  }

  /** Simulates a transfer (recording its authorization) with `submitter` as the source. */
  async prepare(options: { from: string; to: string; amount: bigint; submitter: Keypair; contract?: string }): Promise<PreparedTransfer> {
    const operation = transferOperation(options.contract ?? this.standin.usdc, options.from, options.to, options.amount);
    const draft = new TransactionBuilder(this.account(options.submitter), { fee: "100", networkPassphrase: this.standin.networkPassphrase })
      .addOperation(operation)
      .setTimeout(60)
      .build();
    const simulation = await this.server.simulateTransaction(draft);
    if (!rpc.Api.isSimulationSuccess(simulation)) throw new Error(`simulation failed: ${(simulation as { error?: string }).error}`);
    return {
      hostFunction: operation.body().invokeHostFunctionOp().hostFunction(),
      auth: simulation.result!.auth,
      sorobanData: simulation.transactionData.build(),
    };
  }

  /** Signs address-credential entries as `signer`, valid until `validUntil` (default: 20 ledgers on), under `passphrase` (default: the stand-in's). */
  async sign(
    auth: xdr.SorobanAuthorizationEntry[],
    signer: Keypair,
    options: { validUntil?: number; passphrase?: string } = {},
  ): Promise<xdr.SorobanAuthorizationEntry[]> {
    const validUntil = options.validUntil ?? this.standin.latestLedger() + 20;
    return Promise.all(auth.map((entry) => authorizeEntry(entry, signer, validUntil, options.passphrase ?? this.standin.networkPassphrase)));
  }

  /** The transaction carrying a prepared transfer, from `source`'s current sequence number, signed by `signers` (default: source). */
  build(
    prepared: PreparedTransfer,
    source: Keypair,
    options: {
      signers?: Keypair[];
      sequenceOffset?: bigint;
      timeoutSeconds?: number;
      ledgerbounds?: { minLedger: number; maxLedger: number };
      timebounds?: { minTime: number; maxTime: number };
      minAccountSequence?: string;
      extraOperation?: xdr.Operation;
    } = {},
  ): Transaction {
    const current = this.standin.sequenceNumber(source.publicKey())!;
    const account = new Account(source.publicKey(), (current + (options.sequenceOffset ?? 0n)).toString());
    const builder = new TransactionBuilder(account, {
      fee: "100",
      networkPassphrase: this.standin.networkPassphrase,
      sorobanData: prepared.sorobanData,
      ledgerbounds: options.ledgerbounds,
      timebounds: options.timebounds,
      minAccountSequence: options.minAccountSequence,
    }).addOperation(Operation.invokeHostFunction({ func: prepared.hostFunction, auth: prepared.auth }));
    if (options.extraOperation) builder.addOperation(options.extraOperation);
    if (!options.timebounds) builder.setTimeout(options.timeoutSeconds ?? 60);
    const tx = builder.build();
    for (const signer of options.signers ?? [source]) tx.sign(signer);
    return tx;
  }

  /** Sends, closes the next ledger, and reads the outcome back. */
  async sendAndClose(tx: Transaction | FeeBumpTransaction): Promise<{ sent: rpc.Api.SendTransactionResponse; found: rpc.Api.GetTransactionResponse }> {
    const sent = await this.server.sendTransaction(tx);
    this.standin.closeLedger();
    return { sent, found: await this.server.getTransaction(sent.hash) };
  }
}

export function fundedKeypairs(standin: StellarStandin, count: number): Keypair[] {
  return Array.from({ length: count }, () => {
    const keypair = Keypair.random();
    standin.fundAccount(keypair.publicKey());
    return keypair;
  });
}

/** The name of a TransactionResult's code (txBadSeq, txFeeBumpInnerFailed, …). */
export function resultCode(result: xdr.TransactionResult | undefined): string | undefined {
  return result?.result().switch().name;
}
