import { RpcError, serveJsonRpc, type RunningRpcServer } from "../src";

async function call(url: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return res.json();
}

describe("a JSON-RPC server with named params", () => {
  let server: RunningRpcServer;

  beforeAll(async () => {
    server = await serveJsonRpc(
      {
        echo: (params) => ({ got: params }),
        refuse: () => {
          throw new RpcError(-32602, "no", { why: "asked to" });
        },
        crash: () => {
          throw new Error("a bug");
        },
      },
      { params: "named", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, maxBatchRequests: 2 },
    );
  });

  afterAll(() => server.close());

  it("passes an object's params, and {} for none", async () => {
    expect(await call(server.url, { jsonrpc: "2.0", id: 1, method: "echo", params: { hash: "ab" } })).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { got: { hash: "ab" } },
    });
    expect(await call(server.url, { jsonrpc: "2.0", id: 2, method: "echo" })).toEqual({ jsonrpc: "2.0", id: 2, result: { got: {} } });
  });

  it("refuses positional params, and answers errors with their codes", async () => {
    expect(await call(server.url, { jsonrpc: "2.0", id: 1, method: "echo", params: ["ab"] })).toMatchObject({ id: 1, error: { code: -32602 } });
    expect(await call(server.url, { jsonrpc: "2.0", id: 2, method: "refuse" })).toMatchObject({
      id: 2,
      error: { code: -32602, message: "no", data: { why: "asked to" } },
    });
    expect(await call(server.url, { jsonrpc: "2.0", id: 3, method: "crash" })).toMatchObject({ id: 3, error: { code: -32603, message: "Internal error" } });
    expect(await call(server.url, { jsonrpc: "2.0", id: 4, method: "nope" })).toMatchObject({ id: 4, error: { code: -32601 } });
  });

  it("answers batches in order, up to the limit", async () => {
    const batch = [1, 2].map((id) => ({ jsonrpc: "2.0", id, method: "echo", params: { id } }));
    expect(await call(server.url, batch)).toEqual([1, 2].map((id) => ({ jsonrpc: "2.0", id, result: { got: { id } } })));
    expect(await call(server.url, [...batch, ...batch])).toMatchObject({ error: { code: -32600 } });
  });

  it("binds loopback only", () => {
    expect(() => serveJsonRpc({}, { host: "0.0.0.0", port: 0, maxBodyBytes: 1024, maxBatchRequests: 1 })).toThrow(/loopback only/);
  });
});
