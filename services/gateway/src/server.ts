import { createServer, type Server } from "node:http";
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
  close(): Promise<void>;
}

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
  server.on("request", (req, res) => {
    if (!fastPath(req, res)) app(req, res);
  });
  return {
    server,
    port,
    baseUrl: urls.baseUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
