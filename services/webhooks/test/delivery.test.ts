import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createPublicKey } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { decodeEnvelope } from "@c402/bus";
import { accountEventsV1 } from "@c402/contracts";
import type { Kysely } from "kysely";
import { migrate, type ServiceDatabase } from "@c402/db";
import { ProblemError } from "@c402/problems";
import { describeOnEachDatabase } from "@c402/testkit";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { verifyEd25519, verifyHmac } from "../../../examples/webhook-receiver/verify";
import { webhooksMigrations } from "../src";
import { Dispatcher } from "../src/domain/dispatcher";
import { EVENT_SOURCES } from "../src/domain/event-catalogue";
import { createCapturingLogger } from "@c402/logging";
import { backoffMs, RETRY_WINDOW_MS } from "../src/domain/retry-schedule";
import type { WebhooksDb } from "../src/store/webhooks-store";
import { BASE_URL, checkoutReportedEnvelope, paymentSettledEnvelope, SELLER, webhookRig } from "./webhook-fixtures";

/**
 * Delivery on both databases, against a real receiver on loopback, with a
 * virtual clock (G16): fan-out once per receiver and event, the payload, both
 * signatures fresh on every attempt under one webhook-id, the retry schedule
 * over about three days with jitter, timeouts, resets and redirects retried
 * (never followed), 429 Retry-After honoured, 410 disabling, re-keying, and
 * every attempt recorded and visible.
 */

const paid = EVENT_SOURCES.find((s) => s.event === "checkout.paid")!;
const reported = EVENT_SOURCES.find((s) => s.event === "checkout.reported")!;
let accountSeq = 0;
const newAccount = () => `acct_delivery_${Date.now()}_${accountSeq++}`;

