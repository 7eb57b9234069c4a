/**
 * Child process: the baseline of the package-calls run, a plain Express
 * reverse proxy (http-proxy-middleware) forwarding every request to the
 * bench's origin, and nothing else: no auth, no logging, no accounting.
 */
import { createProxyMiddleware } from "http-proxy-middleware";
import { Agent, createServer } from "node:http";
import { listenOnLoopback, serveChild } from "../lib/child";
import { express } from "../lib/untyped";

export interface ProxyInfo {
  /** The proxy's base, without a path: a request to url + path reaches origin + path. */
  url: string;
}

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

serveChild<ProxyInfo>(async () => {
  const app = express();
  app.disable("x-powered-by");
  // Without an agent, http-proxy opens a new connection per request (it sends `connection: close`).
  // Ours reaches origins through a pooled undici Agent, so the baseline keeps its sockets too.
  app.use(createProxyMiddleware({ target: env("BENCH_ORIGIN_URL"), agent: new Agent({ keepAlive: true }) }));

  return listenOnLoopback(createServer(app));
});
