import { request } from "node:https";

/**
 * One JSON-RPC call (named params) to a stand-in in another process, over HTTPS trusting its test CA (`caPem`)
 * for this call only: how scripts and e2e suites use its `standin_*` cheats and reads. A JSON-RPC error rejects
 * with its message and `code`.
 */
export function callStandin<T = unknown>(url: string, caPem: string, method: string, params: Record<string, unknown> = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", ca: caPem, headers: { "content-type": "application/json" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { result?: T; error?: { code: number; message: string } };
          if (body.error) reject(Object.assign(new Error(`${method}: ${body.error.message}`), { code: body.error.code }));
          else resolve(body.result as T);
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }));
  });
}
