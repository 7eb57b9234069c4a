import type { EscrowActionName } from "@c402/evm-contracts";
import type { EscrowContract } from "../../src";
import type { DepositRequest } from "../../src/domain/escrow-book";

/** What the crash test hands the process: where everything is, and the one saga step to run. */
export interface SagaProcessInput {
  databaseUrl: string;
  rpcUrl: string;
  relayerKey: string;
  contract: EscrowContract;
  deposit?: DepositRequest;
  action?: { paymentId: string; checkoutId: string; action: EscrowActionName; deadline: string; v: number; r: string; s: string };
}

export const SAGA_RESULT_PREFIX = "SAGA_RESULT ";
