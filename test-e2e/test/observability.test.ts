import { TOPICS } from "@c402/contracts";
import type { ReceivedSpan } from "@c402/testkit/otlp-receiver";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { devchainWallets } from "../src/devchain";
import { baseUrl, call, newCheckout, newSeller } from "../src/http";
import { keptTrace, waitForTrace } from "../src/tracing";

/**
 * One live paid request is one trace, across every process it touches, and
 * its metrics are visible on each process's own metrics port. The suite's
 * target exports its spans to the loopback OTLP collector of the global setup
 * (test-e2e/src/global-setup.ts), which keeps the traces tests start on purpose.
 */
const SPAN_KIND = { server: 2, client: 3, producer: 4, consumer: 5 };

describe("observability: one paid request is one trace, with its metrics", () => {
  const mode = process.env.E2E_RUN_MODE ?? "embedded";
  const metricsUrls = JSON.parse(process.env.E2E_METRICS_URLS ?? "{}") as Record<string, string>;
  let hooks: WebhookReceiver;

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
  });
  afterAll(() => hooks?.close());

  /** The metrics one process serves, as text. */
  async function scrape(name: string): Promise<string> {
    const url = metricsUrls[mode === "embedded" ? "embedded" : name];
    if (!url) throw new Error(`no metrics port for ${name}: ${JSON.stringify(metricsUrls)}`);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  }

  const serviceOf = (name: string) => (mode === "embedded" ? "c402-embedded" : `c402-${name}`);

  it("a live payment by the official client: gateway, payments, the chain calls, the outbox and the webhooks consumer share one trace id, each span's parent inside it", async () => {
    const chain = await devchainWallets(17);
    const seller = await newSeller();
    const hook = await call("POST", "/v1/webhooks", { key: seller.key, body: { url: `${hooks.url}/hook`, events: ["checkout.paid"] } });
    expect(hook.status).toBe(201);
    const checkout = await newCheckout(seller.key, { title: "Traced weather", price_usd: "0.10", payload: { temp_c: 19 }, test_mode: false });
    const buyer = await chain.fundedBuyer();

    // The buyer's agent starts the trace; the service continues it.
    const { traceparent, traceId, spanId: incomingSpan } = keptTrace();
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer });
    const res = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/c/${checkout.id}`, {
      headers: { accept: "application/json", traceparent },
    });
    expect(res.status).toBe(200);
    await hooks.waitFor(1, 30_000);

    const isWebhooksConsumer = (s: ReceivedSpan) =>
      s.kind === SPAN_KIND.consumer &&
      s.name === `${TOPICS.paymentSettled} process` &&
      s.attributes["messaging.consumer.group.name"] === "webhooks.payment-settled";
    const isPaidAnswer = (s: ReceivedSpan) => s.kind === SPAN_KIND.server && s.attributes["http.response.status_code"] === 200;
    // Spans arrive as each process exports them (in batches), in no particular order.
    const spans = await waitForTrace(
      traceId,
      (found) => found.some(isWebhooksConsumer) && found.some((s) => s.name === "eth_sendRawTransaction") && found.some(isPaidAnswer),
      60_000,
    );

    // The gateway's server span is the request's root here, a child of the buyer's span.
    const gatewayRequests = spans.filter((s) => s.kind === SPAN_KIND.server && s.attributes["http.route"] === "/c/:id");
    expect(gatewayRequests.map((s) => s.attributes["http.response.status_code"]).sort()).toEqual([200, 402]);
    for (const s of gatewayRequests) expect(s).toMatchObject({ service: serviceOf("gateway"), parentSpanId: incomingSpan });
    // payments served the gRPC call the paid request made…
    const settle = spans.find((s) => s.kind === SPAN_KIND.server && String(s.attributes["rpc.method"]).startsWith("payments.v1.PaymentsService/"));
    expect(settle).toMatchObject({ service: serviceOf("payments") });
    // …called the chain (the broadcast and its receipt) and wrote its statements…
    const chainCalls = spans.filter((s) => s.attributes["rpc.system.name"] === "jsonrpc");
    expect(chainCalls.map((s) => s.name)).toEqual(expect.arrayContaining(["eth_sendRawTransaction", "eth_getTransactionReceipt"]));
    for (const s of chainCalls) expect(s).toMatchObject({ service: serviceOf("payments"), kind: SPAN_KIND.client, statusCode: 0 });
    expect(spans.some((s) => s.service === serviceOf("payments") && s.attributes["db.system.name"] === "postgresql" && s.name === "update")).toBe(true);
    // …and its outbox published the settlement, which the webhooks service consumed in the same trace.
    const published = spans.find((s) => s.kind === SPAN_KIND.producer && s.name === `${TOPICS.paymentSettled} publish`);
    expect(published).toMatchObject({ service: serviceOf("payments") });
    const consumed = spans.find(isWebhooksConsumer) as ReceivedSpan;
    expect(consumed).toMatchObject({ service: serviceOf("webhooks"), parentSpanId: published?.spanId });

    // One tree: every span's parent is a span of the trace, or the buyer's.
    const ids = new Set([incomingSpan, ...spans.map((s) => s.spanId)]);
    expect(spans.filter((s) => !ids.has(s.parentSpanId)).map((s) => `${s.service} ${s.name}`)).toEqual([]);
    // Nothing secret rides along: no payment header, signature or key in any attribute.
    const text = JSON.stringify(spans);
    expect(text).not.toMatch(/sk_(live|test)_|payment-signature|0x[0-9a-f]{130}/i);
  });

  it("the same payment is visible in the metrics of each process, on its own port and not on the public one", async () => {
    const gateway = await scrape("gateway");
    expect(gateway).toMatch(/c402_http_request_duration_seconds_count\{method="GET",route="\/c\/:id",status="200"\} [1-9]/);
    expect(gateway).toMatch(/c402_http_request_duration_seconds_count\{method="GET",route="\/c\/:id",status="402"\} [1-9]/);
    expect(gateway).toMatch(/c402_rpc_client_duration_seconds_count\{method="payments\.v1\.PaymentsService\/\w+",code="OK"\} [1-9]/);

    const payments = await scrape("payments");
    expect(payments).toMatch(/c402_rpc_server_duration_seconds_count\{method="payments\.v1\.PaymentsService\/\w+",code="OK"\} [1-9]/);
    expect(payments).toMatch(/c402_chain_rpc_duration_seconds_count\{method="eth_sendRawTransaction",outcome="ok"\} [1-9]/);
    expect(payments).toMatch(/c402_saga_settlements\{state="settling",mode="live"\} \d/);
    expect(payments).toMatch(/c402_saga_oldest_age_seconds\{state="claimed",mode="rehearsal"\} \d/);
    expect(payments).toMatch(/c402_outbox_unpublished_events\{service="payments"\} \d/);
    expect(payments).toMatch(/c402_outbox_oldest_unpublished_age_seconds\{service="payments"\} \d/);

    const webhooks = await scrape("webhooks");
    expect(webhooks).toMatch(/c402_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    if (mode === "distributed") {
      // Kafka reports how far each group is behind; the delivered event left nothing behind it.
      expect(webhooks).toMatch(
        new RegExp(
          `c402_bus_consumer_lag_messages\\{topic="${TOPICS.paymentSettled.replace(/\./g, "\\.")}",group="webhooks\\.payment-settled",partition="\\d+"\\} 0`,
        ),
      );
    }

    // The public port serves no metrics.
    expect((await call("GET", "/metrics")).status).toBe(404);
  });
});