describeOnEachDatabase("webhook delivery", "webhooks", (open) => {
  let database: ServiceDatabase;
  let close: () => Promise<void>;
  let db: WebhooksDb;
  let receiver: WebhookReceiver;
  let rig: ReturnType<typeof webhookRig>;

  beforeAll(async () => {
    ({ database, close } = await open());
    await migrate(database, webhooksMigrations);
    db = database.db as WebhooksDb;
    receiver = await startWebhookReceiver();
    rig = webhookRig(db, { timeoutMs: 400 });
    await rig.keys.ensure();
  });
  afterAll(async () => {
    await rig.fetch.close();
    await receiver.close();
    await close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.behave = () => ({ status: 200 });
    rig.clock.at = new Date("2026-11-20T10:00:00Z");
  });

  const pems = async () =>
    (await rig.keys.published()).map(
      (k) =>
        createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), k.public_key]), format: "der", type: "spki" }).export({
          format: "pem",
          type: "spki",
        }) as string,
    );
  const seconds = () => rig.now().getTime() / 1000;
  const register = (accountId: string, path = "/hook", events: string[] = ["checkout.paid"]) =>
    rig.endpoints.register({ ...SELLER, accountId, url: `${receiver.url}${path}`, events });
  const deliveriesOf = (endpointId: string) => db.selectFrom("deliveries").selectAll().where("endpoint_id", "=", endpointId).orderBy("created_at").execute();
  const advanceTo = (at: Date) => (rig.clock.at = new Date(at.getTime()));
  /** The account events written for one receiver, in order (decoded from the outbox). */
  const accountActions = async (endpointId: string) => {
    const rows = (await (db as unknown as Kysely<{ outbox: { seq: string; key: string; payload: Uint8Array } }>)
      .selectFrom("outbox")
      .select("payload")
      .where("key", "=", endpointId)
      .orderBy("seq")
      .execute()) as { payload: Uint8Array }[];
    return rows.map((r) => fromBinary(accountEventsV1.AccountActivitySchema, decodeEnvelope(r.payload).payload).action);
  };

  it("fans a sale out once to each subscribed receiver of the account, with the spec's checkout.paid payload, signed both ways", async () => {
    const account = newAccount();
    const a = await register(account, "/a");
    const b = await register(account, "/b", ["checkout.paid", "checkout.reported"]);
    const reportsOnly = await register(account, "/reports", ["checkout.reported"]);
    await register(newAccount(), "/other-account");
    const envelope = paymentSettledEnvelope(account, { at: rig.now() });
    expect(await rig.dispatcher.fanOut(paid, envelope)).toBe(2);
    expect(await rig.dispatcher.fanOut(paid, envelope)).toBe(0); // the bus redelivered it
    await rig.dispatcher.drain();

    expect(receiver.received.map((r) => r.path).sort()).toEqual(["/a", "/b"]);
    const keys = await pems();
    for (const [got, secret] of [
      [receiver.received.find((r) => r.path === "/a")!, a.secret],
      [receiver.received.find((r) => r.path === "/b")!, b.secret],
    ] as const) {
      expect(verifyHmac(got.rawBody, got.headers["x-service-signature"], secret, seconds())).toBe(true);
      expect(verifyEd25519(got.rawBody, got.headers["x-service-ed25519"], keys, seconds())).toBe(true);
      expect(got.headers["webhook-id"]).toMatch(/^msg_[0-9A-Za-z]{24}$/);
      expect(got.headers["webhook-timestamp"]).toBe(String(Math.floor(seconds())));
      expect(got.headers["content-type"]).toBe("application/json");
    }
    // One receiver's secret does not verify another's delivery.
    const toA = receiver.received.find((r) => r.path === "/a")!;
    expect(verifyHmac(toA.rawBody, toA.headers["x-service-signature"], b.secret, seconds())).toBe(false);

    const body = JSON.parse(toA.rawBody) as { id: string; event: string; created_at: string; data: Record<string, unknown> };
    expect(body).toEqual({
      id: envelope.eventId,
      event: "checkout.paid",
      created_at: rig.now().toISOString(),
      data: {
        checkout_id: "chk_AAAAAAAAAAAAAAAAAAAAAAAA",
        title: "Weather in Paris",
        payment_id: envelope.aggregateId,
        network: "eip155:84532",
        asset: "USDC",
        amount_usd: "1.00",
        provider_amount: 1_000_000,
        platform_amount: 50_000,
        fee_amount: 15_000,
        total: 1_015_000,
        platform_fee_to: "0x3333333333333333333333333333333333333333",
        payer: "0x1111111111111111111111111111111111111111",
        pay_to: "0x2222222222222222222222222222222222222222",
        tx_hash: "0xabc",
        receipt_url: `${BASE_URL}/r/${envelope.aggregateId}`,
        sold_by: "ada",
        parties: { buyer: { name: "Bob", ref: "b-1" } },
        handoff_id: "handoff_nonce_0123456789",
        test_mode: false,
        settled_at: rig.now().toISOString(),
      },
    });

    // checkout.reported reaches only the receivers that asked for it.
    receiver.received.length = 0;
    expect(await rig.dispatcher.fanOut(reported, checkoutReportedEnvelope(account))).toBe(2);
    await rig.dispatcher.drain();
    expect(receiver.received.map((r) => r.path).sort()).toEqual(["/b", "/reports"]);
    const report = JSON.parse(receiver.received[0]!.rawBody) as { event: string; data: Record<string, unknown> };
    expect(report.event).toBe("checkout.reported");
    expect(report.data).toMatchObject({
      report_id: "rpt_AAAAAAAAAAAAAAAAAAAAAAAA",
      category: "not_delivered",
      kind: "anonymous",
      receipt_id: null,
      test_mode: false,
    });
    expect(reportsOnly.rekeyed).toBe(false);
  });

  it("records an event no receiver asked for once, in the one statement that found none: no receiver, another event's receiver, a disabled one", async () => {
    const recordedRows = (eventId: string) =>
      db.selectFrom("recorded_events").select(["event_id", "type", "test_mode"]).where("event_id", "=", eventId).execute();
    const none = newAccount();
    const first = paymentSettledEnvelope(none, { at: rig.now() });
    expect(await rig.dispatcher.fanOut(paid, first)).toBe(0);
    expect(await rig.dispatcher.fanOut(paid, first)).toBe(0); // redelivered: still one row
    expect(await recordedRows(first.eventId)).toEqual([{ event_id: first.eventId, type: first.type, test_mode: first.testMode }]);

    const others = newAccount();
    const reportsOnly = await register(others, "/reports-only", ["checkout.reported"]);
    const disabled = await register(others, "/disabled");
    await db.updateTable("endpoints").set({ active: false, disabled_reason: "gone", disabled_at: rig.now() }).where("id", "=", disabled.endpoint.id).execute();
    const second = paymentSettledEnvelope(others, { at: rig.now() });
    expect(await rig.dispatcher.fanOut(paid, second)).toBe(0);
    expect(await recordedRows(second.eventId)).toHaveLength(1);
    expect([...(await deliveriesOf(reportsOnly.endpoint.id)), ...(await deliveriesOf(disabled.endpoint.id))]).toEqual([]);

    // The same account with a receiver of the event: recorded with its delivery (nothing was written by the look).
    const paidToo = await register(others, "/paid");
    const third = paymentSettledEnvelope(others, { at: rig.now() });
    expect(await rig.dispatcher.fanOut(paid, third)).toBe(1);
    expect(await recordedRows(third.eventId)).toHaveLength(1);
    expect((await deliveriesOf(paidToo.endpoint.id)).map((d) => d.event_id)).toEqual([third.eventId]);
    await rig.dispatcher.drain();
  });

  it("looks at a bus fetch's events in one statement: those without a receiver recorded there, the others with their deliveries; a duplicate or a redelivered fetch adds nothing", async () => {
    const quiet = newAccount();
    const busy = newAccount();
    const hook = await register(busy, "/fetch");
    const events = [
      paymentSettledEnvelope(quiet, { at: rig.now() }),
      paymentSettledEnvelope(busy, { at: rig.now() }),
      paymentSettledEnvelope(quiet, { at: rig.now() }),
    ];
    const fetched = [...events, events[0]!].map((envelope) => ({ source: paid, envelope }));
    expect(await rig.dispatcher.fanOutEach(fetched)).toBe(1);
    expect(await rig.dispatcher.fanOutEach(fetched)).toBe(0);
    for (const envelope of events) {
      const rows = await db
        .selectFrom("recorded_events")
        .select(["type", "account_id", "aggregate_id", "test_mode", "payload", "occurred_at"])
        .where("event_id", "=", envelope.eventId)
        .execute();
      // Recorded once each, as it came (the payload's bytes and the time it happened, through the statement's JSON).
      expect(rows.map((r) => ({ ...r, payload: Buffer.from(r.payload).toString("hex") }))).toEqual([
        {
          type: envelope.type,
          account_id: envelope.accountId,
          aggregate_id: envelope.aggregateId,
          test_mode: envelope.testMode,
          payload: Buffer.from(envelope.payload).toString("hex"),
          occurred_at: timestampDate(envelope.occurredAt!),
        },
      ]);
    }
    expect((await deliveriesOf(hook.endpoint.id)).map((d) => d.event_id)).toEqual([events[1]!.eventId]);
    await rig.dispatcher.drain();
  });

  it("retries a failing receiver under the same webhook-id with a fresh timestamp and signature, and records every attempt", async () => {
    const account = newAccount();
    const { endpoint, secret } = await register(account);
    receiver.behave = ({ n }) => (n === 0 ? { status: 500 } : n === 1 ? { hangMs: 1_500 } : n === 2 ? { reset: true } : { status: 204 });
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.drain();
    let [d] = await deliveriesOf(endpoint.id);
    expect(d).toMatchObject({ status: "pending", attempts: 1, last_status_code: 500, last_error: "HTTP 500" });
    // The first retry is due after 30 s, jittered by at most 20%.
    const wait = d!.next_attempt_at!.getTime() - rig.now().getTime();
    expect(wait).toBeGreaterThanOrEqual(backoffMs(1) * 0.8);
    expect(wait).toBeLessThanOrEqual(backoffMs(1) * 1.2);
    // Not due yet: nothing is sent.
    await rig.dispatcher.drain();
    expect(receiver.received).toHaveLength(1);

    for (let attempt = 2; attempt <= 4; attempt++) {
      [d] = await deliveriesOf(endpoint.id);
      advanceTo(d!.next_attempt_at!);
      await rig.dispatcher.drain();
    }
    [d] = await deliveriesOf(endpoint.id);
    expect(d).toMatchObject({ status: "delivered", attempts: 4, last_status_code: 204, last_error: null });
    const received = await receiver.waitFor(4);
    expect(new Set(received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([d!.id]));
    expect(new Set(received.map((r) => r.headers["webhook-timestamp"])).size).toBe(4);
    expect(new Set(received.map((r) => r.headers["x-service-signature"])).size).toBe(4);
    expect(new Set(received.map((r) => r.rawBody)).size).toBe(1);
    const last = received[3]!;
    expect(verifyHmac(last.rawBody, last.headers["x-service-signature"], secret, Number(last.headers["webhook-timestamp"]))).toBe(true);

    const { attempts } = await rig.endpoints.delivery(account, endpoint.id, d!.id);
    expect(attempts.map((a) => [a.number, a.status_code, a.outcome])).toEqual([
      [1, 500, "retry"],
      [2, null, "retry"],
      [3, null, "retry"],
      [4, 204, "delivered"],
    ]);
    expect(attempts[1]!.error).toMatch(/^timeout/);
    expect(attempts[1]!.latency_ms).toBeGreaterThanOrEqual(350);
    expect(attempts[2]!.error).toMatch(/^unreachable/);
    const [listed] = await rig.endpoints.list(account, { limit: 10 });
    expect(listed).toMatchObject({ consecutive_failures: 0, failed_attempts: 3n, delivered: 1n, pending_deliveries: 0n });
  });

  it("sends a recovered receiver's backlog at once: when a retry gets through, the rest is due now", async () => {
    const account = newAccount();
    const { endpoint } = await register(account);
    receiver.behave = () => ({ status: 503 });
    for (let i = 0; i < 3; i++) {
      await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
      advanceTo(new Date(rig.now().getTime() + 20_000));
    }
    await rig.dispatcher.drain();
    expect(receiver.received).toHaveLength(3);
    receiver.behave = () => ({ status: 200 });
    // The first retry falls due; the other two are not due yet on their own schedule.
    const rows = await deliveriesOf(endpoint.id);
    const first = Math.min(...rows.map((r) => r.next_attempt_at!.getTime()));
    advanceTo(new Date(first));
    expect(rows.filter((r) => r.next_attempt_at!.getTime() <= first)).toHaveLength(1);
    await rig.dispatcher.drain();
    expect((await deliveriesOf(endpoint.id)).map((r) => r.status)).toEqual(["delivered", "delivered", "delivered"]);
  });

  it("does not follow redirects: a 3xx is a failed attempt and the target is never called", async () => {
    const account = newAccount();
    const { endpoint } = await register(account);
    receiver.behave = ({ path }) => (path === "/hook" ? { redirectTo: `${receiver.url}/elsewhere`, status: 307 } : { status: 200 });
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.drain();
    const [d] = await deliveriesOf(endpoint.id);
    expect(d).toMatchObject({ status: "pending", last_status_code: 307, last_error: "HTTP 307: redirects are not followed" });
    expect(receiver.received.map((r) => r.path)).toEqual(["/hook"]);
  });

  it("honours a 429's Retry-After when it asks for longer than the backoff", async () => {
    const account = newAccount();
    const { endpoint } = await register(account);
    receiver.behave = () => ({ status: 429, headers: { "retry-after": "3600" } });
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.drain();
    const [d] = await deliveriesOf(endpoint.id);
    expect(d!.next_attempt_at!.getTime() - rig.now().getTime()).toBe(3_600_000);
  });

  it("keeps retrying with jittered exponential backoff for about three days, then fails the delivery", async () => {
    const account = newAccount();
    const { endpoint } = await register(account);
    receiver.behave = () => ({ status: 503 });
    const start = rig.now();
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: start }));
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: start }));
    await rig.dispatcher.drain();
    const times: Date[][] = [[], []];
    for (;;) {
      const rows = await deliveriesOf(endpoint.id);
      rows.forEach((r, i) => r.next_attempt_at && times[i]!.push(r.next_attempt_at));
      const due = rows.filter((r) => r.status === "pending").map((r) => r.next_attempt_at!.getTime());
      if (due.length === 0) break;
      advanceTo(new Date(Math.min(...due)));
      await rig.dispatcher.drain();
    }
    const rows = await deliveriesOf(endpoint.id);
    for (const r of rows) {
      expect(r.status).toBe("failed");
      // 30 s doubling to 12 h, over 72 h: 16 to 18 attempts, the last one at the give-up time.
      expect(r.attempts).toBeGreaterThanOrEqual(15);
      expect(r.attempts).toBeLessThanOrEqual(19);
      expect(r.give_up_at.getTime() - start.getTime()).toBe(RETRY_WINDOW_MS);
    }
    const attempts = (await rig.endpoints.delivery(account, endpoint.id, rows[0]!.id)).attempts;
    expect(attempts.at(-1)).toMatchObject({ outcome: "failed", status_code: 503 });
    expect(attempts.at(-1)!.started_at.getTime()).toBe(rows[0]!.give_up_at.getTime());
    // Jitter: the two deliveries' schedules drift apart.
    expect(times[0]!.map((t) => t.getTime())).not.toEqual(times[1]!.map((t) => t.getTime()));
    const [listed] = await rig.endpoints.list(account, { limit: 10 });
    expect(listed).toMatchObject({ failed_deliveries: 2n, active: true });
    expect(listed!.consecutive_failures).toBe(rows[0]!.attempts + rows[1]!.attempts);
  });

  it("disables a receiver that answers 410: what was due fails, nothing more is sent, the seller sees it; re-registering re-keys it", async () => {
    const account = newAccount();
    const first = await register(account);
    receiver.behave = ({ n }) => (n === 0 ? { status: 410 } : { status: 200 });
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.drain();
    const [listed] = await rig.endpoints.list(account, { limit: 10 });
    expect(listed).toMatchObject({ active: false, disabled_reason: "receiver answered 410 Gone" });
    const [d] = await deliveriesOf(first.endpoint.id);
    expect(d).toMatchObject({ status: "failed", last_status_code: 410 });
    expect(await accountActions(first.endpoint.id)).toEqual(["webhook.created", "webhook.disabled"]);
    // A disabled receiver gets no new deliveries.
    expect(await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }))).toBe(0);

    const again = await register(account);
    expect(again.rekeyed).toBe(true);
    expect(again.endpoint.id).toBe(first.endpoint.id);
    expect(again.secret).not.toBe(first.secret);
    expect(again.endpoint).toMatchObject({ active: true, disabled_reason: null, consecutive_failures: 0 });
    expect(await accountActions(first.endpoint.id)).toEqual(["webhook.created", "webhook.disabled", "webhook.rekeyed"]);
    receiver.received.length = 0;
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.drain();
    const got = receiver.received[0]!;
    expect(verifyHmac(got.rawBody, got.headers["x-service-signature"], again.secret, seconds())).toBe(true);
    expect(verifyHmac(got.rawBody, got.headers["x-service-signature"], first.secret, seconds())).toBe(false);
  });

  it("signs a retry with the new secret once the receiver is re-keyed (the old one is dead from the next attempt)", async () => {
    const account = newAccount();
    const first = await register(account);
    receiver.behave = ({ n }) => (n === 0 ? { status: 500 } : { status: 200 });
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.drain();
    const again = await register(account);
    const [d] = await deliveriesOf(first.endpoint.id);
    advanceTo(d!.next_attempt_at!);
    await rig.dispatcher.drain();
    const retry = receiver.received[1]!;
    expect(verifyHmac(retry.rawBody, retry.headers["x-service-signature"], again.secret, seconds())).toBe(true);
    expect(verifyHmac(retry.rawBody, retry.headers["x-service-signature"], first.secret, seconds())).toBe(false);
  });

  it("removes a deleted receiver's pending deliveries", async () => {
    const account = newAccount();
    const { endpoint } = await register(account);
    receiver.behave = () => ({ status: 500 });
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.drain();
    const removed = await rig.endpoints.delete({ ...SELLER, accountId: account, id: endpoint.id });
    expect(removed.pendingRemoved).toBe(2);
    expect(await accountActions(endpoint.id)).toEqual(["webhook.created", "webhook.deleted"]);
    expect(await deliveriesOf(endpoint.id)).toHaveLength(0);
    advanceTo(new Date(rig.now().getTime() + 3_600_000));
    receiver.received.length = 0;
    await rig.dispatcher.drain();
    expect(receiver.received).toHaveLength(0);
    await expect(rig.endpoints.delete({ ...SELLER, accountId: account, id: endpoint.id })).rejects.toMatchObject({ slug: "not-found" });
  });

  it("sends again, under the same webhook-id, a delivery whose sender died mid-send once its lease ran out", async () => {
    const account = newAccount();
    const { endpoint } = await register(account);
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    // A sweeper claims it and dies before recording anything.
    const { deliveriesStore } = await import("../src/store/deliveries-store");
    const [claimed] = await deliveriesStore.claimDue(db, { now: rig.now(), leaseUntil: new Date(rig.now().getTime() + 1_801), token: "dead", limit: 10 });
    expect(claimed?.endpoint_id).toBe(endpoint.id);
    await rig.dispatcher.drain();
    expect(receiver.received).toHaveLength(0); // leased: nobody else sends it
    advanceTo(new Date(rig.now().getTime() + 1_801));
    await rig.dispatcher.drain();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers["webhook-id"]).toBe(claimed!.id);
    const [d] = await deliveriesOf(endpoint.id);
    expect(d).toMatchObject({ status: "delivered", attempts: 2 });
    const { attempts } = await rig.endpoints.delivery(account, endpoint.id, d!.id);
    expect(attempts.map((a) => a.number)).toEqual([2]); // attempt 1 never reported: its sender died
  });

  it("refuses receivers it would never call, unknown events, and an account's seventeenth receiver", async () => {
    const account = newAccount();
    const reasonOf = async (url: string, events = ["checkout.paid"]) => {
      try {
        await rig.endpoints.register({ ...SELLER, accountId: account, url, events });
        return "accepted";
      } catch (err) {
        return (err as ProblemError).errors?.map((e) => `${e.field}: ${e.reason}`).join("; ") ?? (err as ProblemError).slug;
      }
    };
    expect(await reasonOf("ftp://example.com/hook")).toBe("url: must be an absolute https URL");
    expect(await reasonOf("http://example.com/hook")).toBe("url: must be an absolute https URL");
    expect(await reasonOf("not a url")).toBe("url: must be an absolute https URL");
    expect(await reasonOf("https://user:pw@example.com/hook")).toMatch(/^url: must not carry credentials/);
    expect(await reasonOf("https://example.com/hook#x")).toBe("url: must not have a fragment");
    expect(await reasonOf("https://169.254.169.254/latest")).toMatch(/^url: blocked-address/);
    expect(await reasonOf("https://10.0.0.1/hook")).toMatch(/^url: blocked-address/);
    expect(await reasonOf(`https://example.com/${"a".repeat(2048)}`)).toBe("url: must be at most 2048 characters");
    expect(await reasonOf("https://example.com/hook", ["checkout.paid", "checkout.refunded"])).toMatch(/^events\[1\]: must be one of checkout.paid/);
    expect(await reasonOf("https://example.com/hook", [])).toMatch(/^events: must name at least one event/);
    for (let i = 0; i < 16; i++) expect(await reasonOf(`https://example.com/hook/${i}`)).toBe("accepted");
    expect(await reasonOf("https://example.com/hook/16")).toBe("conflict");
    // The same url re-keys and does not count as another.
    expect(await reasonOf("https://example.com/hook/3")).toBe("accepted");
  });

  it("makes one receiver of one url registered five times at once: one created, the rest re-keys", async () => {
    const account = newAccount();
    const results = await Promise.all(Array.from({ length: 5 }, () => register(account, "/race")));
    expect(new Set(results.map((r) => r.endpoint.id)).size).toBe(1);
    expect(results.filter((r) => !r.rekeyed)).toHaveLength(1);
    expect(await rig.endpoints.list(account, { limit: 10 })).toHaveLength(1);
    // New urls at once do not pass the limit together either.
    await Promise.all(Array.from({ length: 20 }, (_, i) => register(account, `/many/${i}`).catch(() => undefined)));
    expect(await rig.endpoints.list(account, { limit: 50 })).toHaveLength(16);
  });

  it("shares the work between two sweepers (replicas): every delivery is sent once", async () => {
    rig.clock.at = undefined; // real time: both sweepers run on their own
    const account = newAccount();
    await register(account, "/replicas");
    // Two replicas of their own. The lease is a second plus twice the timeout: with the rig's
    // 400 ms, a loaded CI machine stalled a claimed batch past its 1.8 s lease and the other
    // sweeper took it again (83 sends for 60), so these take the timeout 2 s.
    const replica = () =>
      new Dispatcher({
        db,
        sealer: rig.sealer,
        keys: rig.keys,
        fetch: rig.fetch,
        baseUrl: BASE_URL,
        timeoutMs: 2_000,
        concurrency: 8,
        logger: createCapturingLogger({ service: "webhooks" }).logger,
      });
    const [first, second] = [replica(), replica()];
    for (let i = 0; i < 60; i++) await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account));
    first.start();
    second.start();
    try {
      const got = await receiver.waitFor(60, 30_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toHaveLength(60);
      expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(60);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
    const attempts = await db.selectFrom("deliveries").select("attempts").where("account_id", "=", account).execute();
    expect(attempts.every((a) => a.attempts === 1)).toBe(true);
  });

  it("rotates the signing key without a gap: during the overlap every delivery carries both signatures", async () => {
    const account = newAccount();
    await register(account);
    const before = await pems();
    expect(before).toHaveLength(1);
    const published = await rig.keys.rotate(3_600_000);
    expect(published).toHaveLength(2);
    expect(published[1]!.retires_at!.getTime()).toBe(rig.now().getTime() + 3_600_000);
    const both = await pems();
    const [newer] = both.filter((p) => !before.includes(p));
    await rig.dispatcher.fanOut(paid, paymentSettledEnvelope(account, { at: rig.now() }));
    await rig.dispatcher.drain();
    const got = receiver.received[0]!;
    expect(got.headers["x-service-ed25519"]).toMatch(/^t=[0-9]+,v1=[^,]+,v1=[^,]+$/);
    // A receiver that only knows the old key, and one that only knows the new key, both verify.
    expect(verifyEd25519(got.rawBody, got.headers["x-service-ed25519"], before, seconds())).toBe(true);
    expect(verifyEd25519(got.rawBody, got.headers["x-service-ed25519"], [newer!], seconds())).toBe(true);
    // After the overlap only the new key signs and is published.
    advanceTo(new Date(rig.now().getTime() + 3_600_001));
    expect(await pems()).toEqual([newer]);
  });
});
