import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { startFakeOrigin } from "@c402/testkit/fake-origin";
import { startWebhookReceiver, type WebhookReceiver } from "@c402/testkit/webhook-receiver";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import fc from "fast-check";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devchainWallets } from "../src/devchain";
import { baseUrl, call, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * POST /mcp (spec "MCP endpoint"): the official MCP SDK client (Streamable
 * HTTP transport) lists and calls the tools against the running service with
 * an API key; the endpoint's own HTTP rules are checked with raw requests.
 */

/** An official SDK client connected to /mcp, with `key` as its bearer credential (none: a buyer). */
async function sdkClient(key?: string): Promise<Client> {
  const client = new Client({ name: "c402-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl()}/mcp`), {
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : {},
  });
  await client.connect(transport);
  return client;
}

/** One JSON-RPC message posted as is, with the headers given (none by default: Accept changes nothing). */
async function rpc(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl()}/mcp`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? (JSON.parse(text) as any) : undefined };
}

const structured = (result: unknown) => (result as { structuredContent: any }).structuredContent;

/** Every tool listed today, sorted: the spending tools come with their feature. */
const ALL_TOOLS = [
  "cancel_schedule",
  "create_checkout",
  "create_webhook",
  "escrow_action",
  "escrow_submit",
  "get_analytics",
  "get_checkout",
  "get_content",
  "get_content_snippet",
  "get_embed_settings",
  "get_escrow",
  "get_escrow_settings",
  "get_payout_history",
  "get_receipt",
  "get_schedule",
  "go_live",
  "issue_content_grant",
  "list_awaiting_fulfilment",
  "list_checkouts",
  "list_escrows",
  "list_mcp_tools",
  "list_receipts",
  "list_schedules",
  "list_spending_wallets",
  "mark_fulfilled",
  "pay_test_checkout",
  "pay_x402",
  "quote_checkout",
  "report_checkout",
  "resolve_escrow",
  "resolve_escrow_submit",
  "set_embed_settings",
  "set_escrow_settings",
  "spending_budget",
  "spending_wallet_balance",
  "spending_wallet_events",
  "update_content",
  "whoami",
];

describe("the MCP endpoint", () => {
  it("the official SDK client lists the tools without a credential, each with a JSON Schema of its arguments", async () => {
    const client = await sdkClient();
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      expect(names).toEqual(ALL_TOOLS);
      const create = tools.find((t) => t.name === "create_checkout")!;
      expect(create.inputSchema).toMatchObject({ type: "object", required: ["title", "price_usd"], additionalProperties: false });
      const props = Object.keys(create.inputSchema.properties ?? {});
      expect(props).toEqual(
        expect.arrayContaining([
          "title",
          "price_usd",
          "calls",
          "max_deliveries",
          "reusable",
          "payload",
          "origin_url",
          "mcp_tool",
          "content",
          "escrow_offer",
          "schedule_interval_days",
          "schedule_periods",
        ]),
      );
      // The mode is the credential's.
      expect(props).not.toContain("test_mode");
    } finally {
      await client.close();
    }
  });

  it("a seller creates, reads, lists and arms a checkout through tools: the same objects REST answers", async () => {
    const seller = await newSeller();
    const client = await sdkClient(seller.key);
    try {
      const me = structured(await client.callTool({ name: "whoami", arguments: {} }));
      const rest = await call("GET", "/auth/me", { key: seller.key });
      expect(me).toMatchObject({ ...rest.body, credential: { kind: expect.any(String), scope: "full", mode: "test" } });

      const created = structured(
        await client.callTool({ name: "create_checkout", arguments: { title: "Tide table", price_usd: "0.25", payload: { tide: "high" } } }),
      );
      expect(created).toMatchObject({
        title: "Tide table",
        reusable: true,
        url: `${baseUrl()}/c/${created.id}`,
        test_url: `${baseUrl()}/c/${created.id}/test`,
      });
      expect((await call("GET", `/v1/checkouts/${created.id}`, { key: seller.key })).body).toEqual(
        structured(await client.callTool({ name: "get_checkout", arguments: { checkout_id: created.id } })),
      );
      const listed = structured(await client.callTool({ name: "list_checkouts", arguments: { limit: 5 } }));
      expect(listed).toEqual((await call("GET", "/v1/checkouts?limit=5", { key: seller.key })).body);
      expect(listed.checkouts.map((c: { id: string }) => c.id)).toContain(created.id);

      // The text content carries the same object, for clients that read only text.
      const text = (await client.callTool({ name: "get_checkout", arguments: { checkout_id: created.id } })) as { content: { type: string; text: string }[] };
      expect(JSON.parse(text.content[0]!.text)).toMatchObject({ id: created.id });

      const armed = structured(await client.callTool({ name: "go_live", arguments: { checkout_id: created.id } }));
      expect(armed).toMatchObject({ id: created.id, test_mode: false, already_live: false });
    } finally {
      await client.close();
    }
  });

  it("create_checkout takes calls (and max_deliveries by its older name), never both", async () => {
    const seller = await newSeller();
    const client = await sdkClient(seller.key);
    try {
      const origin = "http://127.0.0.1:9/forecast";
      const pkg = structured(
        await client.callTool({ name: "create_checkout", arguments: { title: "Ten calls", price_usd: "1.00", origin_url: origin, calls: 10 } }),
      );
      expect(pkg).toMatchObject({ fulfillment: "relay", max_deliveries: 10 });
      const older = structured(
        await client.callTool({ name: "create_checkout", arguments: { title: "Five calls", price_usd: "1.00", origin_url: origin, max_deliveries: 5 } }),
      );
      expect(older).toMatchObject({ max_deliveries: 5 });
      await expect(
        client.callTool({ name: "create_checkout", arguments: { title: "Both", price_usd: "1.00", origin_url: origin, calls: 2, max_deliveries: 2 } }),
      ).rejects.toMatchObject({
        code: -32602,
        data: { status: 422, errors: [{ field: "calls", reason: expect.stringContaining("one of the two") }] },
      });
    } finally {
      await client.close();
    }
  });

  it("errors are JSON-RPC errors carrying the problem document: invalid arguments, another account's checkout, a scope too low", async () => {
    const seller = await newSeller();
    const other = await newSeller();
    const theirs = await newCheckout(other.key);
    const client = await sdkClient(seller.key);
    try {
      await expect(client.callTool({ name: "create_checkout", arguments: { title: "No price" } })).rejects.toMatchObject({
        code: -32602,
        data: { status: 422, errors: expect.arrayContaining([{ field: "price_usd", reason: "is required" }]) },
      });
      await expect(client.callTool({ name: "create_checkout", arguments: { title: "Mode", price_usd: "0.10", test_mode: false } })).rejects.toMatchObject({
        code: -32602,
        data: { errors: [{ field: "test_mode", reason: "is not a known field" }] },
      });
      await expect(client.callTool({ name: "get_checkout", arguments: { checkout_id: theirs.id } })).rejects.toMatchObject({
        code: -32000,
        data: { status: 404 },
      });
      await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
    const readOnly = await call("POST", "/v1/keys", { key: seller.key, body: { scope: "read_only" } });
    expect(readOnly.status).toBe(201);
    const reader = await sdkClient(readOnly.body.secret);
    try {
      expect(structured(await reader.callTool({ name: "list_checkouts", arguments: {} }))).toMatchObject({ checkouts: expect.any(Array) });
      await expect(reader.callTool({ name: "create_checkout", arguments: { title: "Nope", price_usd: "0.10" } })).rejects.toMatchObject({
        code: -32000,
        data: { status: 403, needed_scope: "payments" },
      });
    } finally {
      await reader.close();
    }
  });

  it("quote_checkout needs no credential and answers the face's offer and requirements, by id or URL", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { title: "Quoted", price_usd: "0.10" });
    const client = await sdkClient();
    try {
      const byId = structured(await client.callTool({ name: "quote_checkout", arguments: { checkout: checkout.id } }));
      const face = await call("GET", `/c/${checkout.id}`);
      expect(face.status).toBe(402);
      expect(byId).toMatchObject({ checkout_id: checkout.id, face: "live", offer: face.body.offer, accepts: face.body.accepts });
      expect(byId.offer).toMatchObject({ price_usd: "0.100000", fee_usd: expect.any(String), total_usd: expect.any(String) });
      const byUrl = structured(await client.callTool({ name: "quote_checkout", arguments: { checkout: `${baseUrl()}/c/${checkout.id}/test` } }));
      expect(byUrl).toMatchObject({ face: "test", resource: { url: `${baseUrl()}/c/${checkout.id}/test` } });
      await expect(client.callTool({ name: "quote_checkout", arguments: { checkout: "https://elsewhere.example/x" } })).rejects.toMatchObject({ code: -32602 });
      // A seller tool without a credential: the client is told to authenticate (HTTP 401).
      await expect(client.callTool({ name: "whoami", arguments: {} })).rejects.toThrow(/401/);
    } finally {
      await client.close();
    }
  });

  it("pay_test_checkout buys from the rehearsal face with no wallet and no credential: the goods and a rehearsal receipt, never a live payment", async () => {
    const seller = await newSeller();
    const origin = await startFakeOrigin();
    const client = await sdkClient();
    try {
      const inline = await newCheckout(seller.key, { title: "Rehearsed", price_usd: "0.10", payload: { ok: true }, reusable: true });
      const live = await call("POST", `/v1/checkouts/${inline.id}/go-live`, { key: seller.key });
      expect(live.status).toBe(200);
      // The live URL of an armed checkout: still a rehearsal.
      const bought = structured(await client.callTool({ name: "pay_test_checkout", arguments: { checkout: inline.url } }));
      expect(bought).toMatchObject({ http_status: 200, fulfillment: { payload: { ok: true } }, receipt: { test_mode: true, network: expect.any(String) } });
      const ledger = (await call("GET", "/v1/receipts?test_mode=true", { key: seller.key })).body.receipts.map((r: { id: string }) => r.id);
      expect(ledger).toEqual([bought.receipt.id]);
      expect((await call("GET", "/v1/receipts", { key: seller.key })).body.receipts).toEqual([]);

      const relay = await newCheckout(seller.key, { title: "Echo", price_usd: "0.10", origin_url: `${origin.url}/echo`, payload: undefined, reusable: true });
      const echoed = structured(await client.callTool({ name: "pay_test_checkout", arguments: { checkout: relay.id, params: { city: "Oslo" } } }));
      expect(echoed).toMatchObject({ http_status: 200, fulfillment: { payload: { query: { city: "Oslo" } } }, receipt: { test_mode: true } });
      await expect(client.callTool({ name: "pay_test_checkout", arguments: { checkout: relay.id, params: { city: 7 } } })).rejects.toMatchObject({
        code: -32602,
      });
    } finally {
      await client.close();
      await origin.close();
    }
  });

  it("report_checkout files a report with no credential, anonymous or naming the receipt; the seller sees it", async () => {
    const seller = await newSeller();
    const checkout = await newCheckout(seller.key, { title: "Stale data", price_usd: "0.10", reusable: true });
    const paid = await payRehearsal(checkout.id);
    const client = await sdkClient();
    try {
      const anonymous = structured(await client.callTool({ name: "report_checkout", arguments: { checkout: checkout.url, category: "stale_data" } }));
      const buyer = structured(
        await client.callTool({
          name: "report_checkout",
          arguments: { checkout: checkout.id, category: "not_delivered", detail: "Nothing came back.", receipt_id: paid.body.receipt.id },
        }),
      );
      expect(anonymous).toMatchObject({ id: expect.stringMatching(/^rpt_/) });
      expect(buyer).toMatchObject({ id: expect.stringMatching(/^rpt_/) });
      const seen = (await call("GET", `/v1/checkouts/${checkout.id}/reports`, { key: seller.key })).body.reports;
      expect(seen.map((r: { id: string; category: string }) => [r.id, r.category]).sort()).toEqual(
        [
          [anonymous.id, "stale_data"],
          [buyer.id, "not_delivered"],
        ].sort(),
      );
      await expect(client.callTool({ name: "report_checkout", arguments: { checkout: checkout.id, category: "bored" } })).rejects.toMatchObject({
        code: -32602,
        data: { errors: [{ field: "category", reason: expect.any(String) }] },
      });
    } finally {
      await client.close();
    }
  });

  it("HTTP rules: Accept changes nothing; notifications get 202; GET is 405; batches, bad JSON and unknown versions are refused; no session header", async () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    for (const accept of [undefined, "application/json", "text/event-stream", "*/*", "text/html"]) {
      const r = await rpc(list, accept ? { accept } : {});
      expect({ accept, status: r.status, tools: r.body?.result?.tools?.length }).toEqual({ accept, status: 200, tools: ALL_TOOLS.length });
      expect(r.headers.get("mcp-session-id")).toBeNull();
    }
    const note = await rpc({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect({ status: note.status, text: note.text }).toEqual({ status: 202, text: "" });
    // A browser-based client may call it: CORS is open (Bearer only, no cookie), WWW-Authenticate readable.
    const preflight = await fetch(`${baseUrl()}/mcp`, {
      method: "OPTIONS",
      headers: {
        origin: "https://inspector.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
    expect((await rpc(list, { origin: "https://inspector.example" })).headers.get("access-control-expose-headers")).toBe("WWW-Authenticate");
    const get = await fetch(`${baseUrl()}/mcp`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect((await rpc([list, list])).body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    const bad = await rpc("{not json", { "content-type": "application/json" });
    expect({ status: bad.status, error: bad.body.error.code }).toEqual({ status: 400, error: -32700 });
    expect((await rpc({ hello: 1 })).status).toBe(400);
    const version = await rpc(list, { "mcp-protocol-version": "1999-01-01" });
    expect({ status: version.status, code: version.body.error.code }).toEqual({ status: 400, code: -32000 });
    const unknown = await rpc({ jsonrpc: "2.0", id: "x", method: "resources/list" });
    expect(unknown.body).toMatchObject({ id: "x", error: { code: -32601 } });
    const init = await rpc({
      jsonrpc: "2.0",
      id: 2,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    });
    expect(init.body.result).toMatchObject({ protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: expect.any(String) } });
  });

  it("a seller tool without a credential, or with a bad one, is HTTP 401 with WWW-Authenticate; the error carries the problem document", async () => {
    const whoami = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "whoami", arguments: {} } };
    const none = await rpc(whoami);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer realm=/);
    expect(none.body).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32001, data: { status: 401 } } });
    const wrong = await rpc(whoami, { authorization: "Bearer sk_test_notarealkeyatall0000000000" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
    // A session cookie is not a credential here.
    const seller = await newSeller();
    const cookie = await rpc(whoami, { cookie: `session=${seller.key}` });
    expect(cookie.status).toBe(401);
  });

  it("no input gets a 5xx: 300 fast-check bodies, and every tool called with fast-check arguments by a seller", async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const r = await rpc(JSON.stringify(value), { "content-type": "application/json" });
        statuses.add(r.status);
        expect(r.status).toBeLessThan(500);
      }),
      { numRuns: 300, seed: 14 },
    );
    const seller = await newSeller();
    const tools = [...ALL_TOOLS.filter((t) => t !== "list_mcp_tools" && t !== "create_webhook"), "no_such_tool"];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...tools),
        fc.dictionary(
          fc.constantFrom(
            "title",
            "price_usd",
            "checkout_id",
            "checkout",
            "receipt_id",
            "calls",
            "limit",
            "cursor",
            "test_mode",
            "from",
            "days",
            "payload",
            "x",
          ),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        async (name, args) => {
          const r = await rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }, { authorization: `Bearer ${seller.key}` });
          statuses.add(r.status);
          expect({ name, args, status: r.status < 500 }).toEqual({ name, args, status: true });
          if (r.body?.error) expect(r.body.error.code).not.toBe(-32603);
        },
      ),
      { numRuns: 300, seed: 15 },
    );
    expect([...statuses].every((s) => [200, 202, 400, 413].includes(s))).toBe(true);
  });

  describe("the ledger, webhooks and a seller's own MCP server, through tools", () => {
    let server: FakeMcpServer;
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      server = await startFakeMcpServer({ tools: [{ name: "forecast", description: "Tomorrow's weather", inputSchema: { type: "object", properties: {} } }] });
      receiver = await startWebhookReceiver();
    });
    afterAll(async () => {
      await server.close();
      await receiver.close();
    });

    it("list_receipts and get_receipt answer what GET /v1/receipts and /v1/receipts/{id} answer", async () => {
      const seller = await newSeller();
      const checkout = await newCheckout(seller.key, { title: "Sold", price_usd: "0.10", reusable: true });
      const paid = await payRehearsal(checkout.id);
      const client = await sdkClient(seller.key);
      try {
        const listed = structured(await client.callTool({ name: "list_receipts", arguments: { test_mode: true, limit: 10 } }));
        expect(listed).toEqual((await call("GET", "/v1/receipts?test_mode=true&limit=10", { key: seller.key })).body);
        expect(listed.receipts.map((r: { id: string }) => r.id)).toEqual([paid.body.receipt.id]);
        expect(structured(await client.callTool({ name: "list_receipts", arguments: {} })).receipts).toEqual([]);
        const one = structured(await client.callTool({ name: "get_receipt", arguments: { receipt_id: paid.body.receipt.id } }));
        expect(one).toEqual((await call("GET", `/v1/receipts/${paid.body.receipt.id}`, { key: seller.key })).body);
        await expect(client.callTool({ name: "list_receipts", arguments: { from: "yesterday" } })).rejects.toMatchObject({
          code: -32602,
          data: { errors: [{ field: "from", reason: expect.stringContaining("ISO 8601") }] },
        });
      } finally {
        await client.close();
      }
    });

    it("a webhook sale: list_awaiting_fulfilment shows it until mark_fulfilled closes it; get_analytics sums it as GET /v1/analytics does", async () => {
      const seller = await newSeller();
      const checkout = await newCheckout(seller.key, { title: "Hand-made map", fulfillment: "webhook", payload: undefined, reusable: true });
      const paid = await payRehearsal(checkout.id);
      const id = paid.body.receipt.id as string;
      const client = await sdkClient(seller.key);
      try {
        const awaiting = structured(await client.callTool({ name: "list_awaiting_fulfilment", arguments: { limit: 5 } }));
        expect(awaiting).toEqual((await call("GET", "/v1/receipts/awaiting-fulfilment?limit=5", { key: seller.key })).body);
        expect(awaiting.receipts.map((r: { id: string }) => r.id)).toEqual([id]);
        expect(structured(await client.callTool({ name: "mark_fulfilled", arguments: { receipt_id: id } }))).toMatchObject({ id, already_fulfilled: false });
        expect(structured(await client.callTool({ name: "mark_fulfilled", arguments: { receipt_id: id } }))).toMatchObject({ id, already_fulfilled: true });
        expect(structured(await client.callTool({ name: "list_awaiting_fulfilment", arguments: {} })).receipts).toEqual([]);
        const analytics = structured(await client.callTool({ name: "get_analytics", arguments: { days: 7, test_mode: true } }));
        const { until: _until, ...rest } = (await call("GET", "/v1/analytics?days=7&test_mode=true", { key: seller.key })).body;
        expect(analytics).toMatchObject(rest);
        expect(analytics.earnings.per_checkout).toEqual([expect.objectContaining({ checkout_id: checkout.id })]);
        await expect(client.callTool({ name: "get_analytics", arguments: { days: 400 } })).rejects.toMatchObject({ code: -32602 });
      } finally {
        await client.close();
      }
    });

    it("create_webhook registers a receiver with a full key (its secret shown once), and list_mcp_tools asks the seller's server", async () => {
      const seller = await newSeller();
      const client = await sdkClient(seller.key);
      try {
        const hook = structured(await client.callTool({ name: "create_webhook", arguments: { url: `${receiver.url}/hook` } }));
        expect(hook).toMatchObject({ url: `${receiver.url}/hook`, events: ["checkout.paid"], secret: expect.stringMatching(/^whsec_/), rekeyed: false });
        expect((await call("GET", "/v1/webhooks", { key: seller.key })).body.webhooks.map((w: { id: string }) => w.id)).toEqual([hook.id]);
        const tools = structured(await client.callTool({ name: "list_mcp_tools", arguments: { origin_url: server.url } }));
        expect(tools).toEqual((await call("POST", "/v1/mcp/tools", { key: seller.key, body: { origin_url: server.url } })).body);
        expect(tools.tools.map((t: { name: string }) => t.name)).toEqual(["forecast"]);
      } finally {
        await client.close();
      }
      const payments = await call("POST", "/v1/keys", { key: seller.key, body: { scope: "payments" } });
      const lower = await sdkClient(payments.body.secret);
      try {
        await expect(lower.callTool({ name: "create_webhook", arguments: { url: `${receiver.url}/other` } })).rejects.toMatchObject({
          code: -32000,
          data: { status: 403, needed_scope: "full" },
        });
      } finally {
        await lower.close();
      }
    });
  });

  it("an agent with only a wallet goes from nothing to a live, paid checkout: wallet sign-in, then tools create, arm and quote it, and the official x402 client pays it", async () => {
    const chain = await devchainWallets(18);
    // Sign in with the wallet (no email, no dashboard): the first key, a test key.
    const wallet = privateKeyToAccount(generatePrivateKey());
    const challenge = await call("POST", "/auth/wallet/challenge", { body: { address: wallet.address, network: "eip155:8453" } });
    const signedIn = await call("POST", "/auth/wallet/verify", {
      body: { message: challenge.body.message, signature: await wallet.signMessage({ message: challenge.body.message }) },
    });
    expect(signedIn.status).toBe(201);
    const agent = await sdkClient(signedIn.body.api_key.secret);
    try {
      // A test key's checkout rehearses until go_live arms it.
      const created = structured(
        await agent.callTool({ name: "create_checkout", arguments: { title: "Agent forecast", price_usd: "0.10", payload: { temp_c: 19 } } }),
      );
      expect(created).toMatchObject({ test_mode: true, reusable: true, pay_to: wallet.address });
      expect(structured(await agent.callTool({ name: "quote_checkout", arguments: { checkout: created.url } })).endpoint).toMatchObject({
        settlement: "simulated",
      });
      expect(structured(await agent.callTool({ name: "go_live", arguments: { checkout_id: created.id } }))).toMatchObject({ test_mode: false });
      const quote = structured(await agent.callTool({ name: "quote_checkout", arguments: { checkout: created.url } }));
      expect(quote).toMatchObject({ face: "live", endpoint: { settlement: "onchain" }, offer: { total_usd: "0.110500" } });

      // A buyer's agent pays the live face with the official client; the seller's agent sees the receipt.
      const buyer = await chain.fundedBuyer(1_000_000n);
      const client = new x402Client();
      registerExactEvmScheme(client, { signer: buyer });
      const res = await wrapFetchWithPayment(fetch, client)(created.url, { headers: { accept: "application/json" } });
      expect(res.status).toBe(200);
      const bought = (await res.json()) as { fulfillment: { payload: unknown }; receipt: { id: string; tx_hash: string } };
      expect(bought.fulfillment.payload).toEqual({ temp_c: 19 });
      expect(await chain.balance(buyer.address)).toBe(1_000_000n - 110_500n);
      const receipt = structured(await agent.callTool({ name: "get_receipt", arguments: { receipt_id: bought.receipt.id } }));
      expect(receipt).toMatchObject({ id: bought.receipt.id, test_mode: false, tx_hash: bought.receipt.tx_hash, total: 110500 });
      // The seller's share went straight to its wallet in that transaction: one payout. A rehearsal is never one.
      expect((await payRehearsal(created.id)).status).toBe(200);
      const history = structured(await agent.callTool({ name: "get_payout_history", arguments: { limit: 10 } }));
      expect(history).toMatchObject({
        payouts: [
          {
            receipt_id: bought.receipt.id,
            checkout_id: created.id,
            pay_to: wallet.address,
            amount: 100000,
            amount_usd: "0.100000",
            tx_hash: bought.receipt.tx_hash,
          },
        ],
        has_more: false,
      });
    } finally {
      await agent.close();
    }
  });
});
