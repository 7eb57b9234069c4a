import { jsonRpcTransport } from "@c402/evm-chain";
import { C402Escrow, type EscrowTerms } from "@c402/evm-contracts";
import { NonceSpentError, TransactionSender, type NonceReservation } from "@c402/evm-sender";
import { ProblemError } from "@c402/problems";
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  decodeFunctionData,
  encodeFunctionData,
  getAddress,
  parseEventLogs,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type Log,
  type PublicClient,
  type TransactionReceipt,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";

export { NonceSpentError };

/** One log of the escrow contract, decoded: what the reader applies. */
export type EscrowLog = ReturnType<typeof parseEventLogs<typeof C402Escrow.abi>>[number];

/** The escrow contract on one chain, and the relayer key that sends to it (ADR 19): reads, signed calls, logs. */
export interface EscrowChain {
  readonly network: string;
  readonly chainId: number;
  readonly contract: Address;
  readonly relayer: Address;
  /** Signs a call to the contract from the relayer with a nonce `reserve` takes from the shared count; nothing is sent. */
  signReserved<T>(data: Hex, reserve: NonceReservation<T>): Promise<T>;
  /** Runs a call to the contract from the relayer against the latest block: undefined when it would succeed, else the contract's error (name and arguments, or a token's revert reason). */
  simulate(data: Hex): Promise<string | undefined>;
  /** Sends a signed transaction (sending the same one again is not an error). */
  broadcast(raw: Hex): Promise<void>;
  /** The receipt, or null while it is not mined. */
  receipt(hash: Hex): Promise<TransactionReceipt | null>;
  waitForReceipt(hash: Hex, timeoutMs: number): Promise<TransactionReceipt | null>;
  nonces(escrowId: Hex): Promise<bigint>;
  /** The contract's state id of the escrow (0: none). */
  state(escrowId: Hex): Promise<number>;
  timedExit(escrowId: Hex): Promise<{ exit: number; opensAt: bigint; due: boolean }>;
  /** The latest block: its number and timestamp (the contract's clock). */
  head(): Promise<{ number: bigint; timestamp: bigint }>;
  blockTime(blockNumber: bigint): Promise<bigint>;
  /** The contract's logs in [from, to], decoded, in chain order. */
  logs(from: bigint, to: bigint): Promise<EscrowLog[]>;
  /** The contract's logs of one receipt. */
  logsOf(receipt: TransactionReceipt): EscrowLog[];
}

export interface EscrowChainSettings {
  network: string;
  rpcUrl: string;
  contract: string;
  relayerKey: string;
  rpcTimeoutMs?: number;
}

/** The gas a relayed call is given without an estimate (a deposit, an action, a timed exit all stay well below; a revert only costs gas). */
const ESCROW_CALL_GAS = 400_000n;

export function jsonRpcEscrowChain(s: EscrowChainSettings): EscrowChain {
  const chainId = Number(s.network.split(":")[1]);
  const client = createPublicClient({
    transport: jsonRpcTransport(s.rpcUrl, { timeoutMs: s.rpcTimeoutMs ?? 10_000, maxSockets: 8 }),
    pollingInterval: 100,
  }) as PublicClient;
  const account = privateKeyToAccount(s.relayerKey as Hex);
  const contract = getAddress(s.contract);
  const sender = new TransactionSender({ rpc: client as never, account, chainId });
  const read = <T>(functionName: string, args: readonly unknown[]) =>
    client.readContract({ address: contract, abi: C402Escrow.abi, functionName, args } as never) as Promise<T>;
  const decode = (logs: Log[]) => parseEventLogs({ abi: C402Escrow.abi, logs, strict: true }).filter((l) => getAddress(l.address) === contract);
  return {
    network: s.network,
    chainId,
    contract,
    relayer: account.address,
    signReserved: (data, reserve) => sender.signReserved({ to: contract, data, gas: ESCROW_CALL_GAS }, reserve),
    async simulate(data) {
      const { functionName, args } = decodeFunctionData({ abi: C402Escrow.abi, data });
      try {
        await client.simulateContract({ address: contract, abi: C402Escrow.abi, functionName, args, account: account.address } as never);
        return undefined;
      } catch (err) {
        const reverted = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : null;
        if (reverted instanceof ContractFunctionRevertedError) {
          const decoded = reverted.data;
          if (decoded) return `${decoded.errorName}${decoded.args?.length ? `(${decoded.args.map(String).join(", ")})` : ""}`;
          return reverted.reason ?? "reverted";
        }
        throw new ProblemError("unavailable", "The escrow's network did not answer: retry shortly.");
      }
    },
    broadcast: (raw) => sender.broadcast(raw),
    async receipt(hash) {
      try {
        return await client.getTransactionReceipt({ hash });
      } catch (err) {
        if (err instanceof TransactionReceiptNotFoundError) return null;
        throw err;
      }
    },
    async waitForReceipt(hash, timeoutMs) {
      try {
        return await client.waitForTransactionReceipt({ hash, timeout: timeoutMs, pollingInterval: 100 });
      } catch {
        return null;
      }
    },
    nonces: (id) => read<bigint>("nonces", [id]),
    state: async (id) => (await read<{ state: number }>("escrows", [id])).state,
    async timedExit(id) {
      const [exit, opensAt, due] = await read<readonly [number, bigint, boolean]>("timedExit", [id]);
      return { exit, opensAt, due };
    },
    async head() {
      const block = await client.getBlock({ blockTag: "latest" });
      return { number: block.number, timestamp: block.timestamp };
    },
    async blockTime(blockNumber) {
      return (await client.getBlock({ blockNumber })).timestamp;
    },
    async logs(from, to) {
      return decode(await client.getLogs({ address: contract, fromBlock: from, toBlock: to }));
    },
    logsOf: (receipt) => decode(receipt.logs),
  };
}

/** The calldata of the contract's calls the relayer makes. */
export const escrowCalls = {
  depositWithSignature: (terms: EscrowTerms, validAfter: bigint, validBefore: bigint, signature: Hex) =>
    encodeFunctionData({ abi: C402Escrow.abi, functionName: "depositWithSignature", args: [terms, validAfter, validBefore, signature] }),
  submitAction: (id: Hex, action: number, deadline: bigint, v: number, r: Hex, s: Hex) =>
    encodeFunctionData({ abi: C402Escrow.abi, functionName: "submitAction", args: [id, action, deadline, v, r, s] }),
  release: (id: Hex) => encodeFunctionData({ abi: C402Escrow.abi, functionName: "release", args: [id] }),
  refund: (id: Hex) => encodeFunctionData({ abi: C402Escrow.abi, functionName: "refund", args: [id] }),
  rule: (id: Hex, toSeller: boolean) => encodeFunctionData({ abi: C402Escrow.abi, functionName: "rule", args: [id, toSeller] }),
};
