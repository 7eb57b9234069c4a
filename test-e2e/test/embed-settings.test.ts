import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { call, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * Embed settings (spec, Embedding): GET and PUT /v1/account/embed, the MCP
 * tools get_embed_settings and set_embed_settings, and what they decide: the
 * origins that may frame the seller's pay pages and receipts. Until one is
 * allowlisted nothing may. A real Chromium loads a seller's page on loopback
 * that frames the pay page: allowed from an allowlisted origin, refused from
 * another.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const html = { accept: "text/html" };

async function framing(path: string, headers: Record<string, string> = html) {
  const r = await call("GET", path, { headers });
  // A page's policy has more directives (its scripts and styles): framing is its frame-ancestors.
  const csp = r.headers.get("content-security-policy");
  return { csp: /(?:^|;\s*)(frame-ancestors [^;]*)/.exec(csp ?? "")?.[1] ?? csp, xfo: r.headers.get("x-frame-options") };
}

async function mcp(key: string, name: string, args: Record<string, unknown> = {}) {
  const r = await call("POST", "/mcp", { key, body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } } });
  return r.body as { result?: { structuredContent: any }; error?: { code: number; data: any } };
}

describe("embed settings", () => {
  it("starts with no origin; a PUT replaces the list (normalised, each once) and is recorded; scope full", async () => {
    const seller = await newSeller();
    expect((await call("GET", "/v1/account/embed", { key: seller.key })).body).toMatchObject({ object: "embed_settings", embed_origins: [] });

    const put = await call("PUT", "/v1/account/embed", {
      key: seller.key,
      body: { embed_origins: ["https://Shop.Example/", "http://localhost:5173", "https://shop.example"] },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ embed_origins: ["https://shop.example", "http://localhost:5173"], changed: true });
    expect((await call("GET", "/v1/account/embed", { key: seller.key })).body.embed_origins).toEqual(["https://shop.example", "http://localhost:5173"]);
    const again = await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: ["https://shop.example", "http://localhost:5173"] } });
    expect(again.body.changed).toBe(false);

    const events = (await call("GET", "/v1/account/events?action=embed", { key: seller.key })).body.events;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: "embed.updated",
      actor: expect.stringMatching(/^key:sk_test_/),
      detail: { embed_origins: ["https://shop.example", "http://localhost:5173"], before: [] },
    });

    const payments = await call("POST", "/v1/keys", { key: seller.key, body: { scope: "payments" } });
    expect((await call("PUT", "/v1/account/embed", { key: payments.body.secret, body: { embed_origins: [] } })).status).toBe(403);
    expect((await call("GET", "/v1/account/embed", { key: payments.body.secret })).status).toBe(200);
  });

  it("refuses wildcards, plain http off loopback, paths and non-origins, naming each entry (422)", async () => {
    const seller = await newSeller();
    const bad = [
      "https://*.shop.example",
      "http://shop.example",
      "https://shop.example/embed",
      "ftp://shop.example",
      "shop.example",
      "https://shop.example?x=1",
      "https://u:p@shop.example",
    ];
    const r = await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: ["https://ok.example", ...bad] } });
    expect(r.status).toBe(422);
    expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(bad.map((_, i) => `embed_origins[${i + 1}]`));
    expect(
      (await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: Array.from({ length: 21 }, (_, i) => `https://s${i}.example`) } }))
        .status,
    ).toBe(422);
    expect((await call("PUT", "/v1/account/embed", { key: seller.key, body: {} })).status).toBe(422);
    expect((await call("GET", "/v1/account/embed", { key: seller.key })).body.embed_origins).toEqual([]);
  });

  it("the allowlisted origins may frame the pay pages and receipts; JSON answers and other sellers' pages stay unframeable", async () => {
    const seller = await newSeller();
    const other = await newSeller();
    const checkout = await newCheckout(seller.key);
    const stranger = await newCheckout(other.key);
    const receipt = (await payRehearsal(checkout.id)).body.receipt.id as string;
    const none = { csp: "frame-ancestors 'none'", xfo: "DENY" };
    expect(await framing(`/c/${checkout.id}`)).toEqual(none);
    expect(await framing(`/r/${receipt}`)).toEqual(none);

    await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: ["https://shop.example", "http://localhost:5173"] } });
    const allowed = { csp: "frame-ancestors https://shop.example http://localhost:5173", xfo: null };
    expect(await framing(`/c/${checkout.id}`)).toEqual(allowed);
    expect(await framing(`/c/${checkout.id}/test`)).toEqual(allowed);
    expect(await framing(`/r/${receipt}`)).toEqual(allowed);
    expect(await framing(`/c/${checkout.id}`, { accept: "application/json" })).toEqual(none);
    expect(await framing(`/c/${stranger.id}`)).toEqual(none);

    // Taking them back takes effect at once.
    await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: [] } });
    expect(await framing(`/c/${checkout.id}`)).toEqual(none);
  });

  it("get_embed_settings and set_embed_settings are the same operations over MCP", async () => {
    const seller = await newSeller();
    const set = await mcp(seller.key, "set_embed_settings", { embed_origins: ["https://blog.example"] });
    expect(set.result?.structuredContent).toMatchObject({ object: "embed_settings", embed_origins: ["https://blog.example"], changed: true });
    expect((await mcp(seller.key, "get_embed_settings")).result?.structuredContent.embed_origins).toEqual(["https://blog.example"]);
    const refused = await mcp(seller.key, "set_embed_settings", { embed_origins: ["https://*.example"] });
    expect(refused.error).toMatchObject({ code: -32602, data: { status: 422, errors: [{ field: "embed_origins[0]" }] } });
    const readOnly = await call("POST", "/v1/keys", { key: seller.key, body: { scope: "read_only" } });
    expect((await mcp(readOnly.body.secret, "set_embed_settings", { embed_origins: [] })).error).toMatchObject({ data: { status: 403 } });
  });

  describe("in a real browser", () => {
    let browser: Browser;
    let site: Server;
    let siteOrigin: string;
    let frameUrl = "";
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
      // The seller's own site, on loopback: one page that frames a pay page.
      site = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>shop</title><iframe id="pay" src="${frameUrl}"></iframe>`);
      });
      await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
      siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => site?.close(resolve));
    });

    it("an allowlisted site shows the pay page in a frame; before that the browser refuses it", async () => {
      const seller = await newSeller();
      const checkout = await newCheckout(seller.key, { title: "Framed forecast" });
      frameUrl = checkout.url;
      const framedTitle = async () => {
        const page = await browser.newPage();
        try {
          await page.goto(siteOrigin);
          const frame = await (await page.waitForSelector("#pay")).contentFrame();
          await frame?.waitForLoadState();
          return (await frame?.title().catch(() => "")) ?? "";
        } finally {
          await page.close();
        }
      };
      expect(await framedTitle()).not.toContain("Framed forecast");
      await call("PUT", "/v1/account/embed", { key: seller.key, body: { embed_origins: [siteOrigin] } });
      expect(await framedTitle()).toContain("Framed forecast");
    });
  });
});
