import type { paymentsV1, paymentEventsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import type { ServiceClient } from "@c402/rpc";

/**
 * Period 0's payment.settled of a series, asked of payments (GetSeriesStart):
 * undefined when payments sold no such series (or its period 0 has not
 * settled); any other failure is the caller's (a read answers 503, not 404).
 */
export function seriesStartFrom(payments: Pick<ServiceClient<typeof paymentsV1.PaymentsService>, "getSeriesStart">) {
  return async (scheduleId: string): Promise<paymentEventsV1.PaymentSettled | undefined> => {
    try {
      return (await payments.getSeriesStart({ scheduleId })).settled;
    } catch (err) {
      if (err instanceof ProblemError && err.slug === "not-found") return undefined;
      throw err;
    }
  };
}
