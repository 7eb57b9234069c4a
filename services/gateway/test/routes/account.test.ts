import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { identityV1 } from "@c402/contracts";
import { ACCOUNT_ID, bodyOf, recorded, resolveCredential, SELLER_KEY, servers } from "../support/fake-gateway";

/** /v1/account/events (routes/account.ts). */

const serve = servers();
const auth = { authorization: `Bearer ${SELLER_KEY}` };

function event(n: number) {
  return create(identityV1.AccountEventSchema, {
    id: `evt_Event${String(n).padStart(19, "0")}`,
    action: "checkout.created",
    objectId: "chk_Checkout0000000000000000",
    detailJson: JSON.stringify({ title: "Report", n }),
    actor: "key:sk_test_abcd",
    testMode: true,
    at: timestampFromDate(new Date(Date.UTC(2026, 10, 22, 10, 0, n))),
  });
}

function eventFakes(answer: number) {
  return recorded({
    identity: {
      resolveCredential: resolveCredential(identityV1.Scope.READ_ONLY),
      listAccountEvents: async () =>
        create(identityV1.ListAccountEventsResponseSchema, { events: Array.from({ length: answer }, (_, i) => event(answer - i)) }),
    },
  });
}

describe("account events", () => {
  it("answers a page newest first with the spec's fields, asking identity for one more than shown (a read_only key suffices)", async () => {
    const { fakes, of } = eventFakes(3);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/account/events?limit=2&action=checkout.`, { headers: auth });
    expect(res.status).toBe(200);
    const body = (await bodyOf(res)) as { events: unknown[]; has_more: boolean; next_before: string | null };
    expect(body).toEqual({
      events: [
        {
          id: event(3).id,
          object: "account_event",
          action: "checkout.created",
          object_id: "chk_Checkout0000000000000000",
          detail: { title: "Report", n: 3 },
          actor: "key:sk_test_abcd",
          test_mode: true,
          at: "2026-11-22T10:00:03.000Z",
        },
        expect.objectContaining({ id: event(2).id }),
      ],
      has_more: true,
      next_before: event(2).id,
    });
    expect(of("listAccountEvents")).toEqual([{ accountId: ACCOUNT_ID, pageSize: 3, actionPrefix: "checkout." }]);
  });

  it("defaults to 50, and the last page has no next_before", async () => {
    const { fakes, of } = eventFakes(1);
    const { url } = await serve.app(fakes);
    const body = await bodyOf(await fetch(`${url}/v1/account/events`, { headers: auth }));
    expect(body).toMatchObject({ has_more: false, next_before: null });
    expect(of("listAccountEvents")).toEqual([{ accountId: ACCOUNT_ID, pageSize: 51 }]);
  });

  it("passes `before` as an event id or as an instant", async () => {
    const { fakes, of } = eventFakes(0);
    const { url } = await serve.app(fakes);
    await fetch(`${url}/v1/account/events?before=${event(7).id}`, { headers: auth });
    await fetch(`${url}/v1/account/events?before=2026-11-22T11:00:00%2B01:00`, { headers: auth });
    const [byId, byTime] = of("listAccountEvents") as { before: { case: string; value: unknown } }[];
    expect(byId?.before).toEqual({ case: "beforeEventId", value: event(7).id });
    expect(byTime?.before.case).toBe("beforeAt");
    expect(timestampDate(byTime?.before.value as never).toISOString()).toBe("2026-11-22T10:00:00.000Z");
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=201", "limit"],
    ["limit=abc", "limit"],
    ["action=Checkout", "action"],
    [`action=${"a".repeat(101)}`, "action"],
    ["before=yesterday", "before"],
    ["before=2026-11-22", "before"],
    ["before=chk_Checkout0000000000000000", "before"],
    ["limit=1&limit=2", "limit"],
  ])("refuses %s with 422 naming %s, without asking identity", async (query, field) => {
    const { fakes, of } = eventFakes(0);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/account/events?${query}`, { headers: auth });
    expect(res.status).toBe(422);
    expect(await bodyOf(res)).toMatchObject({ errors: [expect.objectContaining({ field })] });
    expect(of("listAccountEvents")).toEqual([]);
  });

  it("needs a credential", async () => {
    const { fakes } = eventFakes(0);
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/v1/account/events`)).status).toBe(401);
  });
});
