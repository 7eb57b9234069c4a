import { eventually } from "@c402/testkit";
import { call, newSeller } from "../src/http";

/**
 * /v1/origin-keys over the running services (fulfillment stores them sealed):
 * the value goes in and never comes out, rotation, soft revoke, validation,
 * another account's key, and the account events that reach identity through
 * fulfillment's outbox and the bus.
 */

const CANARY = "e2e-origin-canary-5d81c2a7f9";

describe("origin keys", () => {
  it("stores a key and never answers its value: create, list, rotate, revoke; each change an account event with the key's actor", async () => {
    const seller = await newSeller();
    const created = await call("POST", "/v1/origin-keys", {
      key: seller.key,
      body: { auth_type: "api_key", header_name: "X-Api-Key", value: CANARY, name: "weather" },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(created.body).toEqual({
      id: expect.stringMatching(/^okey_[0-9A-Za-z]{24}$/),
      object: "origin_key",
      name: "weather",
      auth_type: "api_key",
      header_name: "X-Api-Key",
      checkouts_using: 0,
      created_at: expect.any(String),
      rotated_at: null,
      revoked_at: null,
      note: expect.stringContaining("never shown again"),
    });
    const id = created.body.id as string;

    const listed = await call("GET", "/v1/origin-keys", { key: seller.key });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ origin_keys: [{ ...created.body, note: undefined }].map(({ note: _n, ...k }) => k), has_more: false, next_cursor: null });

    const rotated = await call("PATCH", `/v1/origin-keys/${id}`, { key: seller.key, body: { value: `${CANARY}-2` } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.rotated_at).toEqual(expect.any(String));

    const revoked = await call("DELETE", `/v1/origin-keys/${id}`, { key: seller.key });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id, revoked: true, warning: null, revoked_at: expect.any(String) });
    const again = await call("DELETE", `/v1/origin-keys/${id}`, { key: seller.key });
    expect(again.body).toMatchObject({ id, revoked: false, revoked_at: revoked.body.revoked_at });
    expect((await call("PATCH", `/v1/origin-keys/${id}`, { key: seller.key, body: { value: "late" } })).status).toBe(409);

    for (const r of [created, listed, rotated, revoked, again]) expect(r.text).not.toContain(CANARY);

    const prefix = seller.key.slice(0, 16);
    const events = await eventually(
      async () => {
        const r = await call("GET", "/v1/account/events?action=origin_key.", { key: seller.key });
        return r.body.events as { action: string; object_id: string; actor: string; test_mode: boolean; detail: unknown }[];
      },
      (rows) => rows.length >= 3,
      15_000,
    );
    expect(events.map((e) => [e.action, e.object_id])).toEqual([
      ["origin_key.revoked", id],
      ["origin_key.rotated", id],
      ["origin_key.created", id],
    ]);
    expect(events.every((e) => e.actor.startsWith("key:") && seller.key.startsWith(e.actor.slice(4)) && e.test_mode)).toBe(true);
    expect(prefix.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(CANARY);
  });

  it("refuses bad bodies with 422 naming the field, and another account's key with 404", async () => {
    const seller = await newSeller();
    const bad = async (body: unknown) => call("POST", "/v1/origin-keys", { key: seller.key, body });
    const cases: [unknown, string][] = [
      [{ value: "v" }, "auth_type"],
      [{ auth_type: "bearer" }, "value"],
      [{ auth_type: "oauth", value: "v" }, "auth_type"],
      [{ auth_type: "bearer", value: "v", extra: 1 }, "extra"],
      [{ auth_type: "bearer", value: "v\nX: y" }, "value"],
      [{ auth_type: "api_key", value: "v" }, "header_name"],
      [{ auth_type: "bearer", value: "v", header_name: "X-Key" }, "header_name"],
      [{ auth_type: "custom", value: "v", header_name: "Content-Length" }, "header_name"],
      [{ auth_type: "bearer", value: "v".repeat(4097) }, "value"],
    ];
    for (const [body, field] of cases) {
      const r = await bad(body);
      expect([JSON.stringify(body), r.status, r.headers.get("content-type")]).toEqual([
        JSON.stringify(body),
        422,
        expect.stringContaining("application/problem+json"),
      ]);
      expect(r.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    const mine = await call("POST", "/v1/origin-keys", { key: seller.key, body: { auth_type: "bearer", value: "mine" } });
    expect((await call("PATCH", `/v1/origin-keys/${mine.body.id}`, { key: seller.key, body: { value: "x", auth_type: "basic" } })).status).toBe(422);

    const other = await newSeller();
    expect((await call("PATCH", `/v1/origin-keys/${mine.body.id}`, { key: other.key, body: { value: "stolen" } })).status).toBe(404);
    expect((await call("DELETE", `/v1/origin-keys/${mine.body.id}`, { key: other.key })).status).toBe(404);
    expect((await call("GET", "/v1/origin-keys", { key: other.key })).body.origin_keys).toEqual([]);
    expect((await call("DELETE", "/v1/origin-keys/okey_Nonexistent000000000000", { key: seller.key })).status).toBe(404);
  });
});
