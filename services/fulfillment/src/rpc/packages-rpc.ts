import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { fulfillmentV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import { callsRemaining, type Burn, type Packages, type SpentCall } from "../domain/packages";
import type { PackageCallRow, PackageRow } from "../store/packages-store";
import { answeredCallMessage } from "./delivery-messages";

type PackageHandlers = Pick<
  ServiceImplementation<typeof fulfillmentV1.FulfillmentService>,
  "issuePackage" | "spendPackageCall" | "packageUsage" | "packageLiabilities" | "accountFulfillment"
>;

export function packageStateMessage(p: PackageRow): fulfillmentV1.PackageState {
  return {
    $typeName: "fulfillment.v1.PackageState",
    id: p.id,
    checkoutId: p.checkout_id,
    paymentId: p.payment_id,
    testMode: p.test_mode,
    callsIncluded: p.calls_included,
    callsUsed: p.calls_used,
    callsRemaining: callsRemaining(p),
    ...(p.expires_at ? { expiresAt: timestampFromDate(p.expires_at) } : {}),
    createdAt: timestampFromDate(p.created_at),
    mcp: p.mcp,
  };
}

/** A charged call's answer as a delivery on the wire (what a purchase's delivery answers too). */
function spentDeliveryMessage(s: SpentCall): fulfillmentV1.Delivery {
  return {
    ...answeredCallMessage(s.outcome),
    ...(s.testDeliveriesLeft !== undefined ? { testDeliveriesLeft: s.testDeliveriesLeft } : {}),
    ...(s.testDeliveriesResetSeconds !== undefined ? { testDeliveriesResetSeconds: s.testDeliveriesResetSeconds } : {}),
  };
}

function callMessage(c: PackageCallRow): fulfillmentV1.PackageCall {
  return {
    $typeName: "fulfillment.v1.PackageCall",
    seq: c.seq,
    at: timestampFromDate(c.at),
    status: c.status,
    counted: c.counted,
    ...(c.fault !== null ? { fault: c.fault } : {}),
    latencyMs: c.latency_ms,
    bytes: c.bytes,
    pending: c.state === "calling",
  };
}

function burnMessage(b: Burn): fulfillmentV1.Burn {
  return {
    $typeName: "fulfillment.v1.Burn",
    basis: b.basis,
    ...(b.callsPerDay !== undefined ? { callsPerDay: b.callsPerDay } : {}),
    ...(b.projectedDaysRemaining !== undefined ? { projectedDaysRemaining: b.projectedDaysRemaining } : {}),
    ...(b.runsOutFirst !== undefined ? { runsOutFirst: b.runsOutFirst } : {}),
  };
}

export function packageRpc(packages: Packages): PackageHandlers {
  return {
    async issuePackage(req) {
      const target = req.target;
      if (!target || !req.settledAt) throw new ProblemError("invalid-request", "IssuePackage needs the call target and the settlement time.");
      const { key, pkg } = await packages.issue({
        paymentId: req.paymentId,
        checkoutId: req.checkoutId,
        accountId: req.accountId,
        testMode: req.testMode,
        callsIncluded: req.callsIncluded,
        ttlDays: req.ttlDays,
        settledAt: timestampDate(req.settledAt),
        priceAtomic: req.priceAtomic,
        target: {
          originUrl: target.originUrl,
          method: target.originMethod,
          ...(target.originKeyId !== undefined ? { originKeyId: target.originKeyId } : {}),
          oneOffCredential: target.oneOffCredential,
          ...(target.mcp ? { mcp: target.mcpTool !== undefined ? { fixedTool: target.mcpTool } : {} } : {}),
          testDeliveryDailyCap: target.testDeliveryDailyCap,
        },
      });
      return { ...(key !== undefined ? { packageKey: key } : {}), package: packageStateMessage(pkg) };
    },
    async spendPackageCall(req, ctx) {
      const spent = await packages.spend({
        checkoutId: req.checkoutId,
        key: req.packageKey,
        params: req.params,
        ...(ctx.deadline ? { answerBy: ctx.deadline } : {}),
      });
      return { delivery: spentDeliveryMessage(spent), package: packageStateMessage(spent.pkg), seq: spent.seq };
    },
    async packageUsage(req) {
      const usage = await packages.usage({
        checkoutId: req.checkoutId,
        key: req.packageKey,
        pageSize: req.pageSize,
        ...(req.beforeSeq !== undefined ? { beforeSeq: req.beforeSeq } : {}),
      });
      return { package: packageStateMessage(usage.pkg), calls: usage.calls.map(callMessage), hasMore: usage.hasMore, burn: burnMessage(usage.burn) };
    },
    async accountFulfillment(req) {
      if (!req.since) throw new ProblemError("invalid-request", "AccountFulfillment needs since.");
      const a = await packages.accountFulfillment(req.accountId, timestampDate(req.since), req.testMode);
      return {
        failedDeliveries: a.failedDeliveries,
        failedPackageCalls: a.failedPackageCalls,
        offers: a.offers.map((o) => ({ $typeName: "fulfillment.v1.CheckoutLiabilities" as const, ...o })),
        totals: {
          $typeName: "fulfillment.v1.PackageLiabilitiesResponse",
          liveKeys: a.totals.liveKeys,
          callsUnspent: a.totals.callsUnspent,
          unearnedAtomic: a.totals.unearnedAtomic,
        },
      };
    },
    async packageLiabilities(req) {
      const l = await packages.liabilities(req.checkoutId);
      return { liveKeys: l.liveKeys, callsUnspent: l.callsUnspent, unearnedAtomic: l.unearnedAtomic };
    },
  };
}
