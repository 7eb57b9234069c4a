import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { call, newSeller } from "../src/http";

/**
 * POST /v1/mcp/tools over the running services: fulfillment asks a seller's
 * MCP server (built with the official SDK, on loopback) with the official
 * client, through the outbound guard; nothing is stored.
 */

describe("POST /v1/mcp/tools", () => {
  let server: FakeMcpServer;
  beforeAll(async () => {
    server = await startFakeMcpServer({
      tools: [{ name: "forecast", description: "Tomorrow's weather", inputSchema: { type: "object", properties: { city: { type: "string" } } } }],
      requireHeader: { name: "Authorization", value: "Bearer seller-server-token" },
    });
  });
  afterAll(() => server.close());

  it("lists the tools with a one-off credential or a stored origin key, storing nothing", async () => {
    const seller = await newSeller();
    const expected = {
      origin_url: server.url,
      tools: [{ name: "forecast", description: "Tomorrow's weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
    };
    const oneOff = await call("POST", "/v1/mcp/tools", {
      key: seller.key,
      body: { origin_url: server.url, origin_auth_type: "bearer", origin_auth_value: "seller-server-token" },
    });
    expect([oneOff.status, oneOff.body]).toEqual([200, expected]);
    expect(oneOff.headers.get("cache-control")).toBe("no-store");
    const key = await call("POST", "/v1/origin-keys", { key: seller.key, body: { auth_type: "bearer", value: "seller-server-token" } });
    const stored = await call("POST", "/v1/mcp/tools", { key: seller.key, body: { origin_url: server.url, origin_auth_secret_id: key.body.id } });
    expect([stored.status, stored.body]).toEqual([200, expected]);
    expect((await call("GET", "/v1/origin-keys", { key: seller.key })).body.origin_keys).toHaveLength(1);
  });

  it("answers 502 upstream-failed when the server refuses the credential or cannot be reached, and 422 for what it cannot call", async () => {
    const seller = await newSeller();
    const ask = (body: unknown) => call("POST", "/v1/mcp/tools", { key: seller.key, body });
    const refused = await ask({ origin_url: server.url });
    expect([refused.status, refused.body.type]).toEqual([502, expect.stringMatching(/\/problems\/upstream-failed$/)]);
    // Names are not looked up in this suite (OUTBOUND_RESOLVE_NAMES=false): an unknown name is unreachable.
    const unknown = await ask({ origin_url: "https://mcp.example.com/mcp" });
    expect([unknown.status, unknown.body.detail?.message ?? unknown.body.detail]).toEqual([502, expect.stringContaining("could not be reached")]);
    const metadata = await ask({ origin_url: "http://169.254.169.254/mcp" });
    expect([metadata.status, metadata.body.errors]).toEqual([422, [{ field: "origin_url", reason: expect.stringContaining("does not call") }]]);
    const cases: [unknown, string[]][] = [
      [{ origin_url: "ftp://example.com/mcp" }, ["origin_url"]],
      [{ origin_url: server.url, origin_auth_value: "v" }, ["origin_auth_type"]],
      [{ origin_url: server.url, origin_auth_type: "bearer" }, ["origin_auth_value"]],
      [
        { origin_url: server.url, origin_auth_type: "bearer", origin_auth_value: "v", origin_auth_secret_id: "okey_Whatever00000000000000000" },
        ["origin_auth_type", "origin_auth_value"],
      ],
      [{ origin_url: server.url, origin_auth_secret_id: "okey_Nonexistent000000000000" }, ["origin_auth_secret_id"]],
      [{ origin_url: server.url, origin_auth_type: "api_key", origin_auth_value: "v" }, ["origin_auth_header"]],
      [{ origin_url: server.url, tool: "x" }, ["tool"]],
    ];
    for (const [body, fields] of cases) {
      const r = await ask(body);
      expect([JSON.stringify(body), r.status, r.body.errors?.map((e: { field: string }) => e.field)]).toEqual([JSON.stringify(body), 422, fields]);
    }
  });
});
