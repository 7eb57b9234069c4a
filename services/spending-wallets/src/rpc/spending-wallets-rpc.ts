import { spendingWalletsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";

/** The gRPC handlers: thin, every rule in domain/. */
export function spendingWalletsRpc(): ServiceImplementation<typeof spendingWalletsV1.SpendingWalletsService> {
  const notYet = async (): Promise<never> => {
    throw new ProblemError("unavailable", "Spending wallets are not available yet.");
  };
  return Object.fromEntries(spendingWalletsV1.SpendingWalletsService.methods.map((m) => [m.localName, notYet])) as unknown as ServiceImplementation<
    typeof spendingWalletsV1.SpendingWalletsService
  >;
}
