import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { accountActivityRow, type Actor } from "@c402/account-events";
import { outboxRow, type OutboxRow } from "@c402/bus";
import { catalogEventsV1, EVENT_TYPES, TOPICS } from "@c402/contracts";
import type { ReportRow } from "../store/report-store";

/**
 * The events of a report, as outbox rows written in the transaction that
 * files or changes it: `checkout.reported` on its own topic (keyed by the
 * checkout, so one checkout's reports stay in order), and the account events
 * `report.filed` / `report.updated` (keyed by the report).
 */

export function checkoutReportedRow(report: ReportRow): OutboxRow {
  return outboxRow({
    topic: TOPICS.checkoutReported,
    type: EVENT_TYPES.checkoutReported,
    accountId: report.account_id,
    testMode: report.test_mode,
    aggregateId: report.checkout_id,
    occurredAt: report.created_at,
    payload: toBinary(
      catalogEventsV1.CheckoutReportedSchema,
      create(catalogEventsV1.CheckoutReportedSchema, {
        reportId: report.id,
        checkoutId: report.checkout_id,
        category: report.category,
        kind: report.kind,
        ...(report.payment_id !== null ? { receiptId: report.payment_id } : {}),
        createdAt: timestampFromDate(report.created_at),
      }),
    ),
  });
}

/**
 * A report's account event. Filing has no seller behind it (buyers never
 * authenticate): it is recorded with actor `system`, the service recording
 * what reached it (docs/account-events.md).
 */
export function reportActivity(
  report: Pick<ReportRow, "id" | "account_id" | "test_mode">,
  change: { action: "report.filed" | "report.updated"; actor: Actor; at: Date; detail: Record<string, unknown> },
): OutboxRow {
  return accountActivityRow({
    accountId: report.account_id,
    action: change.action,
    objectId: report.id,
    detail: change.detail,
    actor: change.actor,
    testMode: report.test_mode,
    at: change.at,
  });
}
