import { xdr } from "@stellar/stellar-base";
import { INVALID_PARAMS, RpcError, type NamedRpcMethod } from "@c402/json-rpc-server";
import type { StellarLedger } from "./ledger";
import { PROTOCOL_VERSION } from "./network";
import { simulateTransaction } from "./simulation";

/**
 * The Soroban RPC methods the stand-in answers, in stellar-rpc's shapes
 * (named params; base64 XDR; close times as strings where stellar-rpc writes
 * them so). Cheats for tests and local runs are `standin_*`.
 */

/** stellar-rpc's limit on keys per getLedgerEntries. */
const MAX_LEDGER_ENTRY_KEYS = 200;

function base64Only(format: unknown): void {
  if (format !== undefined && format !== "" && format !== "base64")
    throw new RpcError(INVALID_PARAMS, "the stand-in answers base64 XDR only (xdrFormat json is not supported)");
}

function stringParam(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== "string") throw new RpcError(INVALID_PARAMS, `${name}: expected a string`);
  return value;
}

/** An optional string param: absent (or null) is undefined. */
function optionalStringParam(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new RpcError(INVALID_PARAMS, `${name}: expected a string`);
  return value;
}

/** A non-negative integer amount, as a JSON number (up to 2^53) or a decimal string. */
function amountParam(params: Record<string, unknown>, name: string): bigint {
  const value = params[name];
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === "string" && /^\d{1,30}$/.test(value)) return BigInt(value);
  throw new RpcError(INVALID_PARAMS, `${name}: expected a non-negative integer (a number or a decimal string)`);
}

/** A cheat's refusal (a bad address, a negative amount) is the caller's error, not the stand-in's. */
function cheat(ledger: StellarLedger, run: () => void): { latestLedger: number } {
  try {
    run();
  } catch (err) {
    throw new RpcError(INVALID_PARAMS, err instanceof Error ? err.message : String(err));
  }
  return { latestLedger: ledger.latest.sequence };
}

/** Every inclusion fee here is the base fee: the stand-in never surges. */
const FEE_DISTRIBUTION = {
  ...Object.fromEntries(["max", "min", "mode", "p10", "p20", "p30", "p40", "p50", "p60", "p70", "p80", "p90", "p95", "p99"].map((key) => [key, "100"])),
  transactionCount: "0",
  ledgerCount: 1,
};

