import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { actorOfRequest } from "@c402/account-events";
import { fulfillmentV1, originAuthTypeName, originAuthTypeToProto } from "@c402/contracts";
import { invalid } from "@c402/problems";
import type { ServiceImplementation } from "@c402/rpc";
import { originTimeFor } from "../domain/caller-deadline";
import type { McpTools } from "../domain/mcp-tools";
import type { OriginAuthRequest } from "../domain/origin-auth";
import type { OriginKeys } from "../domain/origin-keys";
import type { OriginKeyPage, OriginKeyRow } from "../store/origin-keys-store";
import type { RelayDeliveries } from "../domain/relay-deliveries";
import { answeredCallMessage, deliveryMessage } from "./delivery-messages";
import type { Packages } from "../domain/packages";
import { packageRpc } from "./packages-rpc";

export function originKeyMessage(k: OriginKeyRow): fulfillmentV1.OriginKey {
  return {
    $typeName: "fulfillment.v1.OriginKey",
    id: k.id,
    ...(k.name !== null ? { name: k.name } : {}),
    authType: originAuthTypeToProto(k.auth_type),
    ...(k.header_name !== null ? { headerName: k.header_name } : {}),
    createdAt: timestampFromDate(k.created_at),
    ...(k.rotated_at ? { rotatedAt: timestampFromDate(k.rotated_at) } : {}),
    ...(k.revoked_at ? { revokedAt: timestampFromDate(k.revoked_at) } : {}),
    checkoutsUsing: k.checkouts_using,
  };
}

function pageOf(req: fulfillmentV1.ListOriginKeysRequest): OriginKeyPage {
  if (!req.after) return { size: req.pageSize };
  if (!req.after.createdAt || !req.after.id) throw invalid([{ field: "after", reason: "needs created_at and id" }]);
  return { size: req.pageSize, after: { createdAt: timestampDate(req.after.createdAt), id: req.after.id } };
}

/** The origin call a request names (Deliver and ReadArticle name it alike). */
function originCallOf(req: fulfillmentV1.DeliverRequest | fulfillmentV1.ReadArticleRequest) {
  return {
    checkoutId: req.checkoutId,
    accountId: req.accountId,
    originUrl: req.originUrl,
    method: req.originMethod,
    ...(req.originKeyId !== undefined ? { originKeyId: req.originKeyId } : {}),
    oneOffCredential: req.oneOffCredential,
    params: req.params,
  };
}

function originAuthOf(auth: fulfillmentV1.OriginAuth | undefined): OriginAuthRequest {
  const source = auth?.source;
  if (!source || source.case === undefined) return { kind: "none" };
  if (source.case === "originKeyId") return { kind: "origin_key", originKeyId: source.value };
  const authType = originAuthTypeName(source.value.authType);
  if (!authType) throw invalid([{ field: "origin_auth_type", reason: "must be bearer, basic, api_key or custom" }]);
  return { kind: "one_off", authType, value: source.value.value, ...(source.value.headerName !== undefined ? { headerName: source.value.headerName } : {}) };
}

export function fulfillmentRpc(
  originKeys: OriginKeys,
  mcpTools: McpTools,
  relay: RelayDeliveries,
  packages: Packages,
): ServiceImplementation<typeof fulfillmentV1.FulfillmentService> {
  return {
    ...packageRpc(packages),
    async registerOrigin(req) {
      const originUrl = await relay.register({ accountId: req.accountId, checkoutId: req.checkoutId, originUrl: req.originUrl, auth: originAuthOf(req.auth) });
      return { originUrl };
    },
    async forgetOrigin(req) {
      await relay.forget(req.checkoutId);
      return {};
    },
    async readArticle(req, ctx) {
      return { delivery: answeredCallMessage(await relay.readArticle(originCallOf(req), ctx.deadline)) };
    },
    async countRehearsalDelivery(req) {
      const counted = await relay.countRehearsalDelivery(req.checkoutId, req.testDeliveryDailyCap);
      return { testDeliveriesLeft: counted.left, testDeliveriesResetSeconds: counted.resetSeconds };
    },
    async deliver(req, ctx) {
      const delivery = await relay.deliver({
        paymentId: req.paymentId,
        ...originCallOf(req),
        // Payments fits the deadline inside its own; cut to the call's, should a caller give less (ADR 9).
        deadlineMs: originTimeFor(ctx.deadline, req.deadlineMs),
        testMode: req.testMode,
        testDeliveryDailyCap: req.testDeliveryDailyCap,
        ...(req.mcp ? { mcp: req.mcpTool !== undefined ? { fixedTool: req.mcpTool } : {} } : {}),
      });
      return { delivery: deliveryMessage(delivery) };
    },
    async checkCall(req) {
      relay.check({
        originUrl: req.originUrl,
        method: req.originMethod,
        params: req.params,
        ...(req.mcp ? { mcp: req.mcpTool !== undefined ? { fixedTool: req.mcpTool } : {} } : {}),
      });
      return {};
    },
    async concludeDelivery(req) {
      const delivery = await relay.conclude(req.paymentId);
      return delivery ? { delivery: deliveryMessage(delivery) } : {};
    },
    async createOriginKey(req) {
      const authType = originAuthTypeName(req.authType);
      if (!authType) throw invalid([{ field: "auth_type", reason: "must be bearer, basic, api_key or custom" }]);
      const key = await originKeys.create({
        accountId: req.accountId,
        actor: actorOfRequest(req.actor),
        testMode: req.testMode,
        authType,
        value: req.value,
        ...(req.name !== undefined ? { name: req.name } : {}),
        ...(req.headerName !== undefined ? { headerName: req.headerName } : {}),
      });
      return { originKey: originKeyMessage(key) };
    },
    async listOriginKeys(req) {
      return { originKeys: (await originKeys.list(req.accountId, pageOf(req))).map(originKeyMessage) };
    },
    async rotateOriginKey(req) {
      const key = await originKeys.rotate({
        accountId: req.accountId,
        actor: actorOfRequest(req.actor),
        testMode: req.testMode,
        id: req.originKeyId,
        value: req.value,
      });
      return { originKey: originKeyMessage(key) };
    },
    async revokeOriginKey(req) {
      const { key, revoked } = await originKeys.revoke({
        accountId: req.accountId,
        actor: actorOfRequest(req.actor),
        testMode: req.testMode,
        id: req.originKeyId,
      });
      return { originKey: originKeyMessage(key), revoked };
    },
    async listMcpTools(req) {
      const tools = await mcpTools.list({ accountId: req.accountId, originUrl: req.originUrl, auth: originAuthOf(req.auth) });
      return {
        originUrl: req.originUrl,
        tools: tools.map((t) => ({
          $typeName: "fulfillment.v1.McpTool" as const,
          name: t.name,
          ...(t.description !== undefined ? { description: t.description } : {}),
          inputSchemaJson: JSON.stringify(t.inputSchema ?? {}),
        })),
      };
    },
  };
}
