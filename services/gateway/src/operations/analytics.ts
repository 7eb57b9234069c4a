import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { invalid, type FieldError } from "@c402/problems";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { analyticsView, windowStart } from "../views/analytics";

/** The longest window GET /v1/analytics sums (a year and a day). */
export const ANALYTICS_DAYS_MAX = 366;

function queryOf(query: Record<string, unknown>): { days: number; testMode: boolean } {
  const errors: FieldError[] = [];
  const days = query.days ?? "30";
  if (typeof days !== "string" || !/^\d{1,3}$/.test(days) || Number(days) < 1 || Number(days) > ANALYTICS_DAYS_MAX) {
    errors.push({ field: "days", reason: `must be an integer from 1 to ${ANALYTICS_DAYS_MAX}` });
  }
  const mode = query.test_mode ?? "false";
  if (mode !== "true" && mode !== "false") errors.push({ field: "test_mode", reason: "must be true or false" });
  if (errors.length) throw invalid(errors);
  return { days: Number(days), testMode: mode === "true" };
}

/** GET /v1/analytics and the MCP tool get_analytics: earnings, buyers, failed deliveries and liabilities over the last `days` UTC days. */
export async function sellerAnalytics({ clients }: Pick<GatewayDeps, "clients">, cred: Credential, query: Record<string, unknown>) {
  ensureScope(cred, "read_only");
  const { days, testMode } = queryOf(query);
  const now = new Date();
  const since = windowStart(now, days);
  const [sales, fulfillment] = await Promise.all([
    clients.payments.salesAnalytics({ accountId: cred.accountId, since: timestampFromDate(since), testMode }),
    clients.fulfillment.accountFulfillment({ accountId: cred.accountId, since: timestampFromDate(since), testMode }),
  ]);
  return analyticsView({ days, since, now, testMode, sales, fulfillment });
}
