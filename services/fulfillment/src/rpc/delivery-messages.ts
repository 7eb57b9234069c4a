import { deliveryOutcomeToProto, fulfillmentV1 } from "@c402/contracts";
import type { RelayOutcome } from "../domain/relay-call";
import type { CountedDelivery } from "../domain/relay-deliveries";

/** Deliveries and answered calls as the wire carries them (Deliver, ConcludeDelivery, SpendPackageCall, ReadArticle). */

/** A recorded delivery on the wire; the body only with a charged outcome (nothing else is ever answered). */
export function deliveryMessage(d: CountedDelivery): fulfillmentV1.Delivery {
  return {
    $typeName: "fulfillment.v1.Delivery",
    outcome: d.outcome ? deliveryOutcomeToProto(d.outcome) : fulfillmentV1.DeliveryOutcome.UNSPECIFIED,
    charged: d.charged,
    status: d.status,
    ...(d.content_type !== null ? { contentType: d.content_type } : {}),
    body: d.charged && d.body ? new Uint8Array(d.body) : new Uint8Array(),
    latencyMs: d.latency_ms,
    bytes: d.bytes,
    reason: d.reason,
    ...(d.testDeliveriesLeft !== undefined ? { testDeliveriesLeft: d.testDeliveriesLeft } : {}),
    ...(d.testDeliveriesResetSeconds !== undefined ? { testDeliveriesResetSeconds: d.testDeliveriesResetSeconds } : {}),
  };
}

/** A call the origin answered (goods, or the caller's own request error) on the wire, outside a recorded delivery. */
export function answeredCallMessage(o: Extract<RelayOutcome, { charged: true }>): fulfillmentV1.Delivery {
  return {
    $typeName: "fulfillment.v1.Delivery",
    outcome: deliveryOutcomeToProto(o.kind),
    charged: true,
    status: o.status,
    ...(o.contentType !== null ? { contentType: o.contentType } : {}),
    body: new Uint8Array(o.body),
    latencyMs: o.latencyMs,
    bytes: o.bytes,
    reason: "",
  };
}
