import { ORIGIN_HOP_MARGIN_MS, ORIGIN_TIMEOUT_MAX_MS } from "@c402/contracts";
import { createGuardedFetch, outboundPolicyOf, type GuardedFetch } from "@c402/outbound-http";
import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { startFakeOrigin, type FakeOrigin } from "@c402/testkit/fake-origin";
import { callerStillWaits, originTimeFor } from "../src/domain/caller-deadline";
import { callMcpTool } from "../src/domain/mcp-call";
import { callOrigin } from "../src/domain/relay-call";

/**
 * The origin's own deadline is the whole call (ADR 9, "Deadlines"): an origin
 * that never answers, sends its headers and stalls the body, trickles bytes,
 * or is merely slow, and an MCP tool that takes too long, each end as a
 * timeout (not charged) at the deadline, not later; and the deadline a
 * caller's own leaves is what the origin gets.
 */
describe("the origin's deadline covers the whole call", () => {
  let origin: FakeOrigin;
  let mcp: FakeMcpServer;
  let fetch: GuardedFetch;
  const DEADLINE_MS = 1_500;

  beforeAll(async () => {
    origin = await startFakeOrigin();
    mcp = await startFakeMcpServer({ tools: [{ name: "forecast", inputSchema: { type: "object" }, answer: () => "sunny", delayMs: 20_000 }] });
    // As fulfillment builds it: the guard's own bound is the longest any call may have; each call sets its own.
    fetch = createGuardedFetch(outboundPolicyOf({ allowLoopback: true, allowAddresses: [] }, { timeoutMs: ORIGIN_TIMEOUT_MAX_MS }));
  });
  afterAll(async () => {
    await fetch.close();
    await mcp.close();
    await origin.close();
  });

  it.each(["/never", "/stall", "/trickle", "/slow/20000"])("an origin at %s is a timeout at the deadline, not charged", async (path) => {
    const started = performance.now();
    const outcome = await callOrigin(fetch, { originUrl: `${origin.url}${path}`, method: "GET" }, {}, DEADLINE_MS);
    const elapsed = performance.now() - started;
    expect(outcome).toMatchObject({ kind: "origin_failed", charged: false, reason: "timeout" });
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(elapsed).toBeLessThan(DEADLINE_MS + 1_000);
  });

  it("a slow MCP tool is a timeout at the deadline, the session closed, not charged", async () => {
    const started = performance.now();
    const outcome = await callMcpTool(fetch, { originUrl: mcp.url, fixedTool: "forecast" }, {}, DEADLINE_MS);
    expect(outcome).toMatchObject({ kind: "origin_failed", charged: false, reason: "timeout" });
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS + 1_000);
  });

  it("an MCP server that never answers the handshake is a timeout at the deadline", async () => {
    const started = performance.now();
    const outcome = await callMcpTool(fetch, { originUrl: `${origin.url}/never`, fixedTool: "forecast" }, {}, DEADLINE_MS);
    expect(outcome).toMatchObject({ kind: "origin_failed", charged: false });
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS + 1_000);
  });

  it("gives the origin what the caller's deadline leaves after the way back, never more than asked", () => {
    const now = 1_000_000;
    expect(originTimeFor(undefined, 30_000, now)).toBe(30_000);
    expect(originTimeFor(new Date(now + 60_000), 30_000, now)).toBe(30_000);
    expect(originTimeFor(new Date(now + 20_000), 30_000, now)).toBe(20_000 - ORIGIN_HOP_MARGIN_MS);
    expect(originTimeFor(new Date(now + 1_000), 30_000, now)).toBe(1);
    expect(callerStillWaits(undefined, now)).toBe(true);
    expect(callerStillWaits(new Date(now + 5_000), now)).toBe(true);
    expect(callerStillWaits(new Date(now + 900), now)).toBe(false);
  });
});
