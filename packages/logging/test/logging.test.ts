import { newTraceparent, runWithContext, traceIdOf } from "@c402/request-context";
import { createCapturingLogger } from "../src";

describe("logging", () => {
  it("writes one structured line and never a secret", () => {
    const { logger: log, lines } = createCapturingLogger({ service: "test" });
    log.info({ req: { headers: { authorization: "Bearer sk_test_abc", "x-payment": "eyJ" } }, secret: "s3cr3t" }, "request");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string);
    expect(line.service).toBe("test");
    expect(line.msg).toBe("request");
    expect(lines[0]).not.toContain("sk_test_abc");
    expect(lines[0]).not.toContain("s3cr3t");
    expect(lines[0]).not.toContain("eyJ");
  });

  it("names the request being served on every line: its request_id and trace_id, across awaits and child loggers", async () => {
    const { logger: log, lines } = createCapturingLogger({ service: "test" });
    const traceparent = newTraceparent();
    await runWithContext({ requestId: "req_abc123456", traceparent }, async () => {
      log.info("before");
      await new Promise((r) => setTimeout(r, 5));
      log.child({ component: "payments" }).warn({ step: 2 }, "after an await, in a child logger");
    });
    log.info("outside any request");
    const [before, after, outside] = lines.map((l) => JSON.parse(l));
    expect(traceIdOf(traceparent)).toMatch(/^[0-9a-f]{32}$/);
    expect(before).toMatchObject({ request_id: "req_abc123456", trace_id: traceIdOf(traceparent) });
    expect(after).toMatchObject({ request_id: "req_abc123456", trace_id: traceIdOf(traceparent), component: "payments", step: 2 });
    expect(outside.request_id).toBeUndefined();
    expect(outside.trace_id).toBeUndefined();
  });

  it("writes each key once when a line also names the request itself", () => {
    const { logger: log, lines } = createCapturingLogger({ service: "test" });
    runWithContext({ requestId: "req_abc123456" }, () => log.info({ request_id: "req_abc123456" }, "explicit"));
    expect(lines[0]!.match(/"request_id"/g)).toHaveLength(1);
    expect(JSON.parse(lines[0]!).trace_id).toBeUndefined();
  });
});
