import { eventually } from "@c402/testkit";
import { call, callFrom, newCheckout, newSeller, otherLoopbackAddress, payRehearsal } from "../src/http";

/**
 * Reports over the running services: anyone files one on a checkout (no
 * credential), anonymously or naming a receipt of it (a buyer report, with
 * the payment attached); the seller lists them and acknowledges or resolves
 * them; another seller sees none of it; each filing is a `report.filed`
 * account event (via catalog's outbox and the bus). Filing is rate limited
 * per client address, so each test files from a loopback address of its own.
 */

interface ReportRow {
  id: string;
  kind: string;
  status: string;
  category: string;
  note: string | null;
  payment: { id: string; test_mode: boolean; amount_usd: string; receipt_url: string } | null;
}

describe("reports", () => {
  it("anonymous and buyer reports: the seller lists them with the payment attached, acknowledges and resolves them; each is an account event", async () => {
    const buyer = otherLoopbackAddress();
    const file = (checkoutId: string, body: unknown) => callFrom(buyer, "POST", `/v1/checkouts/${checkoutId}/reports`, { body });
    const seller = await newSeller();
    const prefix = seller.key.slice(0, 12);
    const c = await newCheckout(seller.key, { title: "Tide tables", reusable: true });

    const anonymous = await file(c.id, { category: "stale_data", detail: "Yesterday's tides." });
    expect(anonymous.status).toBe(201);
    expect(anonymous.body).toMatchObject({
      object: "report",
      checkout_id: c.id,
      category: "stale_data",
      kind: "anonymous",
      receipt_id: null,
      status: "open",
      refunds: false,
    });
    expect(anonymous.body.id).toMatch(/^rpt_[0-9A-Za-z]{24}$/);
    expect(anonymous.body.next).toMatch(/never refunds/);

    const receiptId = (await payRehearsal(c.id)).body.receipt.id as string;
    const filed = await file(c.id, { category: "not_delivered", receipt_id: receiptId });
    expect(filed.status).toBe(201);
    expect(filed.body).toMatchObject({ kind: "buyer", receipt_id: receiptId, status: "open" });

    // A receipt of another checkout is refused, naming the field; an unknown checkout is 404.
    const other = await newCheckout(seller.key, { title: "Other" });
    const foreignReceipt = await file(other.id, { category: "not_delivered", receipt_id: receiptId });
    expect(foreignReceipt.status).toBe(422);
    expect(foreignReceipt.body.errors).toEqual([{ field: "receipt_id", reason: "is not a receipt of this checkout" }]);
    expect((await file("chk_Unknown0000000000000000", { category: "other" })).status).toBe(404);
    expect((await file(c.id, { category: "refund_please" })).status).toBe(422);

    const listed = await call("GET", `/v1/checkouts/${c.id}/reports`, { key: seller.key });
    expect(listed.status).toBe(200);
    const rows = listed.body.reports as ReportRow[];
    expect(rows.map((r) => [r.id, r.kind])).toEqual([
      [filed.body.id, "buyer"],
      [anonymous.body.id, "anonymous"],
    ]);
    const receipt = (await call("GET", `/r/${receiptId}`)).body;
    expect(rows[0]!.payment).toMatchObject({ id: receiptId, test_mode: true, amount_usd: receipt.amount_usd, receipt_url: receipt.receipt_url });
    expect(rows[1]!.payment).toBeNull();
    const all = await call("GET", "/v1/reports?limit=1", { key: seller.key });
    expect(all.body).toMatchObject({ reports: [{ id: filed.body.id }], has_more: true });
    const rest = await call("GET", `/v1/reports?cursor=${all.body.next_cursor}`, { key: seller.key });
    expect((rest.body.reports as ReportRow[]).map((r) => r.id)).toEqual([anonymous.body.id]);

    const path = `/v1/reports/${filed.body.id}`;
    const acked = await call("PATCH", path, { key: seller.key, body: { status: "acknowledged", note: "Looking into it." } });
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({ id: filed.body.id, status: "acknowledged", note: "Looking into it.", payment: { id: receiptId } });
    const noNote = await call("PATCH", path, { key: seller.key, body: { status: "resolved" } });
    expect(noNote.status).toBe(422);
    expect(noNote.body.errors).toEqual([expect.objectContaining({ field: "note" })]);
    const resolved = await call("PATCH", path, { key: seller.key, body: { status: "resolved", note: "Redelivered by mail." } });
    expect(resolved.body).toMatchObject({ status: "resolved", note: "Redelivered by mail." });
    expect((await call("PATCH", path, { key: seller.key, body: { status: "acknowledged" } })).status).toBe(409);
    expect((await call("DELETE", path, { key: seller.key })).status).toBe(405);

    const events = await eventually(
      async () =>
        (await call("GET", "/v1/account/events?action=report.", { key: seller.key })).body.events as {
          action: string;
          object_id: string;
          actor: string;
          detail: Record<string, unknown>;
          test_mode: boolean;
        }[],
      (found) => found.length >= 4,
    );
    expect(events.map((e) => [e.action, e.object_id, e.actor])).toEqual([
      ["report.updated", filed.body.id, `key:${prefix}`],
      ["report.updated", filed.body.id, `key:${prefix}`],
      ["report.filed", filed.body.id, "system"],
      ["report.filed", anonymous.body.id, "system"],
    ]);
    expect(events[2]).toMatchObject({ test_mode: true, detail: { checkout_id: c.id, category: "not_delivered", kind: "buyer", receipt_id: receiptId } });
    expect(events[3]!.detail).toEqual({ checkout_id: c.id, category: "stale_data", kind: "anonymous", receipt_id: null });
  });

  it("another seller sees none of them: its lists are empty, the checkout's reports are 404, and so is a PATCH", async () => {
    const owner = await newSeller();
    const stranger = await newSeller();
    const c = await newCheckout(owner.key);
    const filed = await callFrom(otherLoopbackAddress(), "POST", `/v1/checkouts/${c.id}/reports`, { body: { category: "wrong_data" } });
    expect(filed.status).toBe(201);

    expect((await call("GET", "/v1/reports", { key: stranger.key })).body).toEqual({ reports: [], has_more: false, next_cursor: null });
    expect((await call("GET", `/v1/checkouts/${c.id}/reports`, { key: stranger.key })).status).toBe(404);
    expect((await call("PATCH", `/v1/reports/${filed.body.id}`, { key: stranger.key, body: { status: "acknowledged" } })).status).toBe(404);
    expect(((await call("GET", "/v1/reports", { key: owner.key })).body.reports as ReportRow[]).map((r) => [r.id, r.status])).toEqual([
      [filed.body.id, "open"],
    ]);
  });

  it("a void checkout can still be reported; anonymous reports are rate limited per address and checkout (429 with Retry-After)", async () => {
    const seller = await newSeller();
    const c = await newCheckout(seller.key);
    expect((await call("DELETE", `/v1/checkouts/${c.id}`, { key: seller.key })).status).toBe(200);
    const address = otherLoopbackAddress();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 6; i++) {
      last = await callFrom(address, "POST", `/v1/checkouts/${c.id}/reports`, { body: { category: "other" } });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(last!.body.type).toMatch(/\/problems\/rate-limited$/);
    expect((await call("GET", `/v1/checkouts/${c.id}/reports`, { key: seller.key })).body.reports).toHaveLength(5);
  });
});
