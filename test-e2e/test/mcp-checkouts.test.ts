import { startFakeMcpServer, type FakeMcpServer } from "@c402/testkit/fake-mcp-server";
import { encodeHeader, signExactEvmPayment, type PaymentRequirements } from "@c402/x402";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devchainWallets } from "../src/devchain";
import { baseUrl, call, decoded, newCheckout, newSeller } from "../src/http";

/**
 * mcp checkouts over the running services: a seller's MCP server (built with
 * the official SDK, answering JSON or an event stream) on loopback; the
 * service calls one tool per payment with the official client (initialize,
 * then tools/call), paid only on delivery, on both faces.
 */

const buyer = privateKeyToAccount(generatePrivateKey());
const TOKEN = "mcp-server-token-8Hc";

async function signed(path: string) {
  const r = await call("GET", path.split("?")[0] as string);
  expect(r.status).toBe(402);
  const required = decoded(r.headers.get("payment-required"));
  return encodeHeader(await signExactEvmPayment(buyer, required.accepts[0] as PaymentRequirements, { resourceUrl: required.resource.url }));
}
const pay = async (path: string) => call("GET", path, { headers: { "PAYMENT-SIGNATURE": await signed(path) } });
const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

describe.each([
  ["application/json", true],
  ["text/event-stream", false],
])("mcp checkouts (server answers %s)", (_label, json) => {
  let server: FakeMcpServer;
  let seller: Awaited<ReturnType<typeof newSeller>>;
  const mcp = (body: Record<string, unknown>) =>
    newCheckout(seller.key, { title: "Forecast tool", price_usd: "0.05", payload: undefined, reusable: true, origin_url: server.url, ...body });

  beforeAll(async () => {
    server = await startFakeMcpServer({
      json,
      requireHeader: { name: "Authorization", value: `Bearer ${TOKEN}` },
      tools: [
        { name: "forecast", inputSchema: { type: "object", properties: { city: { type: "string" } } }, answer: (a) => `sunny in ${String(a.city)}` },
        {
          name: "strict",
          inputSchema: { type: "object" },
          answer: (a) => ("id" in a ? "ok" : { invalidParams: "id is required" }),
        },
        { name: "broken", inputSchema: { type: "object" }, answer: () => ({ error: "upstream weather API down" }) },
      ],
    });
    seller = await newSeller();
  });
  afterAll(() => server.close());

  it("creates a per-tool checkout from mcp_tool (fulfillment inferred, POST), and a whole-server one from fulfillment mcp", async () => {
    const perTool = await mcp({ mcp_tool: "forecast", origin_auth_type: "bearer", origin_auth_value: TOKEN });
    expect(perTool).toMatchObject({
      fulfillment: "mcp",
      mcp_tool: "forecast",
      origin_url: server.url,
      origin_method: "POST",
      origin_auth_value: null,
      origin_auth_stored: true,
    });
    const whole = await mcp({ fulfillment: "mcp", origin_auth_type: "bearer", origin_auth_value: TOKEN });
    expect(whole).toMatchObject({ fulfillment: "mcp", mcp_tool: null, origin_method: "POST" });
    const wrong = await call("POST", "/v1/checkouts", {
      key: seller.key,
      body: { title: "x", price_usd: "0.05", origin_url: server.url, mcp_tool: "forecast", origin_method: "GET" },
    });
    expect([wrong.status, wrong.body.errors]).toEqual([422, [{ field: "origin_method", reason: expect.stringContaining("POST") }]]);
  });

  it("a per-tool checkout calls its tool with the buyer's arguments, answers the result and the receipt, and refuses another tool before anything is charged", async () => {
    const c = await mcp({ mcp_tool: "forecast", origin_auth_type: "bearer", origin_auth_value: TOKEN });
    const before = server.toolCalls.length;
    const r = await pay(`/c/${c.id}/test?${query({ arguments: JSON.stringify({ city: "Oslo" }) })}`);
    expect(r.status).toBe(200);
    expect(r.body.fulfillment).toEqual({
      mode: "mcp",
      origin_status: 200,
      content_type: "application/json",
      payload: { content: [{ type: "text", text: "sunny in Oslo" }] },
    });
    expect(r.body.receipt).toMatchObject({ test_mode: true, delivery: { outcome: "delivered", status: 200 } });
    expect(server.toolCalls.slice(before)).toEqual([{ name: "forecast", arguments: { city: "Oslo" } }]);

    const other = await pay(`/c/${c.id}/test?${query({ tool: "strict" })}`);
    expect([other.status, other.body.errors]).toEqual([422, [{ field: "params.tool", reason: "this checkout sells the tool forecast only" }]]);
    const notObject = await pay(`/c/${c.id}/test?${query({ arguments: "[1]" })}`);
    expect([notObject.status, notObject.body.errors]).toEqual([422, [{ field: "params.arguments", reason: "must be a JSON object" }]]);
    const stray = await pay(`/c/${c.id}/test?${query({ city: "Oslo" })}`);
    expect([stray.status, stray.body.errors?.[0]?.field]).toEqual([422, "params.city"]);
    expect(server.toolCalls.length).toBe(before + 1);
  });

  it("a whole-server checkout needs tool=, and follows the charge table: invalid arguments charged (422), a tool error or a refused credential not (502)", async () => {
    const c = await mcp({ fulfillment: "mcp", origin_auth_type: "bearer", origin_auth_value: TOKEN });
    const none = await pay(`/c/${c.id}/test`);
    expect([none.status, none.body.errors?.[0]?.field]).toEqual([422, "params.tool"]);
    const chosen = await pay(`/c/${c.id}/test?${query({ tool: "forecast", arguments: JSON.stringify({ city: "Rome" }) })}`);
    expect([chosen.status, chosen.body.fulfillment.payload]).toEqual([200, { content: [{ type: "text", text: "sunny in Rome" }] }]);

    const invalid = await pay(`/c/${c.id}/test?${query({ tool: "strict" })}`);
    expect(invalid.status).toBe(422);
    expect(invalid.body).toMatchObject({
      fulfillment: { mode: "mcp", origin_status: 422, payload: { error: { code: -32602 } } },
      receipt: { delivery: { outcome: "buyer_error", status: 422 } },
      fault: "buyer",
    });
    const broken = await pay(`/c/${c.id}/test?${query({ tool: "broken" })}`);
    expect([broken.status, broken.body.fault, broken.body.reason, broken.body.charged]).toEqual([502, "seller", "tool_error", false]);

    const noCredential = await mcp({ fulfillment: "mcp" });
    const refused = await pay(`/c/${noCredential.id}/test?${query({ tool: "forecast" })}`);
    expect([refused.status, refused.body.reason, refused.body.origin_status]).toEqual([502, "origin_refused_credential", 401]);

    const gone = await startFakeMcpServer({ tools: [] });
    await gone.close();
    const down = await newCheckout(seller.key, { title: "Down", price_usd: "0.05", payload: undefined, origin_url: gone.url, mcp_tool: "forecast" });
    const unreachable = await pay(`/c/${down.id}/test`);
    expect([unreachable.status, unreachable.body.reason, unreachable.body.charged]).toEqual([502, "unreachable", false]);
  });

  it("the official client pays a live per-tool checkout on the devchain; a tool error moves no money", async () => {
    const chain = await devchainWallets(json ? 12 : 9);
    const liveBuyer = await chain.fundedBuyer(1_000_000n);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: liveBuyer });
    const paidFetch = wrapFetchWithPayment(fetch, client);
    const good = await mcp({ mcp_tool: "forecast", origin_auth_type: "bearer", origin_auth_value: TOKEN, test_mode: false });
    const res = await paidFetch(`${baseUrl()}/c/${good.id}?${query({ arguments: JSON.stringify({ city: "Lima" }) })}`, {
      headers: { accept: "application/json" },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { fulfillment: { payload: unknown }; receipt: { total: number; test_mode: boolean } };
    expect(body.fulfillment.payload).toEqual({ content: [{ type: "text", text: "sunny in Lima" }] });
    expect(body.receipt).toMatchObject({ test_mode: false });
    expect(await chain.balance(liveBuyer.address)).toBe(1_000_000n - BigInt(body.receipt.total));

    const broken = await mcp({ mcp_tool: "broken", origin_auth_type: "bearer", origin_auth_value: TOKEN, test_mode: false });
    const failed = await paidFetch(`${baseUrl()}/c/${broken.id}`, { headers: { accept: "application/json" } });
    expect(failed.status).toBe(502);
    expect(await chain.balance(liveBuyer.address)).toBe(1_000_000n - BigInt(body.receipt.total));
  });
});
