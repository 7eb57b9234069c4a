import { Address, SorobanDataBuilder, StrKey, xdr } from "@stellar/stellar-base";
import type { StellarLedger } from "./ledger";
import { accountIdOf, accountKey, contractInstanceKey, nonceKey, usdcKey } from "./ledger-entries";
import { errorDiagnostic } from "./results";
import { callContract } from "./usdc-contract";

/**
 * simulateTransaction, enough for a client to build and sign a USDC transfer:
 * the authorization entries to sign (recorded, each with a fresh nonce) or
 * checked (as the transaction will be: signatures, nonces, expiration), the
 * transfer event, and Soroban data that parses. Fees and resources are fixed
 * figures, not measured: nothing here meters a contract's execution.
 */

/** The resource fee every simulation answers, in stroops (a real SAC transfer costs the same order). */
export const MIN_RESOURCE_FEE = 30_000n;
const INSTRUCTIONS = 250_000;
const DISK_READ_BYTES = 1_000;
const WRITE_BYTES = 500;

export interface RawSimulation {
  latestLedger: number;
  error?: string;
  events?: string[];
  transactionData?: string;
  minResourceFee?: string;
  results?: { auth: string[]; xdr: string }[];
}

const AUTH_MODES = ["enforce", "record", "record_allow_nonroot"];

function diagnostic(contract: string | null, topics: xdr.ScVal[], data: xdr.ScVal): xdr.DiagnosticEvent {
  return new xdr.DiagnosticEvent({
    inSuccessfulContractCall: true,
    event: new xdr.ContractEvent({
      ext: new xdr.ExtensionPoint(0),
      contractId: contract ? (Address.fromString(contract).toBuffer() as unknown as xdr.ContractId) : null,
      type: xdr.ContractEventType.diagnostic(),
      body: new xdr.ContractEventBody(0, new xdr.ContractEventV0({ topics, data })),
    }),
  });
}

export function simulateTransaction(ledger: StellarLedger, transaction: unknown, authMode: unknown): RawSimulation {
  const latestLedger = ledger.latest.sequence;
  let envelope: xdr.TransactionEnvelope;
  try {
    envelope = xdr.TransactionEnvelope.fromXDR(String(transaction), "base64");
  } catch {
    return { latestLedger: 0, error: "Could not unmarshal transaction" };
  }
  const tx = envelope.switch().name === "envelopeTypeTxFeeBump" ? envelope.feeBump().tx().innerTx().v1().tx() : null;
  const inner = tx ?? (envelope.switch().name === "envelopeTypeTx" ? envelope.v1().tx() : null);
  if (!inner) return { latestLedger: 0, error: "the stand-in simulates v1 and fee bump envelopes only" };
  const operations = inner.operations();
  if (operations.length !== 1) return { latestLedger: 0, error: "Transaction contains more than one operation" };
  const operation = operations[0]!;
  if (operation.body().switch().name !== "invokeHostFunction") {
    return {
      latestLedger: 0,
      error: `Transaction contains unsupported operation type: ${operation.body().switch().name} (the stand-in simulates InvokeHostFunction only)`,
    };
  }
  const op = operation.body().invokeHostFunctionOp();
  if (authMode !== undefined && authMode !== "" && !AUTH_MODES.includes(String(authMode))) {
    return { latestLedger: 0, error: `optional 'authMode' must be one of ${AUTH_MODES.join(",")} when included` };
  }
  const hasAuth = op.auth().length > 0;
  if (hasAuth && (authMode === "record" || authMode === "record_allow_nonroot")) {
    return { latestLedger: 0, error: `cannot set authMode to '${String(authMode)}' with an auth footprint` };
  }
  const mode = hasAuth || authMode === "enforce" ? "enforce" : "record";
  const invoker = accountIdOf(operation.sourceAccount() ?? inner.sourceAccount());
  // A simulation runs as the next ledger would.
  const outcome = callContract(op, { facts: ledger.facts, state: ledger, invoker, ledgerSeq: latestLedger + 1, authMode: mode });
  if (!outcome.ok) return { latestLedger, error: outcome.error, events: [errorDiagnostic(outcome.error).toXDR("base64")] };

  const { facts } = ledger;
  const { from, to } = outcome.transfer;
  const auth = mode === "record" ? outcome.recordedAuth : op.auth();
  const nonces = auth
    .filter((entry) => entry.credentials().switch().name === "sorobanCredentialsAddress")
    .map((entry) => nonceKey(Address.fromScAddress(entry.credentials().address().address()).toString(), entry.credentials().address().nonce()));
  const readOnly = [contractInstanceKey(facts.usdcContract), ...(StrKey.isValidEd25519PublicKey(from) && from !== invoker ? [accountKey(from)] : [])];
  const balances = [...new Set([from, to])].map((holder) => usdcKey(holder, facts.usdcAsset, facts.usdcContract));
  const transactionData = new SorobanDataBuilder()
    .setFootprint(readOnly, [...balances, ...nonces])
    .setResources(INSTRUCTIONS, DISK_READ_BYTES, WRITE_BYTES)
    .setResourceFee(MIN_RESOURCE_FEE.toString())
    .build();
  const call = op.hostFunction().invokeContract();
  const events = [
    diagnostic(
      null,
      [xdr.ScVal.scvSymbol("fn_call"), xdr.ScVal.scvBytes(Address.fromString(facts.usdcContract).toBuffer()), xdr.ScVal.scvSymbol("transfer")],
      xdr.ScVal.scvVec(call.args()),
    ),
    new xdr.DiagnosticEvent({ inSuccessfulContractCall: true, event: outcome.event }),
    diagnostic(facts.usdcContract, [xdr.ScVal.scvSymbol("fn_return"), xdr.ScVal.scvSymbol("transfer")], xdr.ScVal.scvVoid()),
  ];
  return {
    latestLedger,
    events: events.map((event) => event.toXDR("base64")),
    transactionData: transactionData.toXDR("base64"),
    minResourceFee: MIN_RESOURCE_FEE.toString(),
    results: [{ auth: auth.map((entry) => entry.toXDR("base64")), xdr: xdr.ScVal.scvVoid().toXDR("base64") }],
  };
}