export function createRpcMethods(ledger: StellarLedger, retentionLedgers: number): Record<string, NamedRpcMethod> {
  const window = () => ({
    latestLedger: ledger.latest.sequence,
    latestLedgerCloseTime: String(ledger.latest.closeTime),
    oldestLedger: ledger.oldest.sequence,
    oldestLedgerCloseTime: String(ledger.oldest.closeTime),
  });
  return {
    getHealth: () => ({
      status: "healthy",
      latestLedger: ledger.latest.sequence,
      latestLedgerCloseTime: ledger.latest.closeTime,
      oldestLedger: ledger.oldest.sequence,
      ledgerRetentionWindow: retentionLedgers,
    }),
    // No friendbotUrl: the real one is on the internet, and funding here is standin_fundAccount.
    getNetwork: () => ({ passphrase: ledger.facts.passphrase, protocolVersion: PROTOCOL_VERSION }),
    getVersionInfo: () => ({
      version: "c402-stellar-standin",
      commitHash: "",
      buildTimestamp: "",
      captiveCoreVersion: "none: a stand-in, not stellar-core",
      protocolVersion: PROTOCOL_VERSION,
    }),
    getFeeStats: () => ({ sorobanInclusionFee: FEE_DISTRIBUTION, inclusionFee: FEE_DISTRIBUTION, latestLedger: ledger.latest.sequence }),
    getLatestLedger: () => {
      const latest = ledger.latest;
      return {
        id: latest.hash,
        protocolVersion: PROTOCOL_VERSION,
        sequence: latest.sequence,
        closeTime: String(latest.closeTime),
        headerXdr: latest.headerXdr,
        metadataXdr: latest.metadataXdr,
      };
    },
    getLedgerEntries: (params) => {
      base64Only(params.xdrFormat);
      const keys = params.keys;
      if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_LEDGER_ENTRY_KEYS) {
        throw new RpcError(INVALID_PARAMS, `keys: expected 1 to ${MAX_LEDGER_ENTRY_KEYS} base64 ledger keys`);
      }
      const entries = keys.flatMap((raw, index) => {
        let key: xdr.LedgerKey;
        try {
          key = xdr.LedgerKey.fromXDR(String(raw), "base64");
        } catch {
          throw new RpcError(INVALID_PARAMS, `cannot unmarshal key value ${String(raw)} at index ${index}`);
        }
        const found = ledger.ledgerEntry(key);
        if (!found) return [];
        return [
          {
            key: key.toXDR("base64"),
            xdr: found.entry.data().toXDR("base64"),
            lastModifiedLedgerSeq: found.entry.lastModifiedLedgerSeq(),
            ...(found.liveUntilLedgerSeq === undefined ? {} : { liveUntilLedgerSeq: found.liveUntilLedgerSeq }),
          },
        ];
      });
      return { entries, latestLedger: ledger.latest.sequence };
    },
    simulateTransaction: (params) => {
      base64Only(params.xdrFormat);
      return simulateTransaction(ledger, params.transaction, params.authMode);
    },
    sendTransaction: (params) => {
      base64Only(params.xdrFormat);
      const outcome = ledger.send(stringParam(params, "transaction"));
      const { latestLedger, latestLedgerCloseTime } = window();
      return { ...outcome, latestLedger, latestLedgerCloseTime };
    },
    getTransaction: (params) => {
      base64Only(params.xdrFormat);
      const hash = stringParam(params, "hash");
      if (hash.length !== 64) throw new RpcError(INVALID_PARAMS, `unexpected hash length (${hash.length})`);
      if (!/^[0-9a-fA-F]{64}$/.test(hash)) throw new RpcError(INVALID_PARAMS, "incorrect hash: encoding/hex: invalid byte");
      const found = ledger.transaction(hash.toLowerCase());
      if (!found) return { ...window(), txHash: hash, status: "NOT_FOUND" };
      return {
        ...window(),
        txHash: hash,
        status: found.successful ? "SUCCESS" : "FAILED",
        applicationOrder: found.applicationOrder,
        feeBump: found.feeBump,
        envelopeXdr: found.envelopeXdr,
        resultXdr: found.resultXdr,
        resultMetaXdr: found.resultMetaXdr,
        ledger: found.ledger,
        createdAt: String(found.createdAt),
        ...(found.diagnosticEventsXdr.length > 0 ? { diagnosticEventsXdr: found.diagnosticEventsXdr } : {}),
        events: { transactionEventsXdr: found.transactionEventsXdr, contractEventsXdr: found.contractEventsXdr },
      };
    },
    standin_fundAccount: (params) => cheat(ledger, () => ledger.fundAccount(stringParam(params, "accountId"), amountParam(params, "stroops"))),
    standin_mintUsdc: (params) => cheat(ledger, () => ledger.mintUsdc(stringParam(params, "address"), amountParam(params, "amount"))),
    standin_closeLedger: () => ({ latestLedger: ledger.closeLedger().sequence }),
    standin_failNextTransaction: (params) => cheat(ledger, () => ledger.failNextTransaction(optionalStringParam(params, "source") ?? null)),
    // Reads for tests in another process (an e2e suite against a running service): balances and the transfers made.
    standin_usdcBalance: (params) => ({ balance: ledger.usdcBalance(stringParam(params, "address")).toString(), latestLedger: ledger.latest.sequence }),
    standin_transfers: () => ({
      transfers: ledger.transfers().map((t) => ({ hash: t.hash, ledger: t.ledger, from: t.from, to: t.to, amount: t.amount.toString() })),
      latestLedger: ledger.latest.sequence,
    }),
  };
}
