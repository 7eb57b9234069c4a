import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a fake origin received. */
export interface OriginCall {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface FakeOrigin {
  /** http://127.0.0.1:<port> */
  url: string;
  calls: OriginCall[];
  /** The calls made to one path. */
  callsTo(path: string): OriginCall[];
  close(): Promise<void>;
}

/**
 * A seller's HTTP API on loopback, for relay tests. Paths:
 *   /echo            200 JSON of what it received (method, query, body, the credential headers)
 *   /text            200 text/plain
 *   /html            200 text/html naming the query it received (a relay article)
 *   /binary          200 application/octet-stream (bytes 0..255)
 *   /status/<code>   that status, with a JSON body naming it
 *   /slow/<ms>       200 JSON after <ms> milliseconds
 *   /redirect/<code> that redirect status to the URL in the query's `to` (an open redirect)
 *   /never           never answers
 *   /stall           200 and the first bytes of a JSON body, then nothing more
 *   /trickle         200 and one byte of body every 200 ms, without end
 * Every request is recorded in `calls`.
 */
export async function startFakeOrigin(): Promise<FakeOrigin> {
  const calls: OriginCall[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://origin.test");
      const call: OriginCall = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      calls.push(call);
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      const [, first, second] = url.pathname.split("/");
      if (first === "echo") {
        return json(200, {
          method: call.method,
          query: call.query,
          body: call.body === "" ? null : (JSON.parse(call.body) as unknown),
          authorization: req.headers.authorization ?? null,
          x_api_key: req.headers["x-api-key"] ?? null,
        });
      }
      if (first === "text") {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        return res.end("sunny, 21 °C");
      }
      if (first === "html") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        return res.end(
          `<h2>From the origin</h2><p>${Object.entries(call.query)
            .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
            .join("&")}</p>`,
        );
      }
      if (first === "binary") {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        return res.end(Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
      }
      if (first === "status") return json(Number(second), { error: `status ${second}`, query: call.query });
      if (first === "slow") {
        const timer = setTimeout(() => json(200, { slow: true }), Number(second));
        res.on("close", () => clearTimeout(timer));
        return;
      }
      if (first === "redirect") return void res.writeHead(Number(second), { location: call.query.to ?? "/" }).end();
      if (first === "never") return;
      if (first === "stall") {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.write('{"partial":');
      }
      if (first === "trickle") {
        res.writeHead(200, { "content-type": "text/plain" });
        const timer = setInterval(() => res.write("."), 200);
        res.on("close", () => clearInterval(timer));
        return;
      }
      json(404, { error: "no such path" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    callsTo: (path) => calls.filter((c) => c.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
