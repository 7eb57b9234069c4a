import { call, newSeller } from "../src/http";

/**
 * The escrow routes after the deposit, where no escrow is needed to see them
 * answer (spec, Endpoints: Escrow): the seller's list and read, the
 * arbiter's ruling, the buyer-side action routes; their credentials, their
 * 404s and their parameter checks. escrow-purchase.test.ts walks escrows
 * through their lives.
 */

const SOME_PAYMENT = "pay_AAAAAAAAAAAAAAAAAAAAAAAA";
const SOME_ESCROW_CHECKOUT = "esc_AAAAAAAAAAAAAAAAAAAAAAAA";
const problemFields = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field);

async function mintKey(key: string, scope: "read_only" | "payments" | "full"): Promise<string> {
  const r = await call("POST", "/v1/keys", { key, body: { scope, mode: "test", name: `escrows ${scope}` } });
  if (r.status !== 201) throw new Error(`mint ${scope}: ${r.status} ${r.text}`);
  return r.body.secret as string;
}

describe("escrow routes (/v1/escrows, /e/{id}/actions)", () => {
  it("lists no escrows for a new account, paged as every list is", async () => {
    const seller = await newSeller();
    const r = await call("GET", "/v1/escrows", { key: seller.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ escrows: [], has_more: false, next_cursor: null });
    expect((await call("GET", "/v1/escrows?status=escalated&limit=5", { key: seller.key })).body).toEqual({ escrows: [], has_more: false, next_cursor: null });
  });

  it("refuses a status that is not an open state, and a bad page, with 422 naming the parameter", async () => {
    const seller = await newSeller();
    const r = await call("GET", "/v1/escrows?status=released&limit=0", { key: seller.key });
    expect(r.status).toBe(422);
    expect(problemFields(r.body).sort()).toEqual(["limit", "status"]);
  });

  it("needs a seller credential for the seller's routes, and the payments scope for a ruling", async () => {
    expect((await call("GET", "/v1/escrows")).status).toBe(401);
    expect((await call("GET", `/v1/escrows/${SOME_PAYMENT}`)).status).toBe(401);
    expect((await call("POST", `/v1/escrows/${SOME_PAYMENT}/resolve?to_seller=true`)).status).toBe(401);
    const seller = await newSeller();
    const readOnly = await mintKey(seller.key, "read_only");
    expect((await call("GET", "/v1/escrows", { key: readOnly })).status).toBe(200);
    const ruling = await call("POST", `/v1/escrows/${SOME_PAYMENT}/resolve?to_seller=true`, { key: readOnly });
    expect(ruling.status).toBe(403);
    expect(ruling.body).toMatchObject({ type: expect.stringMatching(/\/problems\/forbidden$/), needed_scope: "payments" });
  });

  it("answers 404 for an escrow that does not exist or is not a payment id, whatever the query", async () => {
    const seller = await newSeller();
    for (const id of [SOME_PAYMENT, "chk_AAAAAAAAAAAAAAAAAAAAAAAA", "nonsense"]) {
      const r = await call("GET", `/v1/escrows/${id}`, { key: seller.key });
      expect(r.status).toBe(404);
      expect(r.body.type).toMatch(/not-found/);
    }
    expect((await call("POST", `/v1/escrows/${SOME_PAYMENT}/resolve?to_seller=true`, { key: seller.key })).status).toBe(404);
    // The escrow is looked up before the query is read: an unknown one is 404 with or without to_seller.
    expect((await call("POST", `/v1/escrows/${SOME_PAYMENT}/resolve`, { key: seller.key })).status).toBe(404);
    expect((await call("POST", `/v1/escrows/${SOME_PAYMENT}/resolve/submit?to_seller=false`, { key: seller.key })).status).toBe(404);
  });

  it("buyer-side actions need no credential: an unknown action, face or escrow is 404; a missing payment_id or a malformed signature is 422", async () => {
    const base = `/e/${SOME_ESCROW_CHECKOUT}/actions`;
    expect((await call("POST", `${base}/withdraw?payment_id=${SOME_PAYMENT}`)).status).toBe(404);
    expect((await call("POST", `/e/chk_AAAAAAAAAAAAAAAAAAAAAAAA/actions/approve?payment_id=${SOME_PAYMENT}`)).status).toBe(404);
    const noPayment = await call("POST", `${base}/approve`);
    expect(noPayment.status).toBe(422);
    expect(problemFields(noPayment.body)).toEqual(["payment_id"]);
    const unknown = await call("POST", `${base}/approve?payment_id=${SOME_PAYMENT}`);
    expect(unknown.status).toBe(404);
    const badSignature = await call("POST", `${base}/approve/submit?payment_id=${SOME_PAYMENT}`, { body: { v: 29, r: "0x12", deadline: 1 } });
    expect(badSignature.status).toBe(422);
    expect(problemFields(badSignature.body).sort()).toEqual(["r", "s", "v"]);
  });

  it("lists the escrow tools on /mcp: the buyer's need no credential, the seller's do", async () => {
    const list = await call("POST", "/mcp", { body: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    const names = (list.body.result.tools as { name: string }[]).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["get_escrow", "list_escrows", "escrow_action", "escrow_submit", "resolve_escrow", "resolve_escrow_submit"]));
    const anonymous = await call("POST", "/mcp", { body: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_escrows", arguments: {} } } });
    expect(anonymous.status).toBe(401);
    const seller = await newSeller();
    const listed = await call("POST", "/mcp", {
      key: seller.key,
      body: { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_escrows", arguments: {} } },
    });
    expect(listed.body.result.structuredContent).toEqual({ escrows: [], has_more: false, next_cursor: null });
    const action = await call("POST", "/mcp", {
      body: {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: {
          name: "escrow_action",
          arguments: { checkout: "https://x.test/c/chk_AAAAAAAAAAAAAAAAAAAAAAAA", action: "approve", payment_id: SOME_PAYMENT },
        },
      },
    });
    expect(action.body.error.code).toBe(-32602);
  });
});
