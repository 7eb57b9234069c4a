import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { decodeEnvelope } from "@c402/bus";
import { accountEventsV1, catalogEventsV1, EVENT_TYPES, REPORT_CATEGORIES, TOPICS } from "@c402/contracts";
import { migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { isId } from "@c402/ids";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { catalogMigrations } from "../src";
import { Catalog } from "../src/domain/catalog";
import { Reports } from "../src/domain/reports";
import type { ReportPayment, ReportsDb } from "../src/store/report-store";

/** Reports on real PostgreSQL: filing (anonymous and buyer), the seller's lists, transitions, tenant isolation, and the outbox rows of each. */

const WALLET = "0x1111111111111111111111111111111111111111";
const ACTOR = "key:sk_test_abcd";

const PAYMENT: ReportPayment = {
  payment_id: "pay_Receipt00000000000000000",
  amount_usd: "0.10",
  total: "110500",
  network: "eip155:84532",
  payer: "0x2222222222222222222222222222222222222222",
  subject: "sub_Buyer0000000000000000000",
  tx_hash: `0x${"ab".repeat(32)}`,
  test_mode: true,
  settled_at: "2026-11-22T09:59:00.000Z",
  delivery_outcome: "delivered",
};

interface OutboxEntry {
  topic: string;
  key: string;
  type: string;
  accountId: string;
  testMode: boolean;
  reported?: { reportId: string; checkoutId: string; category: string; kind: string; receiptId: string | undefined; createdAt: Date | undefined };
  activity?: { action: string; objectId: string; actor: string; detail: Record<string, unknown> };
}

/** Every outbox row catalog wrote, decoded by its topic. */
async function outboxOf(db: ServiceDatabase["db"]): Promise<OutboxEntry[]> {
  const rows = await db.selectFrom("outbox").select(["payload", "topic", "key"]).orderBy("seq").execute();
  return rows.map((r: { payload: Buffer; topic: string; key: string }): OutboxEntry => {
    const envelope = decodeEnvelope(new Uint8Array(r.payload));
    const base = { topic: r.topic, key: r.key, type: envelope.type, accountId: envelope.accountId, testMode: envelope.testMode };
    if (r.topic === TOPICS.checkoutReported) {
      const e = fromBinary(catalogEventsV1.CheckoutReportedSchema, envelope.payload);
      return {
        ...base,
        reported: {
          reportId: e.reportId,
          checkoutId: e.checkoutId,
          category: e.category,
          kind: e.kind,
          receiptId: e.receiptId,
          createdAt: e.createdAt ? timestampDate(e.createdAt) : undefined,
        },
      };
    }
    const a = fromBinary(accountEventsV1.AccountActivitySchema, envelope.payload);
    return { ...base, activity: { action: a.action, objectId: a.objectId, actor: a.actor, detail: JSON.parse(a.detailJson) as Record<string, unknown> } };
  });
}

describeWith("postgres")("reports on PostgreSQL", () => {
  let database: ServiceDatabase;
  let drop: () => Promise<void>;
  let catalog: Catalog;
  let reports: Reports;
  let committed = 0;
  let clock = new Date("2026-11-22T10:00:00.000Z");
  const later = (ms: number) => (clock = new Date(clock.getTime() + ms));

  beforeAll(async () => {
    const fresh = await freshPostgresDatabase();
    drop = fresh.drop;
    database = openPostgres({ url: fresh.url, schema: "catalog" });
    await migrate(database, catalogMigrations);
    catalog = new Catalog({ db: database.db, payoutWallets: async () => [{ chainFamily: "eip155", address: WALLET, isDefault: true }], now: () => clock });
    reports = new Reports({ db: database.db as ReportsDb, now: () => clock, onCommitted: () => committed++ });
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  async function created(accountId = "acct_a", createdWithLiveKey = false) {
    const { checkout } = await catalog.create({
      accountId,
      actor: ACTOR,
      fingerprint: `fp_${Math.random()}`,
      title: "Weather",
      priceUsd: "0.10",
      offer: {},
      createdWithLiveKey,
    });
    return checkout;
  }
  /** The outbox rows about reports (not the checkouts' own account events). */
  const reportRows = async () => (await outboxOf(database.db)).filter((r) => r.topic === TOPICS.checkoutReported || r.activity?.action.startsWith("report."));

  describe("filing", () => {
    it("files an anonymous report: open, one checkout.reported event keyed by the checkout and one report.filed account event (actor system), in one commit", async () => {
      const c = await created("acct_a", true);
      const before = (await reportRows()).length;
      const commits = committed;
      const r = await reports.file({ checkoutId: c.id, category: "stale_data", detail: "Yesterday's forecast." });
      expect(isId("report", r.id)).toBe(true);
      expect(r).toMatchObject({
        account_id: "acct_a",
        checkout_id: c.id,
        category: "stale_data",
        detail: "Yesterday's forecast.",
        kind: "anonymous",
        status: "open",
        note: null,
        payment_id: null,
        payment: null,
        test_mode: false,
        created_at: clock,
      });
      expect(committed).toBe(commits + 1);
      const rows = (await reportRows()).slice(before);
      expect(rows).toEqual([
        {
          topic: TOPICS.checkoutReported,
          key: c.id,
          type: EVENT_TYPES.checkoutReported,
          accountId: "acct_a",
          testMode: false,
          reported: { reportId: r.id, checkoutId: c.id, category: "stale_data", kind: "anonymous", receiptId: undefined, createdAt: clock },
        },
        {
          topic: TOPICS.accountActivity,
          key: r.id,
          type: EVENT_TYPES.accountActivity,
          accountId: "acct_a",
          testMode: false,
          activity: {
            action: "report.filed",
            objectId: r.id,
            actor: "system",
            detail: { checkout_id: c.id, category: "stale_data", kind: "anonymous", receipt_id: null },
          },
        },
      ]);
    });

    it("files a buyer report with the payment attached; its test_mode is the payment's", async () => {
      const c = await created("acct_a", true);
      const before = (await reportRows()).length;
      const r = await reports.file({ checkoutId: c.id, category: "not_delivered", payment: PAYMENT });
      expect(r).toMatchObject({ kind: "buyer", payment_id: PAYMENT.payment_id, payment: PAYMENT, detail: null, test_mode: true });
      const rows = (await reportRows()).slice(before);
      expect(rows.map((x) => [x.topic, x.testMode])).toEqual([
        [TOPICS.checkoutReported, true],
        [TOPICS.accountActivity, true],
      ]);
      expect(rows[0]?.reported).toMatchObject({ kind: "buyer", receiptId: PAYMENT.payment_id });
      expect(rows[1]?.activity?.detail).toEqual({ checkout_id: c.id, category: "not_delivered", kind: "buyer", receipt_id: PAYMENT.payment_id });
      // Read back, the copy of the receipt is as it was filed.
      const [listed] = await reports.list("acct_a", c.id, { size: 10 });
      expect(listed?.payment).toEqual(PAYMENT);
    });

    it("takes every category of the closed set, and reports on void and expired checkouts", async () => {
      const c = await created();
      for (const category of REPORT_CATEGORIES) await reports.file({ checkoutId: c.id, category });
      const v = await created();
      await catalog.void("acct_a", v.id, ACTOR);
      expect((await reports.file({ checkoutId: v.id, category: "other" })).test_mode).toBe(true);
      const e = await catalog.create({
        accountId: "acct_a",
        actor: ACTOR,
        fingerprint: `fp_${Math.random()}`,
        title: "Short",
        priceUsd: "0.10",
        offer: {},
        createdWithLiveKey: false,
        expiresInMinutes: 1n,
      });
      later(2 * 60_000);
      await expect(reports.file({ checkoutId: e.checkout.id, category: "too_slow" })).resolves.toMatchObject({ status: "open" });
      expect(await reports.list("acct_a", c.id, { size: 100 })).toHaveLength(REPORT_CATEGORIES.length);
    });

    it.each([
      ["a category outside the set", { category: "refund_please" }, "category"],
      ["an empty category", { category: "" }, "category"],
      ["a detail of 2001 characters", { category: "other", detail: "d".repeat(2001) }, "detail"],
    ])("refuses %s with 422 naming it, writing nothing", async (_what, input, field) => {
      const c = await created();
      const before = (await outboxOf(database.db)).length;
      await expect(reports.file({ checkoutId: c.id, ...input })).rejects.toMatchObject({
        slug: "invalid-request",
        errors: [expect.objectContaining({ field })],
      });
      expect(await reports.list("acct_a", c.id, { size: 10 })).toEqual([]);
      expect(await outboxOf(database.db)).toHaveLength(before);
    });

    it("counts characters, not UTF-16 units: 2000 emoji are a valid detail; a blank detail is none", async () => {
      const c = await created();
      expect((await reports.file({ checkoutId: c.id, category: "other", detail: "😀".repeat(2000) })).detail).toHaveLength(4000);
      expect((await reports.file({ checkoutId: c.id, category: "other", detail: "  " })).detail).toBeNull();
    });

    it("answers 404 for an unknown or malformed checkout id", async () => {
      await expect(reports.file({ checkoutId: "chk_Unknown0000000000000000", category: "other" })).rejects.toMatchObject({ slug: "not-found" });
      await expect(reports.file({ checkoutId: "chk_\u0000", category: "other" })).rejects.toMatchObject({ slug: "not-found" });
    });
  });

  describe("the seller's lists", () => {
    it("lists newest first by keyset pages, per account and per checkout; another account sees none of them and gets 404 for the checkout", async () => {
      const mine = await created("acct_list");
      const other = await created("acct_list");
      const theirs = await created("acct_other");
      const filed: string[] = [];
      for (let i = 0; i < 3; i++) {
        later(1000);
        filed.push((await reports.file({ checkoutId: mine.id, category: "wrong_data" })).id);
      }
      later(1000);
      filed.push((await reports.file({ checkoutId: other.id, category: "too_slow" })).id);
      const foreign = await reports.file({ checkoutId: theirs.id, category: "other" });

      const all = await reports.list("acct_list", undefined, { size: 100 });
      expect(all.map((r) => r.id)).toEqual([...filed].reverse());
      const first = await reports.list("acct_list", undefined, { size: 2 });
      const last = first[first.length - 1]!;
      const rest = await reports.list("acct_list", undefined, { size: 100, after: { createdAt: last.created_at, id: last.id } });
      expect([...first, ...rest].map((r) => r.id)).toEqual(all.map((r) => r.id));
      expect((await reports.list("acct_list", mine.id, { size: 100 })).map((r) => r.id)).toEqual(filed.slice(0, 3).reverse());

      expect((await reports.list("acct_other", undefined, { size: 100 })).map((r) => r.id)).toEqual([foreign.id]);
      await expect(reports.list("acct_other", mine.id, { size: 10 })).rejects.toMatchObject({ slug: "not-found" });
      await expect(reports.list("acct_list", "chk_Unknown0000000000000000", { size: 10 })).rejects.toMatchObject({ slug: "not-found" });
      await expect(reports.list("acct_list", undefined, { size: 0 })).rejects.toMatchObject({ slug: "invalid-request" });
    });
  });

  describe("acknowledge and resolve", () => {
    it("moves open → acknowledged → resolved, each change one report.updated event with the credential's actor; a note replaces the last", async () => {
      const c = await created();
      const r = await reports.file({ checkoutId: c.id, category: "schema_changed" });
      const before = (await reportRows()).length;
      later(1000);
      const acked = await reports.update("acct_a", r.id, { status: "acknowledged", note: "Looking into it." }, ACTOR);
      expect(acked).toMatchObject({ status: "acknowledged", note: "Looking into it.", acknowledged_at: clock, resolved_at: null, updated_at: clock });
      later(1000);
      const resolved = await reports.update("acct_a", r.id, { status: "resolved", note: "Schema v2 documented." }, "wallet");
      expect(resolved).toMatchObject({ status: "resolved", note: "Schema v2 documented.", acknowledged_at: acked.acknowledged_at, resolved_at: clock });
      const rows = (await reportRows()).slice(before);
      expect(rows.map((x) => [x.topic, x.key, x.activity?.action, x.activity?.actor, x.activity?.detail])).toEqual([
        [TOPICS.accountActivity, r.id, "report.updated", ACTOR, { checkout_id: c.id, status: "acknowledged", was: "open", with_note: true }],
        [TOPICS.accountActivity, r.id, "report.updated", "wallet", { checkout_id: c.id, status: "resolved", was: "acknowledged", with_note: true }],
      ]);
    });

    it("resolves an open report directly; acknowledging keeps the note when none is sent", async () => {
      const c = await created();
      const r = await reports.file({ checkoutId: c.id, category: "other" });
      expect(await reports.update("acct_a", r.id, { status: "resolved", note: "Refunded off-platform." }, ACTOR)).toMatchObject({
        status: "resolved",
        acknowledged_at: null,
      });
      const s = await reports.file({ checkoutId: c.id, category: "other" });
      expect((await reports.update("acct_a", s.id, { status: "acknowledged" }, ACTOR)).note).toBeNull();
    });

    it.each([
      ["acknowledged", "acknowledged"],
      ["resolved", "acknowledged"],
      ["resolved", "resolved"],
    ] as const)("refuses %s → %s with 409, writing nothing", async (first, next) => {
      const c = await created();
      const r = await reports.file({ checkoutId: c.id, category: "other" });
      await reports.update("acct_a", r.id, { status: first, note: "done" }, ACTOR);
      const before = (await outboxOf(database.db)).length;
      await expect(reports.update("acct_a", r.id, { status: next, note: "again" }, ACTOR)).rejects.toMatchObject({ slug: "conflict" });
      expect((await reports.list("acct_a", c.id, { size: 10 }))[0]).toMatchObject({ status: first, note: "done" });
      expect(await outboxOf(database.db)).toHaveLength(before);
    });

    it.each([
      ["resolving without a note", { status: "resolved" }, "note"],
      ["resolving with a blank note", { status: "resolved", note: "   " }, "note"],
      ["a note of 2001 characters", { status: "acknowledged", note: "n".repeat(2001) }, "note"],
      ["status open", { status: "open" }, "status"],
      ["an unknown status", { status: "deleted" }, "status"],
    ])("refuses %s with 422 naming the field", async (_what, input, field) => {
      const c = await created();
      const r = await reports.file({ checkoutId: c.id, category: "other" });
      await expect(reports.update("acct_a", r.id, input, ACTOR)).rejects.toMatchObject({
        slug: "invalid-request",
        errors: [expect.objectContaining({ field })],
      });
    });

    it("keeps another account out (404), and answers 404 for an unknown report", async () => {
      const c = await created();
      const r = await reports.file({ checkoutId: c.id, category: "other" });
      await expect(reports.update("acct_b", r.id, { status: "acknowledged" }, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
      await expect(reports.update("acct_a", "rpt_Unknown0000000000000000", { status: "acknowledged" }, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
      await expect(reports.update("acct_a", "chk_Unknown0000000000000000", { status: "acknowledged" }, ACTOR)).rejects.toMatchObject({ slug: "not-found" });
      expect((await reports.list("acct_a", c.id, { size: 10 }))[0]?.status).toBe("open");
    });

    it("two requests racing on one open report: one acknowledges, the other gets 409", async () => {
      const c = await created();
      const r = await reports.file({ checkoutId: c.id, category: "other" });
      const results = await Promise.allSettled([
        reports.update("acct_a", r.id, { status: "acknowledged" }, ACTOR),
        reports.update("acct_a", r.id, { status: "acknowledged" }, ACTOR),
      ]);
      expect(results.map((x) => x.status).sort()).toEqual(["fulfilled", "rejected"]);
      expect((results.find((x) => x.status === "rejected") as PromiseRejectedResult).reason).toMatchObject({ slug: "conflict" });
      const updates = (await reportRows()).filter((x) => x.key === r.id && x.activity?.action === "report.updated");
      expect(updates).toHaveLength(1);
    });
  });
});
