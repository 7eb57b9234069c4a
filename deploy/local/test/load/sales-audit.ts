import { SERVICES } from "@c402/topology";
import type { WebhookReceiver } from "@c402/testkit/webhook-receiver";
import pg from "pg";

/**
 * The count after the fact, once the buyers stopped: every payment answered
 * (`paymentIds`, all the cluster ever answered) is settled once (a pending live
 * one is concluded by its saga; no row is left claimed or settling), there is
 * no payment nobody was answered for, every service's outbox is published,
 * payments' outbox holds one event per payment, and the seller's webhook heard
 * of each sale under one webhook-id (a redelivery keeps it).
 */
export async function expectEverySaleRecordedOnce(
  databaseUrl: string,
  receiver: WebhookReceiver,
  paymentIds: readonly string[],
  timeoutMs = 90_000,
): Promise<void> {
  expect(new Set(paymentIds).size).toBe(paymentIds.length);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await eventually(
      async () => {
        const settled = await db.query<{ n: number }>("select count(*)::int as n from payments.payments where status = 'settled'");
        return settled.rows[0]?.n === paymentIds.length;
      },
      "every payment settled",
      timeoutMs,
    );
    const rows = await db.query<{ id: string; status: string }>("select id, status from payments.payments");
    expect(new Set(rows.rows.map((r) => r.id))).toEqual(new Set(paymentIds));
    await eventually(async () => (await unpublishedEvents(db)) === 0, "every outbox published", timeoutMs);
    const events = await db.query<{ key: string; n: number }>("select key, count(*)::int as n from payments.outbox group by key");
    expect(Object.fromEntries(events.rows.map((r) => [r.key, r.n]))).toEqual(Object.fromEntries(paymentIds.map((id) => [id, 1])));
  } finally {
    await db.end();
  }
  await eventually(async () => new Set(sales(receiver).map((s) => s.paymentId)).size === paymentIds.length, "every sale delivered to the webhook", timeoutMs);
  const byPayment = new Map<string, Set<string>>();
  for (const s of sales(receiver)) byPayment.set(s.paymentId, (byPayment.get(s.paymentId) ?? new Set()).add(s.webhookId));
  expect([...byPayment.entries()].filter(([, hooks]) => hooks.size !== 1)).toEqual([]);
  expect(new Set(byPayment.keys())).toEqual(new Set(paymentIds));
}

/** Events written to any service's outbox and not yet published to the bus. */
export async function unpublishedEvents(db: pg.Client): Promise<number> {
  const counts = await Promise.all(
    SERVICES.map((s) =>
      db.query<{ n: number }>(`select count(*)::int as n from ${s.database.schema}.outbox where published_at is null`).then(
        (r) => r.rows[0]?.n ?? 0,
        () => 0, // a service without an outbox
      ),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** The sales the seller's webhook acknowledged: each delivery's payment and webhook-id. */
function sales(receiver: WebhookReceiver): { paymentId: string; webhookId: string }[] {
  return receiver.received
    .filter((r) => r.answered === "200")
    .map((r) => ({ paymentId: (JSON.parse(r.rawBody) as { data: { payment_id: string } }).data.payment_id, webhookId: r.headers["webhook-id"] as string }));
}

export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
