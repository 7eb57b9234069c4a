import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { authorizationMessage, identityV1, paymentsV1, requirementMessage, schedulesV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { cancelAuthorizationTypedData, EVM_NETWORKS, REHEARSAL_DOMAIN, REHEARSAL_TOKEN, type ExactEvmAuthorization } from "@c402/x402";
import {
  ACCOUNT_ID,
  BASE_URL,
  bodyOf,
  CHECKOUT_ID,
  PAYER,
  PAYMENT_ID,
  recorded,
  REQUIREMENT,
  resolveCredential,
  SELLER_KEY,
  servers,
} from "../support/fake-gateway";

/** Recurring series (routes/schedules.ts; ADR 20): the seller's /v1/schedules, the buyer's /schedule/{id}, and a series' prepare. */

const serve = servers();
const auth = { authorization: `Bearer ${SELLER_KEY}` };
const SERIES_ID = "sch_Series000000000000000000";
const NONCE = `0x${"ab".repeat(32)}`;
const at = (iso: string) => timestampFromDate(new Date(iso));

const series = (init: Omit<MessageInitShape<typeof schedulesV1.ScheduleSchema>, "$typeName"> = {}) =>
  create(schedulesV1.ScheduleSchema, {
    id: SERIES_ID,
    accountId: ACCOUNT_ID,
    checkoutId: CHECKOUT_ID,
    status: "active",
    periods: 3,
    periodsSettled: 1,
    intervalDays: 30,
    paidThrough: at("2025-02-01T00:00:00.000Z"),
    nextChargeAt: at("2025-02-01T00:00:00.000Z"),
    payer: PAYER,
    network: "eip155:8453",
    amountUsd: "5.00",
    total: 5_035_000n,
    createdAt: at("2025-01-02T00:00:00.000Z"),
    periodsDetail: [
      {
        period: 0,
        status: "settled",
        validAfter: at("2025-01-02T00:00:00.000Z"),
        validBefore: at("2025-02-01T00:00:00.000Z"),
        nonce: NONCE,
        paymentId: PAYMENT_ID,
      },
      { period: 1, status: "scheduled", validAfter: at("2025-02-01T00:00:00.000Z"), validBefore: at("2025-03-03T00:00:00.000Z"), nonce: NONCE },
    ],
    ...init,
  });

function scheduleFakes(
  scope: identityV1.Scope = identityV1.Scope.FULL,
  view: Omit<MessageInitShape<typeof schedulesV1.GetBuyerViewResponseSchema>, "$typeName"> = {},
) {
  return recorded({
    identity: { resolveCredential: resolveCredential(scope) },
    schedules: {
      listSchedules: async () => create(schedulesV1.ListSchedulesResponseSchema, { schedules: [series(), series({ id: "sch_Second0000000000000000000" })] }),
      getSchedule: async ({ scheduleId }) => {
        if (scheduleId !== SERIES_ID) throw new ProblemError("not-found", "No such schedule.");
        return create(schedulesV1.GetScheduleResponseSchema, { schedule: series() });
      },
      cancelSchedule: async () =>
        create(schedulesV1.CancelScheduleResponseSchema, { schedule: series({ status: "cancelled", cancelledBy: "seller" }), alreadyEnded: false }),
      getBuyerView: async () =>
        create(schedulesV1.GetBuyerViewResponseSchema, {
          schedule: series(),
          cancelMessage: `Cancel series ${SERIES_ID}`,
          cancellable: [{ period: 1, status: "scheduled", nonce: NONCE, validBefore: at("2025-03-03T00:00:00.000Z") }],
          ...view,
        }),
      cancelByBuyer: async () =>
        create(schedulesV1.CancelByBuyerResponseSchema, {
          schedule: series({ status: "cancelled", cancelledBy: "buyer" }),
          note: "Charging stopped.",
          onchain: [{ nonce: NONCE, period: 1, status: "cancelled", txHash: `0x${"cd".repeat(32)}` }],
        }),
    },
  });
}

const post = (url: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("the seller's series", () => {
  it("GET /v1/schedules lists the key's mode, forwards the filters and pages", async () => {
    const { fakes, of } = scheduleFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/schedules?checkout_id=${CHECKOUT_ID}&status=active&limit=1`, { headers: auth });
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(of("listSchedules")).toEqual([{ accountId: ACCOUNT_ID, testMode: true, pageSize: 2, checkoutId: CHECKOUT_ID, status: "active" }]);
    expect(body.schedules).toHaveLength(1);
    expect(body.schedules[0]).toMatchObject({ id: SERIES_ID, url: `${BASE_URL}/schedule/${SERIES_ID}`, periods: 3, periods_settled: 1 });
    expect(body.schedules[0]).not.toHaveProperty("periods_detail");
    expect(body.has_more).toBe(true);
    const next = await fetch(`${url}/v1/schedules?cursor=${body.next_cursor}`, { headers: auth });
    expect(next.status).toBe(200);
    expect(of("listSchedules")[1]).toMatchObject({ afterId: SERIES_ID });
  });

  it("refuses a bad status, checkout_id or page by name, asking nobody", async () => {
    const { fakes, of } = scheduleFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/schedules?status=paused&limit=0&checkout_id=${"x".repeat(65)}`, { headers: auth });
    expect(res.status).toBe(422);
    expect(((await bodyOf(res)).errors as { field: string }[]).map((e) => e.field).sort()).toEqual(["checkout_id", "limit", "status"]);
    expect(of("listSchedules")).toHaveLength(0);
  });

  it("GET /v1/schedules/{id} answers periods_detail with receipts; another id is 404", async () => {
    const { fakes } = scheduleFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const body = await bodyOf(await fetch(`${url}/v1/schedules/${SERIES_ID}`, { headers: auth }));
    expect(body.periods_detail).toEqual([
      expect.objectContaining({
        period: 0,
        status: "settled",
        payment_id: PAYMENT_ID,
        receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`,
        valid_after: "2025-01-02T00:00:00.000Z",
      }),
      expect.objectContaining({ period: 1, status: "scheduled", payment_id: null, receipt_url: null, attempts: 0, last_failure: null, next_attempt_at: null }),
    ]);
    expect((await fetch(`${url}/v1/schedules/chk_Nope0000000000000000000000`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${url}/v1/schedules/sch_Other000000000000000000`, { headers: auth })).status).toBe(404);
  });

  it("POST /v1/schedules/{id}/cancel needs payments scope, takes an optional bounded reason, and names the actor", async () => {
    const readOnly = scheduleFakes(identityV1.Scope.READ_ONLY);
    const ro = await serve.app(readOnly.fakes);
    expect((await post(`${ro.url}/v1/schedules/${SERIES_ID}/cancel`, {})).status).toBe(403);

    const { fakes, of } = scheduleFakes();
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/v1/schedules/${SERIES_ID}/cancel`, { reason: "moved to yearly" });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toMatchObject({ id: SERIES_ID, status: "cancelled", cancelled_by: "seller", already_ended: false });
    expect(of("cancelSchedule")).toEqual([{ accountId: ACCOUNT_ID, scheduleId: SERIES_ID, actor: "key:sk_test_abcd", reason: "moved to yearly" }]);
    const bare = await fetch(`${url}/v1/schedules/${SERIES_ID}/cancel`, { method: "POST", headers: auth });
    expect(bare.status).toBe(200);
    expect(of("cancelSchedule")[1]).not.toHaveProperty("reason");
    const long = await post(`${url}/v1/schedules/${SERIES_ID}/cancel`, { reason: "x".repeat(501) });
    expect(long.status).toBe(422);
    expect((await bodyOf(long)).errors).toEqual([expect.objectContaining({ field: "reason" })]);
  });
});

describe("the buyer's view of a series (no credential)", () => {
  it("GET /schedule/{id} answers the series and how to cancel: the message and one USDC CancelAuthorization per held period", async () => {
    const { fakes, of } = scheduleFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/schedule/${SERIES_ID}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await bodyOf(res);
    const base = EVM_NETWORKS["eip155:8453"];
    const domain = { name: base.name, version: base.version, chainId: base.chainId, verifyingContract: base.usdc };
    expect(body.cancel.message).toBe(`Cancel series ${SERIES_ID}`);
    expect(body.cancel.onchain).toEqual([
      {
        period: 1,
        nonce: NONCE,
        valid_before: "2025-03-03T00:00:00.000Z",
        typed_data: JSON.parse(JSON.stringify(cancelAuthorizationTypedData(domain, PAYER, NONCE))),
      },
    ]);
    expect(of("getBuyerView")).toEqual([{ scheduleId: SERIES_ID }]);
  });

  it("a test-mode series' cancel typed data is the rehearsal token's; an ended series has no cancel", async () => {
    const test = scheduleFakes(identityV1.Scope.FULL, { schedule: series({ testMode: true, network: "eip155:84532" }) });
    const t = await serve.app(test.fakes);
    const body = await bodyOf(await fetch(`${t.url}/schedule/${SERIES_ID}`));
    expect(body.cancel.onchain[0].typed_data.domain).toMatchObject({ ...REHEARSAL_DOMAIN, chainId: 84532, verifyingContract: REHEARSAL_TOKEN.address });
    expect(body.cancel.how).toContain("{payer}");

    const ended = scheduleFakes(identityV1.Scope.FULL, { schedule: series({ status: "completed" }), cancellable: [] });
    ended.fakes.schedules = { getBuyerView: async () => create(schedulesV1.GetBuyerViewResponseSchema, { schedule: series({ status: "completed" }) }) };
    const e = await serve.app(ended.fakes);
    expect((await bodyOf(await fetch(`${e.url}/schedule/${SERIES_ID}`))).cancel).toBeNull();
  });

  it("POST /schedule/{id}/cancel maps each way to CancelByBuyer and answers the series, the note and the on-chain outcomes", async () => {
    const { fakes, of } = scheduleFakes();
    const { url } = await serve.app(fakes);
    const signature = `0x${"11".repeat(65)}`;
    const r = `0x${"22".repeat(32)}`;
    const s = `0x${"33".repeat(32)}`;
    for (const body of [{ signature }, { authorizations: [{ nonce: NONCE, signature: { v: 27, r, s } }] }, { payer: PAYER }]) {
      const res = await post(`${url}/schedule/${SERIES_ID}/cancel`, body, {});
      expect(res.status).toBe(200);
    }
    expect(of("cancelByBuyer").map((c) => (c as { method: unknown }).method)).toEqual([
      { case: "signature", value: signature },
      { case: "authorizations", value: { items: [{ nonce: NONCE, v: 27, r, s }] } },
      { case: "payer", value: PAYER },
    ]);
    const answer = await bodyOf(await post(`${url}/schedule/${SERIES_ID}/cancel`, { signature }, {}));
    expect(answer).toMatchObject({
      schedule: { id: SERIES_ID, status: "cancelled" },
      note: "Charging stopped.",
      onchain: [{ period: 1, status: "cancelled" }],
    });
  });

  it("POST /schedule/{id}/cancel refuses anything but exactly one well-formed way (422), and another id (404), asking nobody", async () => {
    const { fakes, of } = scheduleFakes();
    const { url } = await serve.app(fakes);
    const bad = [
      {},
      { signature: "0x12", payer: PAYER },
      { signature: "0x12" },
      { authorizations: [] },
      { authorizations: Array.from({ length: 24 }, () => ({ nonce: NONCE, signature: { v: 27, r: NONCE, s: NONCE } })) },
      { authorizations: [{ nonce: NONCE, signature: { v: 29, r: NONCE, s: NONCE } }] },
      { payer: "nobody" },
    ];
    for (const body of bad) expect((await post(`${url}/schedule/${SERIES_ID}/cancel`, body, {})).status).toBe(422);
    // A body that is not a JSON object is the JSON layer's 400, as on every route.
    expect((await post(`${url}/schedule/${SERIES_ID}/cancel`, "text", {})).status).toBe(400);
    expect((await post(`${url}/schedule/chk_Nope0000000000000000000000/cancel`, { payer: PAYER }, {})).status).toBe(404);
    expect(of("cancelByBuyer")).toHaveLength(0);
  });
});

describe("a series' prepare", () => {
  it("adds schedule[]: each held period rendered as period 0, its window as unix seconds", async () => {
    const auth0: ExactEvmAuthorization = { from: PAYER, to: REQUIREMENT.payTo, value: "110500", validAfter: "0", validBefore: "1735790700", nonce: NONCE };
    const held: ExactEvmAuthorization = { ...auth0, validAfter: "1738368000", validBefore: "1740960000", nonce: `0x${"cd".repeat(32)}` };
    const { fakes } = recorded({
      payments: {
        preparePayment: async () =>
          create(paymentsV1.PreparePaymentResponseSchema, {
            network: "eip155:84532",
            requirement: requirementMessage(REQUIREMENT),
            authorization: authorizationMessage(auth0),
            schedule: [{ period: 1, authorization: authorizationMessage(held) }],
          }),
      },
    });
    const { url } = await serve.app(fakes);
    const res = await post(`${url}/c/${CHECKOUT_ID}/test/prepare`, { payer: PAYER }, {});
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body.schedule).toEqual([
      {
        period: 1,
        valid_after: 1738368000,
        valid_before: 1740960000,
        typed_data: expect.objectContaining({ primaryType: "TransferWithAuthorization", message: expect.objectContaining({ nonce: held.nonce }) }),
        payload_stub: expect.objectContaining({ accepted: REQUIREMENT, payload: { signature: "", authorization: held } }),
      },
    ]);
    expect(body.how).toContain("{schedule:");
  });
});

describe("the schedule MCP tools", () => {
  const rpc = (url: string, name: string, args: Record<string, unknown>) =>
    fetch(`${url}/mcp`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
    }).then((r) => r.json() as Promise<any>);

  it("list_schedules, get_schedule and cancel_schedule run the REST operations, with their scopes", async () => {
    const { fakes, of } = scheduleFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const listed = await rpc(url, "list_schedules", { checkout_id: CHECKOUT_ID, status: "active" });
    expect(listed.result.structuredContent.schedules[0]).toMatchObject({ id: SERIES_ID });
    expect(of("listSchedules")[0]).toMatchObject({ checkoutId: CHECKOUT_ID, status: "active", testMode: true });
    const one = await rpc(url, "get_schedule", { id: SERIES_ID });
    expect(one.result.structuredContent.periods_detail).toHaveLength(2);
    const refused = await rpc(url, "cancel_schedule", { id: SERIES_ID, reason: "done" });
    expect(JSON.stringify(refused)).toMatch(/payments/);
    expect(of("cancelSchedule")).toHaveLength(0);

    const full = scheduleFakes();
    const f = await serve.app(full.fakes);
    const cancelled = await rpc(f.url, "cancel_schedule", { id: SERIES_ID, reason: "done" });
    expect(cancelled.result.structuredContent).toMatchObject({ status: "cancelled" });
    expect(full.of("cancelSchedule")[0]).toMatchObject({ reason: "done" });
  });
});
