import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { EmbeddedPostgres, migrate } from "@c402/db";
import { createGuardedFetch, type GuardedFetch } from "@c402/outbound-http";
import { generateKeyringText, parseKeyring, SecretSealer } from "@c402/sealed-secrets";
import { startFakeMcpServer, type FakeMcpServer, type FakeMcpTool } from "@c402/testkit/fake-mcp-server";
import { fulfillmentMigrations, OriginKeys } from "../src";
import { McpTools } from "../src/domain/mcp-tools";
import type { FulfillmentDb } from "../src/store/origin-keys-store";
import { problemOf } from "./support/problem-of";

/** POST /v1/mcp/tools's work: the official SDK client against fake sellers' servers (built with the SDK) on loopback, through the outbound guard. */

const TOOLS: FakeMcpTool[] = [
  { name: "forecast", description: "Tomorrow's weather", inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  { name: "tides", inputSchema: { type: "object" } },
];
const EXPECTED = [
  { name: "forecast", description: "Tomorrow's weather", inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  { name: "tides", inputSchema: { type: "object" } },
];

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("listing an MCP server's tools", () => {
  let pg: EmbeddedPostgres;
  let originKeys: OriginKeys;
  let loopbackFetch: GuardedFetch;
  let guardedFetch: GuardedFetch;
  let open: FakeMcpServer;
  let sse: FakeMcpServer;
  let locked: FakeMcpServer;
  const change = (accountId: string) => ({ accountId, actor: "key:sk_test_abcd" as const, testMode: true });

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("fulfillment");
    await migrate(database, fulfillmentMigrations);
    originKeys = new OriginKeys({ db: database.db as FulfillmentDb, sealer: new SecretSealer(parseKeyring(generateKeyringText())) });
    loopbackFetch = createGuardedFetch({ allowLoopback: true, timeoutMs: 5_000 });
    guardedFetch = createGuardedFetch({ allowLoopback: false, timeoutMs: 5_000 });
    open = await startFakeMcpServer({ tools: TOOLS });
    sse = await startFakeMcpServer({ tools: TOOLS, json: false });
    locked = await startFakeMcpServer({ tools: TOOLS, requireHeader: { name: "X-Api-Key", value: "seller-secret" } });
  });
  afterAll(async () => {
    await Promise.all([open.close(), sse.close(), locked.close(), loopbackFetch.close(), guardedFetch.close()]);
    await pg.close();
  });
  const tools = (fetch = loopbackFetch) => new McpTools({ fetch, originKeys });

  it("lists the tools of a server answering JSON and of one answering an event stream, after the initialize handshake", async () => {
    expect(await tools().list({ accountId: "acct_a", originUrl: open.url, auth: { kind: "none" } })).toEqual(EXPECTED);
    expect(await tools().list({ accountId: "acct_a", originUrl: sse.url, auth: { kind: "none" } })).toEqual(EXPECTED);
    expect(open.requests.filter((r) => r.method === "POST").length).toBeGreaterThanOrEqual(3);
  });

  it("sends a one-off credential and a stored origin key's current value as their headers", async () => {
    const oneOff = await tools().list({
      accountId: "acct_a",
      originUrl: locked.url,
      auth: { kind: "one_off", authType: "api_key", headerName: "X-Api-Key", value: "seller-secret" },
    });
    expect(oneOff.map((t) => t.name)).toEqual(["forecast", "tides"]);
    const key = await originKeys.create({ ...change("acct_a"), authType: "api_key", headerName: "X-Api-Key", value: "stale" });
    expect((await problemOf(tools().list({ accountId: "acct_a", originUrl: locked.url, auth: { kind: "origin_key", originKeyId: key.id } }))).slug).toBe(
      "upstream-failed",
    );
    await originKeys.rotate({ ...change("acct_a"), id: key.id, value: "seller-secret" });
    const stored = await tools().list({ accountId: "acct_a", originUrl: locked.url, auth: { kind: "origin_key", originKeyId: key.id } });
    expect(stored).toEqual(EXPECTED);
  });

  it("answers 502 upstream-failed for a refused credential, a server that is down, and a URL that is not an MCP server, quoting none of it", async () => {
    const refused = await problemOf(
      tools().list({ accountId: "acct_a", originUrl: locked.url, auth: { kind: "one_off", authType: "bearer", value: "wrong-token" } }),
    );
    expect([refused.slug, refused.message]).toEqual(["upstream-failed", "The MCP server answered HTTP 401."]);
    expect(JSON.stringify(refused)).not.toContain("wrong-token");
    const down = await problemOf(tools().list({ accountId: "acct_a", originUrl: `http://127.0.0.1:${await closedPort()}/mcp`, auth: { kind: "none" } }));
    expect([down.slug, down.message]).toEqual(["upstream-failed", "The MCP server could not be reached (unreachable)."]);
    const notMcp = await problemOf(tools().list({ accountId: "acct_a", originUrl: open.url.replace("/mcp", "/elsewhere"), auth: { kind: "none" } }));
    expect([notMcp.slug, notMcp.message]).toEqual(["upstream-failed", "The MCP server answered HTTP 404."]);
    const html = createHttpServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>a web page</html>"));
    await new Promise<void>((r) => html.listen(0, "127.0.0.1", r));
    try {
      const page = await problemOf(
        tools().list({ accountId: "acct_a", originUrl: `http://127.0.0.1:${(html.address() as { port: number }).port}/`, auth: { kind: "none" } }),
      );
      expect([page.slug, page.message]).toEqual(["upstream-failed", "The MCP server answered with something other than MCP."]);
    } finally {
      await new Promise<void>((r) => html.close(() => r()));
    }
  });

  it("refuses with 422 naming origin_url, before any connection, a loopback server where loopback is not allowed and a metadata address anywhere", async () => {
    const before = open.requests.length;
    const loopback = await problemOf(tools(guardedFetch).list({ accountId: "acct_a", originUrl: open.url, auth: { kind: "none" } }));
    expect([loopback.slug, loopback.errors?.map((e) => e.field)]).toEqual(["invalid-request", ["origin_url"]]);
    expect(open.requests.length).toBe(before);
    const metadata = await problemOf(tools().list({ accountId: "acct_a", originUrl: "http://169.254.169.254/mcp", auth: { kind: "none" } }));
    expect([metadata.slug, metadata.errors?.map((e) => e.field)]).toEqual(["invalid-request", ["origin_url"]]);
  });

  it.each([
    ["an ftp URL", "ftp://example.com/mcp", "origin_url", /http or https/],
    ["text that is no URL", "not a url", "origin_url", /http or https/],
    ["a URL with credentials", "https://user:pass@example.com/mcp", "origin_url", /credentials/],
    ["a URL over 2,048 characters", `https://example.com/${"a".repeat(2050)}`, "origin_url", /at most 2048/],
  ])("refuses %s as origin_url with 422", async (_label, originUrl, field, reason) => {
    const p = await problemOf(tools().list({ accountId: "acct_a", originUrl, auth: { kind: "none" } }));
    expect(p.errors).toEqual([{ field, reason: expect.stringMatching(reason) }]);
  });

  it("refuses a bad one-off credential and an origin key that is not this account's or is revoked, naming the request's field", async () => {
    const badValue = await problemOf(tools().list({ accountId: "acct_a", originUrl: open.url, auth: { kind: "one_off", authType: "bearer", value: "a\nb" } }));
    expect(badValue.errors?.map((e) => e.field)).toEqual(["origin_auth_value"]);
    const noHeader = await problemOf(tools().list({ accountId: "acct_a", originUrl: open.url, auth: { kind: "one_off", authType: "custom", value: "v" } }));
    expect(noHeader.errors?.map((e) => e.field)).toEqual(["origin_auth_header"]);
    const theirs = await originKeys.create({ ...change("acct_b"), authType: "bearer", value: "theirs" });
    const foreign = await problemOf(tools().list({ accountId: "acct_a", originUrl: open.url, auth: { kind: "origin_key", originKeyId: theirs.id } }));
    expect(foreign.errors?.map((e) => e.field)).toEqual(["origin_auth_secret_id"]);
    await originKeys.revoke({ ...change("acct_b"), id: theirs.id });
    const revoked = await problemOf(tools().list({ accountId: "acct_b", originUrl: open.url, auth: { kind: "origin_key", originKeyId: theirs.id } }));
    expect(revoked.errors?.map((e) => e.field)).toEqual(["origin_auth_secret_id"]);
  });
});
