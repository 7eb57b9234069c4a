/**
 * Child process: the seller's origin of the package-calls and relay runs, a
 * bare node:http server on a free loopback port answering every GET at once
 * with a small JSON body that echoes the `city` query parameter. Our relay
 * checkouts and the plain reverse proxy both forward to this one process, so
 * the origin's own cost is the same on both sides.
 */
import { createServer, type Server } from "node:http";
import { listenOnLoopback, serveChild } from "../lib/child";

export interface OriginInfo {
  /** The origin's base, without a path (e.g. http://127.0.0.1:40123). */
  url: string;
}

export const ORIGIN_PATH = "/weather";

serveChild<OriginInfo>(async () => {
  const server: Server = createServer((req, res) => {
    const city = new URL(req.url ?? "/", "http://origin").searchParams.get("city") ?? "unknown";
    const body = JSON.stringify({ city, temp_c: 21 });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
  return listenOnLoopback(server);
});
