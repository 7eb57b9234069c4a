import { create } from "@bufbuild/protobuf";
import { webhooksV1 } from "@c402/contracts";
import { DependencyUnavailableError, ProblemError } from "@c402/problems";
import { createClient, currentContext, runWithContext, RpcServer, type CallContext, type ServiceClient, type ServiceImplementation } from "../src";

const unused = () => Promise.reject(new Error("not called by this test"));
const UNUSED: ServiceImplementation<typeof webhooksV1.WebhooksService> = {
  registerEndpoint: unused,
  listEndpoints: unused,
  deleteEndpoint: unused,
  listDeliveries: unused,
  getDelivery: unused,
  verificationKeys: unused,
  rotateSigningKey: unused,
  listRecordedEvents: unused,
};

// Every promise of the adapter holds on both transports: gRPC over loopback, and in process (embedded mode).
describe.each([
  ["over @grpc/grpc-js", (_server: RpcServer, port: number) => `127.0.0.1:${port}`],
  ["in process", (server: RpcServer) => server.inProcess()],
] as const)("rpc adapter (protobuf-es descriptors) %s", (_transport, targetOf) => {
  let server: RpcServer;
  let client: ServiceClient<typeof webhooksV1.WebhooksService>;
  // An answer the server keeps and answers again (a cache, say).
  const kept = create(webhooksV1.ListRecordedEventsResponseSchema, { events: [{ eventId: "evt_kept", type: "payment.settled" }] });
  const seen: CallContext[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    server = new RpcServer({ onError: (_e, method) => errors.push(method) });
    server.add(webhooksV1.WebhooksService, {
      ...UNUSED,
      async listRecordedEvents(req, ctx) {
        seen.push(ctx);
        expect(currentContext()?.requestId).toBe(ctx.requestId);
        if (req.accountId === "missing") throw new ProblemError("not-found", "No such account.");
        if (req.accountId === "invalid") throw new ProblemError("invalid-request", { message: "bad", errors: [{ field: "account_id", reason: "malformed" }] });
        if (req.accountId === "busy") throw new ProblemError("conflict", { message: "in flight", retryAfterSeconds: 7 });
        if (req.accountId === "crash") throw new Error("database password is hunter2");
        if (req.accountId === "outage")
          throw new DependencyUnavailableError("The database could not be reached.", new Error("connect ECONNREFUSED 10.0.0.7:5432"));
        if (req.accountId === "slow") await new Promise((r) => setTimeout(r, 500));
        if (req.accountId === "kept") return kept;
        return { events: [{ eventId: "evt_1", type: "payment.settled", accountId: req.accountId, testMode: true }] };
      },
    });
    const port = await server.listen("127.0.0.1", 0);
    client = createClient(webhooksV1.WebhooksService, targetOf(server, port));
  });

  afterAll(async () => {
    client.close();
    await server.stop();
  });

  it("round-trips typed messages", async () => {
    const res = await client.listRecordedEvents({ accountId: "acct_1" });
    expect(res.events).toHaveLength(1);
    expect(res.events[0]).toMatchObject({ eventId: "evt_1", type: "payment.settled", accountId: "acct_1", testMode: true });
  });

  it("gives the caller its own copy of the answer: changing it changes nothing the server holds", async () => {
    const first = await client.listRecordedEvents({ accountId: "kept" });
    expect(first).not.toBe(kept);
    first.events[0]!.type = "changed by the caller";
    first.events.push(create(webhooksV1.RecordedEventSchema, { eventId: "evt_added" }));
    const again = await client.listRecordedEvents({ accountId: "kept" });
    expect(again.events.map((e) => [e.eventId, e.type])).toEqual([["evt_kept", "payment.settled"]]);
    expect(kept.events.map((e) => e.type)).toEqual(["payment.settled"]);
  });

  it("propagates request id and trace context, and sets a deadline", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    await runWithContext({ requestId: "req_abc", traceparent }, () => client.listRecordedEvents({ accountId: "a" }));
    const ctx = seen[seen.length - 1] as CallContext;
    expect(ctx.requestId).toBe("req_abc");
    expect(ctx.traceparent).toBe(traceparent);
    expect(ctx.deadline).toBeInstanceOf(Date);
  });

  it("carries problems across unchanged", async () => {
    await expect(client.listRecordedEvents({ accountId: "missing" })).rejects.toMatchObject({ slug: "not-found", message: "No such account." });
    await expect(client.listRecordedEvents({ accountId: "invalid" })).rejects.toMatchObject({
      slug: "invalid-request",
      errors: [{ field: "account_id", reason: "malformed" }],
    });
    // When a retry may succeed (Retry-After), too.
    await expect(client.listRecordedEvents({ accountId: "busy" })).rejects.toMatchObject({ slug: "conflict", retryAfterSeconds: 7 });
    const without = (await client.listRecordedEvents({ accountId: "missing" }).catch((e: unknown) => e)) as ProblemError;
    expect(without.retryAfterSeconds).toBeUndefined();
  });

  it("hides unexpected errors behind a generic internal problem", async () => {
    const err = await client.listRecordedEvents({ accountId: "crash" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ slug: "internal" });
    expect((err as Error).message).not.toContain("hunter2");
    expect(errors).toContain("webhooks.v1.WebhooksService/ListRecordedEvents");
  });

  it("answers a dependency's outage as unavailable, safe to retry, without the cause's words", async () => {
    const err = await client.listRecordedEvents({ accountId: "outage" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ slug: "unavailable", status: 503, help: { retry_is_safe: true } });
    expect((err as Error).message).not.toContain("10.0.0.7");
  });

  it("fails with unavailable when the deadline passes", async () => {
    await expect(client.listRecordedEvents({ accountId: "slow" }, { timeoutMs: 50 })).rejects.toMatchObject({ slug: "unavailable" });
  });

  it("fails with unavailable when nothing listens, or the server has stopped", async () => {
    const dead = createClient(webhooksV1.WebhooksService, "127.0.0.1:1", { timeoutMs: 300 });
    await expect(dead.listRecordedEvents({ accountId: "x" })).rejects.toMatchObject({ slug: "unavailable" });
    dead.close();
    const stopped = new RpcServer();
    stopped.add(webhooksV1.WebhooksService, UNUSED);
    const late = createClient(webhooksV1.WebhooksService, stopped.inProcess());
    await stopped.stop(100);
    await expect(late.listRecordedEvents({ accountId: "x" })).rejects.toMatchObject({ slug: "unavailable" });
  });

  it("lets a call in flight finish before its server stops", async () => {
    const other = new RpcServer();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let finished = false;
    other.add(webhooksV1.WebhooksService, {
      ...UNUSED,
      listRecordedEvents: async () => {
        await held;
        finished = true;
        return { events: [] };
      },
    });
    const port = await other.listen("127.0.0.1", 0);
    const c = createClient(webhooksV1.WebhooksService, targetOf(other, port));
    const call = c.listRecordedEvents({ accountId: "a" });
    await new Promise((r) => setTimeout(r, 50));
    const stopped = other.stop(2_000);
    setTimeout(release, 100);
    await stopped;
    expect(finished).toBe(true);
    await expect(call).resolves.toMatchObject({ events: [] });
    c.close();
  });
});
