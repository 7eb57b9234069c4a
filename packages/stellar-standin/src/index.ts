import { Keypair } from "@stellar/stellar-base";
import { serveJsonRpc } from "@c402/json-rpc-server";
import { createTestCertificateAuthority, issueLoopbackCertificate, type TestCertificateAuthority } from "./certificate";
import { StellarLedger, type TransferRecord } from "./ledger";
import { createRpcMethods } from "./methods";
import { STELLAR_TESTNET, networkFacts, type StellarNetwork } from "./network";

export { refuseStellarOrgLookups } from "./offline-horizon";
export { callStandin } from "./client";
export { createTestCertificateAuthority, type TestCertificateAuthority } from "./certificate";
export type { TransferRecord } from "./ledger";
export { STELLAR_PUBNET, STELLAR_TESTNET, USDC_DECIMALS, isStellarNetwork, networkFacts, type StellarNetwork } from "./network";
export { MAX_SIGNATURE_EXPIRATION_LEDGERS } from "./usdc-contract";
export { MIN_RESOURCE_FEE } from "./simulation";
export { trustCertificateInThisProcess } from "./trust";

/** Ledgers close every second by default: five times faster than the networks, so tests wait less. */
const DEFAULT_LEDGER_MS = 1000;
/** stellar-rpc's default retention: a day of 5 s ledgers. */
const DEFAULT_RETENTION_LEDGERS = 17_280;
const FIRST_LEDGER = 1000;
/** 10,000 XLM, what Friendbot gives. */
const DEFAULT_FUNDING_STROOPS = 100_000_000_000n;

export interface StellarStandinOptions {
  /** Default stellar:testnet. */
  network?: StellarNetwork;
  /** A ledger closes this often; 0: only through closeLedger(). Default 1000. */
  ledgerMs?: number;
  /** 0 or unset: the OS picks a free port. */
  port?: number;
  /** A loopback address (default 127.0.0.1); anything else is refused. */
  host?: string;
  /** The authority that issues the server's certificate; a new one when unset (share one to trust several stand-ins, or across restarts). */
  certificateAuthority?: TestCertificateAuthority;
  /** Told of the stand-in's own failures (answered as -32603); quiet when unset. */
  onInternalError?: (method: string, err: unknown) => void;
}

export interface StellarStandin {
  /** The Soroban JSON-RPC endpoint: https://127.0.0.1:<port>. */
  url: string;
  /** Seconds between ledgers (at least 1): what a client here should take as the shortest a ledger takes. */
  ledgerSeconds: number;
  network: StellarNetwork;
  networkPassphrase: string;
  /** USDC's Stellar Asset Contract id (C…) on that network: the real one. */
  usdc: string;
  /** The certificate authority a client must trust (PEM): NODE_EXTRA_CA_CERTS, or trustCertificateInThisProcess. */
  caCertificatePem: string;
  /** Creates a classic account with `stroops` XLM (default 10,000 XLM), or adds them to it. */
  fundAccount(accountId: string, stroops?: bigint): void;
  /** A new account funded with `stroops` XLM (default 10,000 XLM): for a service that submits and pays fees here. */
  fundedAccount(stroops?: bigint): { publicKey: string; secret: string };
  /** Adds USDC (7 decimals) to an account's trustline (creating it; the account must exist) or a contract's balance. */
  mintUsdc(address: string, amount: bigint): void;
  usdcBalance(address: string): bigint;
  /**
   * The next transaction to apply from `source` (its source, operation source
   * or fee source; any transaction when omitted) lands FAILED, as a contract
   * call that traps on the network: txFAILED / INVOKE_HOST_FUNCTION_TRAPPED,
   * its fee charged and sequence number used, no USDC moved, no nonce spent.
   * Each call arms one failure.
   */
  failNextTransaction(source?: string): void;
  /** Every USDC transfer a transaction made, in order. */
  transfers(): ReadonlyArray<TransferRecord>;
  /** The account's XLM balance in stroops, or undefined when it does not exist. */
  xlmBalance(accountId: string): bigint | undefined;
  /** The account's current sequence number, or undefined when it does not exist. */
  sequenceNumber(accountId: string): bigint | undefined;
  latestLedger(): number;
  /** Closes the next ledger now, applying the transactions waiting. */
  closeLedger(): void;
  close(): Promise<void>;
}

/**
 * Starts a Soroban RPC stand-in in this process, serving HTTPS on loopback
 * with a certificate issued by a test authority, presenting itself as Stellar
 * testnet (or pubnet) with USDC's asset contract at its real id.
 */
export async function startStellarStandin(options: StellarStandinOptions = {}): Promise<StellarStandin> {
  const facts = networkFacts(options.network ?? STELLAR_TESTNET);
  const authority = options.certificateAuthority ?? (await createTestCertificateAuthority());
  const certificate = await issueLoopbackCertificate(authority);
  const ledger = new StellarLedger(facts, { firstLedger: FIRST_LEDGER, retentionLedgers: DEFAULT_RETENTION_LEDGERS });
  const server = await serveJsonRpc(createRpcMethods(ledger, DEFAULT_RETENTION_LEDGERS), {
    params: "named",
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 0,
    maxBodyBytes: 1024 * 1024,
    maxBatchRequests: 100,
    tls: { keyPem: certificate.keyPem, certificatePem: certificate.certificatePem },
    onInternalError: options.onInternalError,
  });
  const ledgerMs = options.ledgerMs ?? DEFAULT_LEDGER_MS;
  const timer = ledgerMs > 0 ? setInterval(() => ledger.closeLedger(), ledgerMs) : null;
  // The stand-in never keeps a process alive on its own: close() or the end of the process stops it.
  timer?.unref();
  return {
    url: server.url,
    ledgerSeconds: Math.max(1, Math.floor(ledgerMs / 1000)),
    network: facts.network,
    networkPassphrase: facts.passphrase,
    usdc: facts.usdcContract,
    caCertificatePem: authority.certificatePem,
    fundAccount: (accountId, stroops = DEFAULT_FUNDING_STROOPS) => ledger.fundAccount(accountId, stroops),
    fundedAccount: (stroops = DEFAULT_FUNDING_STROOPS) => {
      const keypair = Keypair.random();
      ledger.fundAccount(keypair.publicKey(), stroops);
      return { publicKey: keypair.publicKey(), secret: keypair.secret() };
    },
    mintUsdc: (address, amount) => ledger.mintUsdc(address, amount),
    usdcBalance: (address) => ledger.usdcBalance(address),
    failNextTransaction: (source) => ledger.failNextTransaction(source ?? null),
    transfers: () => ledger.transfers(),
    xlmBalance: (accountId) => ledger.accounts.get(accountId)?.balance,
    sequenceNumber: (accountId) => ledger.accounts.get(accountId)?.seqNum,
    latestLedger: () => ledger.latest.sequence,
    closeLedger: () => void ledger.closeLedger(),
    close: async () => {
      if (timer) clearInterval(timer);
      await server.close();
    },
  };
}
