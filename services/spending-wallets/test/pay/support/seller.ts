import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Facilitator } from "@x402/core/facilitator";
import { x402ResourceServer, type FacilitatorClient } from "@x402/core/server";
import type { Network, SchemeNetworkServer, SupportedResponse } from "@x402/core/types";
import { paymentMiddleware } from "@x402/express";

/**
 * Someone else's x402 seller on loopback: an Express app guarded by the
 * official `@x402/express` middleware, whose facilitator is the official
 * `x402Facilitator` in process (with the chain's exact facilitator scheme
 * registered by the caller). Counts the requests that carried a payment.
 */

// Loose on purpose: express ships no types here and the middleware's types point at @types/express.
type Handler = (req: IncomingMessage & { headers: Record<string, string | undefined> }, res: ServerResponse & ExpressResponse, next: () => void) => unknown;
interface ExpressResponse {
  json(body: unknown): void;
  status(code: number): ExpressResponse;
  type(t: string): ExpressResponse;
  send(body: unknown): void;
}
interface ExpressApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(handler: unknown): ExpressApp;
  get(path: string, handler: Handler): ExpressApp;
  disable(setting: string): ExpressApp;
  listen(port: number, host: string, cb: () => void): Server;
}
const express: () => ExpressApp = require("express");

/** A paid route: what it accepts and what it answers once paid (default: JSON goods). */
export interface PaidRoute {
  path: string;
  accepts: {
    scheme: "exact";
    network: Network;
    payTo: string;
    price: { amount: string; asset: string; extra?: Record<string, unknown> };
    maxTimeoutSeconds?: number;
  };
  handler?: Handler;
}

/** A free route: answers without asking for payment. */
export interface FreeRoute {
  path: string;
  handler: Handler;
}

export interface Seller {
  url(path: string): string;
  /** Requests that arrived carrying PAYMENT-SIGNATURE or X-PAYMENT. */
  paidRequests: number;
  close(): Promise<void>;
}

/**
 * The official facilitator as the resource server's FacilitatorClient. A test
 * can make it refuse every payment at verify (`rejectWith`), or answer settle
 * with a failure without touching the chain (`failSettleWith`).
 */
export function inProcessFacilitator(facilitator: x402Facilitator, opts: { rejectWith?: string; failSettleWith?: string } = {}): FacilitatorClient {
  return {
    verify: async (payload, requirements) => (opts.rejectWith ? { isValid: false, invalidReason: opts.rejectWith } : facilitator.verify(payload, requirements)),
    settle: async (payload, requirements) =>
      opts.failSettleWith
        ? { success: false, errorReason: opts.failSettleWith, transaction: "", network: requirements.network }
        : facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

export async function startSeller(opts: {
  facilitator: FacilitatorClient;
  schemes: [Network, SchemeNetworkServer][];
  paid?: PaidRoute[];
  free?: FreeRoute[];
}): Promise<Seller> {
  const resourceServer = new x402ResourceServer(opts.facilitator);
  for (const [network, scheme] of opts.schemes) resourceServer.register(network, scheme);
  const seller = { paidRequests: 0 };
  const app = express();
  app.disable("x-powered-by");
  app.use((req: IncomingMessage, _res: ServerResponse, next: () => void) => {
    if (req.headers["payment-signature"] || req.headers["x-payment"]) seller.paidRequests++;
    next();
  });
  const routes = Object.fromEntries(
    (opts.paid ?? []).map((r) => [`GET ${r.path}`, { accepts: { maxTimeoutSeconds: 120, ...r.accepts }, description: "goods", mimeType: "application/json" }]),
  );
  app.use(paymentMiddleware(routes as never, resourceServer));
  for (const r of opts.paid ?? []) app.get(r.path, r.handler ?? ((_req, res) => res.json({ goods: "the paid answer", path: r.path })));
  for (const r of opts.free ?? []) app.get(r.path, r.handler);

  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return Object.assign(seller, {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}
