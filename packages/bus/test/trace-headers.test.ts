import { create, toBinary } from "@bufbuild/protobuf";
import { paymentEventsV1 } from "@c402/contracts";
import { EmbeddedPostgres, migrate, type ServiceDatabase } from "@c402/db";
import { createCapturingLogger } from "@c402/logging";
import { currentContext, runWithContext, traceIdOf, type RequestContext } from "@c402/request-context";
import { describeWith, eventually, infraAvailable, uniqueName } from "@c402/testkit";
import { DatabaseBus, decodeEnvelope, enqueueEvent, KafkaBus, OutboxRelay, outboxMigration, type Bus } from "../src";

/**
 * The request that caused an event reaches the consumers with it: the
 * envelope keeps its trace context and request id from the commit to the
 * publish, the relay sets them as record headers, and the consumer's handler
 * runs inside that context (so its log lines name the request). Tracing is off
 * here: the context travels whether or not spans are exported.
 */
const CAUSE: RequestContext = { requestId: "req_0123456789abcdef0123456789abcdef", traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };

function traceHeaderContract(openBus: () => Promise<Bus>, topic: () => string) {
  let embedded: EmbeddedPostgres;
  let service: ServiceDatabase;
  beforeAll(async () => {
    embedded = await EmbeddedPostgres.open();
    service = embedded.forSchema("emitter");
    await migrate(service, { "0001_outbox": outboxMigration });
  });
  afterAll(() => embedded.close());

  it("carries the causing request's traceparent and request id in the envelope and the record headers, and runs the handler inside them", async () => {
    const bus = await openBus();
    const t = topic();
    await bus.ensureTopics([t]);
    const { logger, lines } = createCapturingLogger({ service: "consumer-test" });
    const seen: { headers?: Record<string, string>; context?: RequestContext; envelope?: ReturnType<typeof decodeEnvelope> }[] = [];
    await bus.subscribe({
      topic: t,
      group: uniqueName("trace-group"),
      handler: async (m) => {
        logger.info("handling");
        seen.push({ headers: m.headers, context: currentContext(), envelope: decodeEnvelope(m.value) });
      },
    });
    const payload = toBinary(paymentEventsV1.PaymentSettledSchema, create(paymentEventsV1.PaymentSettledSchema, { paymentId: "pay_traced" }));
    // Written while the request is served…
    await runWithContext(CAUSE, () =>
      service.db
        .transaction()
        .execute((trx) => enqueueEvent(trx, { topic: t, type: "payment.settled", accountId: "acct_1", testMode: true, aggregateId: "pay_traced", payload })),
    );
    // …an event written by background work carries none, and its consumer gets a fresh request id.
    await service.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, { topic: t, type: "payment.settled", accountId: "acct_1", testMode: true, aggregateId: "pay_untraced", payload }));
    // The relay publishes from a round of its own, outside any request.
    const relay = new OutboxRelay({ db: service.db, bus });
    expect(await relay.publishBatch()).toBe(2);
    await eventually(() => seen.length === 2);

    const traced = seen.find((s) => s.envelope?.aggregateId === "pay_traced")!;
    expect(traced.envelope).toMatchObject({ traceparent: CAUSE.traceparent, requestId: CAUSE.requestId });
    expect(traced.headers).toMatchObject({ traceparent: CAUSE.traceparent, "x-request-id": CAUSE.requestId });
    expect(traced.context).toEqual(CAUSE);
    const line = JSON.parse(lines.find((l) => l.includes(CAUSE.requestId)) ?? "{}");
    expect(line).toMatchObject({ msg: "handling", request_id: CAUSE.requestId, trace_id: traceIdOf(CAUSE.traceparent as string) });

    const untraced = seen.find((s) => s.envelope?.aggregateId === "pay_untraced")!;
    expect(untraced.envelope).toMatchObject({ traceparent: "", requestId: "" });
    expect(untraced.headers?.traceparent).toBeUndefined();
    expect(untraced.context?.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(untraced.context?.requestId).not.toBe(CAUSE.requestId);
    await bus.close();
  });
}

describe("trace context through the outbox: the embedded bus", () => {
  let busDatabase: EmbeddedPostgres;
  afterAll(() => busDatabase?.close());
  traceHeaderContract(
    async () => {
      busDatabase = await EmbeddedPostgres.open();
      return DatabaseBus.open(busDatabase.forSchema("bus"));
    },
    () => "events.test.v1.traced",
  );
});

describeWith("kafka")("trace context through the outbox: Kafka record headers", () => {
  traceHeaderContract(
    async () => new KafkaBus({ brokers: (infraAvailable("kafka") as string).split(","), clientId: "trace-headers-test", partitions: 1 }),
    () => uniqueName("events.test.v1.traced"),
  );
});
