import { EVM_NETWORKS, isEvmNetwork } from "./evm";
import { isSvmNetwork, SVM_NETWORKS } from "./svm";
import type { PaymentRequired } from "./wire";

/**
 * One `accepts[]` entry in the x402 v1 form, shaped to pass the strict schema
 * of the legacy `x402-fetch` 1.2.0 client: an enum network name,
 * `maxAmountRequired`, an absolute `resource`, string `description` and
 * `mimeType`, and no `outputSchema` at all (it rejects `null`).
 */
export interface PaymentRequirementsV1 {
  scheme: string;
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: Record<string, unknown>;
}

export interface PaymentRequiredV1 {
  x402Version: 1;
  error: string;
  accepts: PaymentRequirementsV1[];
}

/** The v1 name of a CAIP-2 network, or undefined when v1 has none. */
export function v1NetworkName(network: string): string | undefined {
  if (isEvmNetwork(network)) return EVM_NETWORKS[network].v1Name;
  return isSvmNetwork(network) ? SVM_NETWORKS[network].v1Name : undefined;
}

/** The v1 form of a v2 payment-required answer; requirements on networks v1 cannot name are left out. */
export function toPaymentRequiredV1(required: PaymentRequired): PaymentRequiredV1 {
  return {
    x402Version: 1,
    error: required.error ?? "Payment required",
    accepts: required.accepts.flatMap((r) => {
      const network = v1NetworkName(r.network);
      if (!network) return [];
      return [
        {
          scheme: r.scheme,
          network,
          maxAmountRequired: r.amount,
          resource: r.resource ?? required.resource.url,
          description: required.resource.description ?? "",
          mimeType: required.resource.mimeType ?? "application/json",
          payTo: r.payTo,
          maxTimeoutSeconds: r.maxTimeoutSeconds,
          asset: r.asset,
          extra: r.extra,
        },
      ];
    }),
  };
}
