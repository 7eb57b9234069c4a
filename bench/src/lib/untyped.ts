/**
 * autocannon and express ship no type declarations and their @types packages
 * are not installed here (an ambient `declare module "express"` would shadow
 * the real types the gateway compiles against), so the bench loads them with
 * require() behind the few signatures it uses.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";

export interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
  method?: "GET";
}

export interface Percentiles {
  average: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  total: number;
}

export interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  latency: Percentiles & { totalCount: number };
  requests: Percentiles & { sent: number };
}

export const autocannon: (opts: AutocannonOptions) => Promise<AutocannonResult> = require("autocannon");

// Loose on purpose: the official middleware is typed against @types/express, which this package does not see.
type Handler = (req: any, res: any, next: any) => unknown;

export interface ExpressApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(handler: Handler): ExpressApp;
  get(path: string, handler: Handler): ExpressApp;
  disable(setting: string): ExpressApp;
  listen(port: number, host: string, cb: () => void): Server;
}

export const express: () => ExpressApp = require("express");
