import { ORIGIN_HOP_MARGIN_MS, type fulfillmentV1 } from "@c402/contracts";
import type { ServiceClient } from "@c402/rpc";
import { deliveryFromMessage } from "../domain/payment-wire";
import type { OriginDelivery } from "../domain/settlement/paid-on-delivery";

/** Payments' OriginDelivery over fulfillment's gRPC contract. */
export function originDelivery(fulfillment: ServiceClient<typeof fulfillmentV1.FulfillmentService>): OriginDelivery {
  return {
    async deliver(req) {
      const { delivery } = await fulfillment.deliver(
        {
          paymentId: req.paymentId,
          checkoutId: req.checkoutId,
          accountId: req.accountId,
          originUrl: req.origin.url,
          originMethod: req.origin.method,
          ...(req.origin.originKeyId !== undefined ? { originKeyId: req.origin.originKeyId } : {}),
          oneOffCredential: req.origin.oneOffCredential,
          params: req.params,
          deadlineMs: req.deadlineMs,
          testMode: req.testMode,
          testDeliveryDailyCap: req.origin.testDeliveryDailyCap,
          mcp: req.origin.mcp !== undefined,
          ...(req.origin.mcp?.tool !== undefined ? { mcpTool: req.origin.mcp.tool } : {}),
        },
        // Longer than the origin's own deadline: the origin's timeout fires first, and its outcome comes back (ADR 9).
        { timeoutMs: req.deadlineMs + ORIGIN_HOP_MARGIN_MS },
      );
      if (!delivery) throw new Error("fulfillment answered without a delivery");
      return deliveryFromMessage(delivery);
    },
    async check(origin, params) {
      await fulfillment.checkCall({
        originUrl: origin.url,
        originMethod: origin.method,
        params,
        mcp: origin.mcp !== undefined,
        ...(origin.mcp?.tool !== undefined ? { mcpTool: origin.mcp.tool } : {}),
      });
    },
    async conclude(paymentId) {
      const { delivery } = await fulfillment.concludeDelivery({ paymentId });
      return delivery && deliveryFromMessage(delivery);
    },
  };
}
