import { createServer, type Server, type ServerResponse } from "node:http";
import type { Cache } from "@c402/cache";
import type { Logger } from "@c402/logging";
import { createGatewayApp } from "./app";
import { resolveUrls, type GatewaySettings } from "./config";
import { newFaceQuotes } from "./faces/answers";
import { faceFastPath } from "./faces/fast-path";
import { answerClientError } from "./http/client-error";
import type { ServiceClients } from "./http/deps";

export interface StartedGateway {
  server: Server;
  port: number;
  baseUrl: string;
  /** Stops accepting, lets the requests in flight finish (up to `graceMs`), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/**
 * How long a stopping gateway lets requests in flight finish before it cuts
 * them: well inside Kubernetes' 30 s grace, after the pod's 5 s preStop pause,
 * so the services behind it still have time to stop cleanly. A purchase cut
 * here resumes from its record (the settlement saga), it is never lost.
 */
export const HTTP_DRAIN_MS = 20_000;
/** While draining, keep-alive connections are closed as soon as they fall idle (checked this often). */
const IDLE_SWEEP_MS = 100;

/**
 * Binds first, then builds the app: with PORT=0 the base URL (used in every
 * link the service hands out) is only known once the port is.
 */
export async function startGateway(opts: {
  host: string;
  port: number;
  baseUrl?: string | undefined;
  siteUrl?: string | undefined;
  settings: Omit<GatewaySettings, "baseUrl" | "siteUrl">;
  clients: ServiceClients;
  cache: Cache;
  logger: Logger;
}): Promise<StartedGateway> {
  const server = createServer();
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  const urls = resolveUrls(opts, port);
  const quotes = newFaceQuotes();
  const app = createGatewayApp({ clients: opts.clients, cache: opts.cache, logger: opts.logger, settings: { ...opts.settings, ...urls } }, quotes);
  const fastPath = faceFastPath(quotes, opts.logger, urls);
  server.on("clientError", answerClientError(urls.siteUrl));
  // Responses not yet answered, so that a stop can tell their clients not to reuse the connection.
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  server.on("request", (req, res) => {
    inFlight.add(res);
    res.once("close", () => inFlight.delete(res));
    if (draining) res.setHeader("connection", "close");
    if (!fastPath(req, res)) app(req, res);
  });
  return {
    server,
    port,
    baseUrl: urls.baseUrl,
    close: (graceMs = HTTP_DRAIN_MS) =>
      new Promise<void>((resolve) => {
        draining = true;
        // A kept-alive connection would hold the close open until its keepAliveTimeout (65 s), past
        // any grace period: each answer in flight says "Connection: close", and idle ones are cut.
        for (const res of inFlight) if (!res.headersSent) res.setHeader("connection", "close");
        const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
        const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(deadline);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
