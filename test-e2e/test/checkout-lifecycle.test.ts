import { eventually } from "@c402/testkit";
import { call, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * A checkout's life over the running services: PATCH the offer card (the
 * faces show it at once), void (the faces answer 410, lists hide it, receipts
 * still resolve), restore
 * (it sells again), extend (the deadline moves or goes), each change an
 * account event with its actor. The deadline passing and a sold single-shot
 * are proven on catalog's own tests (services/catalog/test/lifecycle.test.ts):
 * they need a clock or a live sale.
 */
describe("a checkout's life", () => {
  it("patch, void, restore, extend: the faces follow every change, and each one is an account event", async () => {
    const seller = await newSeller();
    const prefix = seller.key.slice(0, 12);
    const c = await newCheckout(seller.key, { title: "Tide tables", freshness: "daily", reusable: true });
    const path = `/v1/checkouts/${c.id}`;
    expect((await call("GET", `/c/${c.id}/test`)).status).toBe(402);

    const patched = await call("PATCH", path, { key: seller.key, body: { title: "Tide tables, Brest", freshness: null, coverage: "Brittany" } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: c.id, title: "Tide tables, Brest", freshness: null, coverage: "Brittany", price_usd: c.price_usd });
    const face = await call("GET", `/c/${c.id}/test`);
    expect(face.status).toBe(402);
    expect(face.body.offer).toMatchObject({ title: "Tide tables, Brest", coverage: "Brittany", freshness: null });
    const immutable = await call("PATCH", path, { key: seller.key, body: { price_usd: "9.00" } });
    expect(immutable.status).toBe(422);
    expect(immutable.body.errors).toEqual([{ field: "price_usd", reason: "cannot be changed after create" }]);

    const receiptId = (await payRehearsal(c.id)).body.receipt.id as string;
    const voided = await call("DELETE", path, { key: seller.key });
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ voided: [c.id], liabilities: { live_keys: 0, calls_unspent: 0, unearned: { currency: "USD" } } });
    expect((await call("GET", `/c/${c.id}/test`)).status).toBe(410);
    expect((await call("GET", `/c/${c.id}`)).status).toBe(410);
    // Its receipts still resolve.
    expect((await call("GET", `/r/${receiptId}`, { headers: { accept: "application/json" } })).status).toBe(200);
    expect((await call("GET", path, { key: seller.key })).body.status).toBe("void");
    const listed = async (q: string) => ((await call("GET", `/v1/checkouts${q}`, { key: seller.key })).body.checkouts as { id: string }[]).map((x) => x.id);
    expect(await listed("")).not.toContain(c.id);
    expect(await listed("?include_voided=true")).toContain(c.id);
    expect((await call("POST", `${path}/extend`, { key: seller.key, body: { expires_in_minutes: 60 } })).status).toBe(409);
    expect((await call("DELETE", path, { key: seller.key })).body).toMatchObject({ already_void: true });

    const restored = await call("POST", `${path}/restore`, { key: seller.key });
    expect(restored.body).toMatchObject({ id: c.id, status: "open", restored: true });
    expect((await call("GET", `/c/${c.id}/test`)).status).toBe(402);

    const moved = await call("POST", `${path}/extend`, { key: seller.key, body: { expires_in_minutes: 90 } });
    expect(moved.status).toBe(200);
    expect(Math.abs(Date.parse(moved.body.expires_at) - (Date.now() + 90 * 60_000))).toBeLessThan(60_000);
    const cleared = await call("POST", `${path}/extend`, { key: seller.key, body: { expires_in_minutes: null } });
    expect(cleared.body).toMatchObject({ status: "open", expires_at: null });

    const events = await eventually(
      async () => (await call("GET", "/v1/account/events?action=checkout.", { key: seller.key })).body.events as { action: string; actor: string }[],
      (rows) => rows.length >= 6,
    );
    expect(events.map((e) => e.action)).toEqual([
      "checkout.extended",
      "checkout.extended",
      "checkout.restored",
      "checkout.voided",
      "checkout.updated",
      "checkout.created",
    ]);
    expect(new Set(events.map((e) => e.actor))).toEqual(new Set([`key:${prefix}`]));
  });

  it("another account's checkout cannot be changed: 404 for every change", async () => {
    const owner = await newSeller();
    const other = await newSeller();
    const c = await newCheckout(owner.key);
    const path = `/v1/checkouts/${c.id}`;
    for (const [method, suffix, body] of [
      ["PATCH", "", { title: "mine now" }],
      ["DELETE", "", undefined],
      ["POST", "/restore", undefined],
      ["POST", "/extend", { expires_in_minutes: 5 }],
    ] as const) {
      const r = await call(method, `${path}${suffix}`, { key: other.key, ...(body ? { body } : {}) });
      expect([method, suffix, r.status]).toEqual([method, suffix, 404]);
    }
    expect((await call("GET", path, { key: owner.key })).body).toMatchObject({ status: "open", title: c.title });
  });
});
