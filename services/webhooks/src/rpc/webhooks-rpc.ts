import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { webhooksV1 } from "@c402/contracts";
import type { ServiceImplementation } from "@c402/rpc";
import { webhooksStore, type WebhooksDb } from "../store/webhooks-store";

export function webhooksRpc(db: WebhooksDb): ServiceImplementation<typeof webhooksV1.WebhooksService> {
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
  };
}
