import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BaseError, createPublicClient, HttpRequestError, RpcRequestError, TimeoutError } from "viem";
import { jsonRpcTransport, RPC_CALL_CHANNEL } from "../src";

/** A fake JSON-RPC node on loopback whose answer per method the test decides. */
type Answer = (body: { id: number; method: string; params: unknown[] }, res: ServerResponse) => void;

describe("JSON-RPC transport (node:http, viem error classes)", () => {
  let server: Server;
  let base: string;
  const answers = new Map<string, Answer>();
  const seen: { method: string; url: string | undefined; auth: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let text = "";
      req.on("data", (c: Buffer) => (text += c.toString()));
      req.on("end", () => {
        const body = JSON.parse(text) as { id: number; method: string; params: unknown[] };
        seen.push({ method: body.method, url: req.url, auth: req.headers.authorization });
        const answer = answers.get(body.method);
        if (answer) return answer(body, res);
        res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: body.id, result: "0x10" }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const client = (url = `${base}/rpc/secret-api-key`, timeoutMs = 2_000) => createPublicClient({ transport: jsonRpcTransport(url, { timeoutMs }) });
  const chain = (err: unknown) => {
    const all: unknown[] = [];
    for (let e = err; e; e = (e as { cause?: unknown }).cause) all.push(e);
    return all;
  };

  it("sends JSON-RPC 2.0 to the URL's path with its credentials and returns the result", async () => {
    seen.length = 0;
    expect(await client(`http://user:p%40ss@127.0.0.1:${new URL(base).port}/rpc/k?x=1`).getBlockNumber({ cacheTime: 0 })).toBe(16n);
    expect(seen).toEqual([{ method: "eth_blockNumber", url: "/rpc/k?x=1", auth: `Basic ${Buffer.from("user:p@ss").toString("base64")}` }]);
  });

  it("raises a node's JSON-RPC error as RpcRequestError with its code and revert data, as viem's http transport does", async () => {
    answers.set("eth_call", (body, res) =>
      res
        .writeHead(200, { "Content-Type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: body.id, error: { code: 3, message: "execution reverted", data: "0x08c379a0" } })),
    );
    const err = await client()
      .call({ to: "0x0000000000000000000000000000000000000001", data: "0x" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BaseError);
    const rpc = chain(err).find((e) => e instanceof RpcRequestError) as RpcRequestError;
    expect(rpc).toMatchObject({ code: 3, data: "0x08c379a0" });
    expect(String((err as Error).message)).not.toContain("secret-api-key");
  });

  it("raises HttpRequestError with the status for an answer that is not JSON-RPC, without the URL's path", async () => {
    answers.set("eth_chainId", (_body, res) => res.writeHead(502, { "Content-Type": "text/plain" }).end("bad gateway"));
    const err = await client()
      .getChainId()
      .catch((e: unknown) => e);
    const http = chain(err).find((e) => e instanceof HttpRequestError) as HttpRequestError;
    expect(http).toMatchObject({ status: 502, url: base });
    expect(http.details).toContain("bad gateway");
    expect(String((err as Error).message)).not.toContain("secret-api-key");
  });

  it("raises TimeoutError when the node does not answer in time, and HttpRequestError when nothing listens", async () => {
    answers.set("eth_gasPrice", () => undefined);
    const slow = await client(undefined, 200)
      .getGasPrice()
      .catch((e: unknown) => e);
    expect(chain(slow).some((e) => e instanceof TimeoutError)).toBe(true);

    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await client(`http://127.0.0.1:${port}/`)
      .getBlockNumber({ cacheTime: 0 })
      .catch((e: unknown) => e);
    expect(chain(refused).some((e) => e instanceof HttpRequestError)).toBe(true);
  });

  it("keeps working across idle gaps longer than its timeout (pooled sockets)", async () => {
    answers.delete("eth_chainId");
    // A timeout a loaded machine still answers within, and a gap well past it (the socket outlives the timeout).
    const c = client(undefined, 1_000);
    seen.length = 0;
    expect(await c.getChainId()).toBe(16);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await c.getChainId()).toBe(16);
    expect(seen.map((s) => s.method)).toEqual(["eth_chainId", "eth_chainId"]);
  });

  it("publishes each call's method, duration and outcome on its diagnostics channel", async () => {
    const published: { method: string; ms: number; ok: boolean }[] = [];
    const listener = (m: unknown) => void published.push(m as (typeof published)[number]);
    subscribe(RPC_CALL_CHANNEL, listener);
    try {
      answers.delete("eth_chainId");
      await client().getChainId();
      answers.set("eth_chainId", (_body, res) => res.writeHead(500).end());
      await client()
        .getChainId()
        .catch(() => undefined);
    } finally {
      unsubscribe(RPC_CALL_CHANNEL, listener);
    }
    expect(published).toEqual([
      { method: "eth_chainId", ms: expect.any(Number), ok: true },
      { method: "eth_chainId", ms: expect.any(Number), ok: false },
    ]);
  });
});
