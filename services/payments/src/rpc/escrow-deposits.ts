import { ESCROW_DEPOSIT_TIMEOUT_MS, escrowV1 } from "@c402/contracts";
import { ESCROW_PRESET } from "@c402/evm-contracts";
import { ProblemError } from "@c402/problems";
import type { ServiceClient } from "@c402/rpc";
import type { EscrowDeposits } from "../domain/settlement/escrow";

/** The wire's preset of the contract's preset id (ESCROW_PRESET). */
const PRESET_OF_ID: Record<number, escrowV1.EscrowPreset> = {
  [ESCROW_PRESET.instant]: escrowV1.EscrowPreset.INSTANT,
  [ESCROW_PRESET.standard]: escrowV1.EscrowPreset.STANDARD,
  [ESCROW_PRESET.shipping]: escrowV1.EscrowPreset.SHIPPING,
  [ESCROW_PRESET.custom]: escrowV1.EscrowPreset.CUSTOM,
};

/**
 * Payments' EscrowDeposits over the escrow service's gRPC Deposit. The
 * escrow service refuses terms or an authorization the contract would refuse
 * with FAILED_PRECONDITION (a payment-required problem here): that is the
 * buyer's answer, nothing moved. Any other failure is thrown as it came: the
 * deposit's outcome is unknown, and the payment presented again asks again.
 */
export function escrowDeposits(client: ServiceClient<typeof escrowV1.EscrowService>): EscrowDeposits {
  return {
    async deposit(call) {
      const t = call.terms;
      try {
        const r = await client.deposit(
          {
            paymentId: call.paymentId,
            accountId: call.accountId,
            checkoutId: call.checkoutId,
            network: call.network,
            testMode: call.testMode,
            terms: {
              buyer: t.buyer,
              seller: t.seller,
              platform: t.platform,
              feeTo: t.feeTo,
              arbiter: t.arbiter,
              amount: t.amount.toString(),
              platformAmount: t.platformAmount.toString(),
              fee: t.fee.toString(),
              preset: PRESET_OF_ID[t.preset] ?? escrowV1.EscrowPreset.CUSTOM,
              windows: { settleSeconds: Number(t.settleWindow), holdSeconds: Number(t.holdWindow), backstopSeconds: Number(t.backstopWindow) },
              salt: t.salt,
            },
            authorization: call.authorization,
            ...(call.handoffId !== null ? { handoffId: call.handoffId } : {}),
          },
          { timeoutMs: ESCROW_DEPOSIT_TIMEOUT_MS },
        );
        const txHash = r.escrow?.depositTxHash;
        return { outcome: r.pending ? "pending" : "held", replayed: r.replayed, ...(txHash ? { txHash } : {}) };
      } catch (err) {
        if (err instanceof ProblemError && err.slug === "payment-required") return { outcome: "refused", reason: err.message };
        throw err;
      }
    },
  };
}
