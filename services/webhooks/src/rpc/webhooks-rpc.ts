import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { actorOfRequest } from "@c402/account-events";
import type { webhooksV1 } from "@c402/contracts";
import type { ServiceImplementation } from "@c402/rpc";
import { DEFAULT_OVERLAP_MS, type SigningKeys } from "../domain/signing-keys";
import type { Endpoints } from "../domain/endpoints";
import type { EndpointView } from "../store/endpoints-store";
import {
  webhooksStore,
  type DeliveryAttemptRow,
  type DeliveryRow,
  type DeliveryStatus,
  type PageQuery,
  type SigningKeyRow,
  type WebhooksDb,
} from "../store/webhooks-store";

const at = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

function pageOf(req: { pageSize: number; after?: { createdAt?: Parameters<typeof timestampDate>[0]; id: string } }): PageQuery {
  return { limit: req.pageSize, ...(req.after?.createdAt ? { after: { createdAt: timestampDate(req.after.createdAt), id: req.after.id } } : {}) };
}

function endpointMessage(e: EndpointView) {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    active: e.active,
    ...(e.disabled_reason ? { disabledReason: e.disabled_reason } : {}),
    disabledAt: at(e.disabled_at),
    consecutiveFailures: e.consecutive_failures,
    failedAttempts: BigInt(e.failed_attempts),
    failedDeliveries: BigInt(e.failed_deliveries),
    pendingDeliveries: BigInt(e.pending_deliveries ?? 0),
    delivered: BigInt(e.delivered),
    lastSuccessAt: at(e.last_success_at),
    lastFailureAt: at(e.last_failure_at),
    createdAt: timestampFromDate(e.created_at),
    rekeyedAt: at(e.rekeyed_at),
  };
}

function deliveryMessage(d: DeliveryRow) {
  return {
    id: d.id,
    endpointId: d.endpoint_id,
    event: d.event,
    eventId: d.event_id,
    aggregateId: d.aggregate_id,
    testMode: d.test_mode,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: at(d.next_attempt_at),
    ...(d.last_status_code !== null ? { lastStatusCode: d.last_status_code } : {}),
    ...(d.last_error !== null ? { lastError: d.last_error } : {}),
    createdAt: timestampFromDate(d.created_at),
    deliveredAt: at(d.delivered_at),
  };
}

function attemptMessage(a: DeliveryAttemptRow) {
  return {
    number: a.number,
    startedAt: timestampFromDate(a.started_at),
    ...(a.status_code !== null ? { statusCode: a.status_code } : {}),
    latencyMs: a.latency_ms,
    ...(a.error !== null ? { error: a.error } : {}),
    outcome: a.outcome,
  };
}

function keyMessage(k: SigningKeyRow) {
  return { id: k.id, publicKey: new Uint8Array(k.public_key), createdAt: timestampFromDate(k.created_at), retiresAt: at(k.retires_at) };
}

export function webhooksRpc(db: WebhooksDb, endpoints: Endpoints, keys: SigningKeys): ServiceImplementation<typeof webhooksV1.WebhooksService> {
  return {
    async listRecordedEvents(req) {
      const rows = await webhooksStore.listForAccount(db, req.accountId);
      return {
        events: rows.map((r) => ({
          eventId: r.event_id,
          type: r.type,
          accountId: r.account_id,
          aggregateId: r.aggregate_id,
          testMode: r.test_mode,
          occurredAt: timestampFromDate(r.occurred_at),
          recordedAt: timestampFromDate(r.recorded_at),
        })),
      };
    },
    async registerEndpoint(req) {
      const r = await endpoints.register({
        accountId: req.accountId,
        actor: actorOfRequest(req.actor),
        testMode: req.testMode,
        url: req.url,
        events: req.events,
      });
      return { endpoint: endpointMessage(r.endpoint), secret: r.secret, rekeyed: r.rekeyed };
    },
    async listEndpoints(req) {
      return { endpoints: (await endpoints.list(req.accountId, pageOf(req))).map(endpointMessage) };
    },
    async deleteEndpoint(req) {
      const r = await endpoints.delete({ accountId: req.accountId, actor: actorOfRequest(req.actor), testMode: req.testMode, id: req.endpointId });
      return { endpoint: endpointMessage(r.endpoint), pendingRemoved: BigInt(r.pendingRemoved) };
    },
    async listDeliveries(req) {
      const rows = await endpoints.deliveries(req.accountId, req.endpointId, pageOf(req), req.status as DeliveryStatus | undefined);
      return { deliveries: rows.map(deliveryMessage) };
    },
    async getDelivery(req) {
      const r = await endpoints.delivery(req.accountId, req.endpointId, req.deliveryId);
      return { delivery: deliveryMessage(r.delivery), payloadJson: r.delivery.payload, attempts: r.attempts.map(attemptMessage) };
    },
    async verificationKeys() {
      return { keys: (await keys.published()).map(keyMessage) };
    },
    async rotateSigningKey(req) {
      return { keys: (await keys.rotate(req.overlapSeconds > 0 ? req.overlapSeconds * 1000 : DEFAULT_OVERLAP_MS)).map(keyMessage) };
    },
  };
}
