import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { fulfillmentV1 } from "@c402/contracts";
import type { ServiceClient } from "@c402/rpc";
import type { IssuedPackage, PackageIssuer } from "../domain/payments";

/** Payments' PackageIssuer over fulfillment's gRPC contract. */
export function packageIssuer(fulfillment: ServiceClient<typeof fulfillmentV1.FulfillmentService>): PackageIssuer {
  return {
    async issue(req) {
      const r = await fulfillment.issuePackage({
        paymentId: req.paymentId,
        checkoutId: req.checkoutId,
        accountId: req.accountId,
        testMode: req.testMode,
        callsIncluded: req.calls,
        ttlDays: req.ttlDays,
        settledAt: timestampFromDate(req.settledAt),
        priceAtomic: req.priceAtomic,
        target: {
          $typeName: "fulfillment.v1.CallTarget",
          originUrl: req.origin.url,
          originMethod: req.origin.method,
          ...(req.origin.originKeyId !== undefined ? { originKeyId: req.origin.originKeyId } : {}),
          oneOffCredential: req.origin.oneOffCredential,
          mcp: req.origin.mcp !== undefined,
          ...(req.origin.mcp?.tool !== undefined ? { mcpTool: req.origin.mcp.tool } : {}),
          testDeliveryDailyCap: req.origin.testDeliveryDailyCap,
        },
      });
      if (!r.package) throw new Error("fulfillment answered without a package");
      const p = r.package;
      return {
        ...(r.packageKey !== undefined ? { key: r.packageKey } : {}),
        id: p.id,
        callsIncluded: p.callsIncluded,
        callsUsed: p.callsUsed,
        callsRemaining: p.callsRemaining,
        expiresAt: p.expiresAt ? timestampDate(p.expiresAt) : null,
        mcp: p.mcp,
      };
    },
  };
}

/** A purchase's package on the wire (SubmitPaymentResponse.package). */
export function issuedPackageMessage(p: IssuedPackage, checkoutId: string, paymentId: string, testMode: boolean): fulfillmentV1.PackageState {
  return {
    $typeName: "fulfillment.v1.PackageState",
    id: p.id,
    checkoutId,
    paymentId,
    testMode,
    callsIncluded: p.callsIncluded,
    callsUsed: p.callsUsed,
    callsRemaining: p.callsRemaining,
    ...(p.expiresAt ? { expiresAt: timestampFromDate(p.expiresAt) } : {}),
    mcp: p.mcp,
  };
}
