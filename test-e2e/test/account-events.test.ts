import { eventually } from "@c402/testkit";
import { call, newCheckout, newSeller, walletSession } from "../src/http";

/**
 * GET /v1/account/events over the running services: identity records its own
 * changes, and catalog's reach it through catalog's outbox and the bus (Kafka
 * in distributed mode). Each row names its actor.
 */

interface EventRow {
  id: string;
  action: string;
  object_id: string;
  actor: string;
  test_mode: boolean;
  at: string;
  detail: Record<string, unknown>;
}

async function eventsOf(key: string, query = ""): Promise<EventRow[]> {
  const r = await call("GET", `/v1/account/events${query}`, { key });
  if (r.status !== 200) throw new Error(`events: ${r.status} ${r.text}`);
  return r.body.events as EventRow[];
}

describe("account events", () => {
  it("lists every change with its actor, newest first: the sign-in, keys, sessions, and checkouts from catalog via the bus", async () => {
    const seller = await newSeller();
    const prefix = (seller.key as string).slice(0, 12);
    const checkout = await newCheckout(seller.key, { title: "Evented" });
    expect((await call("POST", `/v1/checkouts/${checkout.id}/go-live`, { key: seller.key })).status).toBe(200);
    const session = await walletSession(seller.wallet);
    const minted = await call("POST", "/v1/keys", { key: session, body: { scope: "read_only", mode: "test", name: "viewer" } });
    expect(minted.status).toBe(201);
    expect((await call("DELETE", `/v1/keys/${minted.body.id}`, { key: seller.key })).status).toBe(204);
    expect((await call("POST", "/auth/logout", { key: session })).status).toBe(200);

    const events = await eventually(
      () => eventsOf(seller.key),
      (rows) => rows.some((e) => e.action === "checkout.live"),
    );
    const byAction = (action: string, objectId: string) => events.find((e) => e.action === action && e.object_id === objectId);
    expect(byAction("account.created", seller.accountId)).toMatchObject({ actor: "wallet" });
    expect(byAction("checkout.created", checkout.id)).toMatchObject({ actor: `key:${prefix}`, test_mode: true, detail: { title: "Evented" } });
    expect(byAction("checkout.live", checkout.id)).toMatchObject({ actor: `key:${prefix}`, test_mode: false });
    expect(byAction("key.created", minted.body.id)).toMatchObject({ actor: "wallet", detail: { prefix: minted.body.prefix, scope: "read_only" } });
    expect(byAction("key.revoked", minted.body.id)).toMatchObject({ actor: `key:${prefix}` });
    // Each wallet sign-in opens a session (the first beside the account's first key); the later one was ended.
    expect(events.filter((e) => e.action === "session.opened" || e.action === "session.ended").map((e) => e.action)).toEqual([
      "session.ended",
      "session.opened",
      "session.opened",
    ]);
    const times = events.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(JSON.stringify(events)).not.toContain(minted.body.secret);
    expect(JSON.stringify(events)).not.toContain(session);

    // The action prefix filter, and paging by `before`.
    expect((await eventsOf(seller.key, "?action=checkout.")).map((e) => e.action)).toEqual(["checkout.live", "checkout.created"]);
    const first = await call("GET", "/v1/account/events?limit=2", { key: seller.key });
    expect(first.body).toMatchObject({ has_more: true, next_before: first.body.events[1].id });
    const rest = await eventsOf(seller.key, `?limit=200&before=${first.body.next_before}`);
    expect([...first.body.events, ...rest].map((e: EventRow) => e.id)).toEqual(events.map((e) => e.id));
  });

  it("never shows another account's events, and refuses a cursor from another account", async () => {
    const a = await newSeller();
    const b = await newSeller();
    const [aEvent] = await eventsOf(a.key);
    const bEvents = await eventsOf(b.key);
    expect(bEvents.every((e) => e.object_id !== a.accountId)).toBe(true);
    const refused = await call("GET", `/v1/account/events?before=${aEvent!.id}`, { key: b.key });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: "before" })]);
  });
});
