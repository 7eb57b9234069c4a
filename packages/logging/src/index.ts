import { Writable } from "node:stream";
import { currentContext, traceIdOf } from "@c402/request-context";
import pino, { type Logger } from "pino";

export type { Logger };

/** Paths that may carry secrets; pino replaces their values before writing. */
export const REDACTED_PATHS = [
  "authorization",
  "headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['x-payment']",
  "req.headers['payment-signature']",
  "secret",
  "*.secret",
  "password",
  "*.password",
  "token",
  "*.token",
  "privateKey",
  "*.privateKey",
  "signature",
  "*.signature",
];

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where to write; defaults to stdout. Tests pass a stream to inspect output. */
  destination?: pino.DestinationStream;
}

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level ?? process.env.LOG_LEVEL ?? "info",
      base: { service: opts.service },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Every line written while a request is served names it, in whichever service writes it.
      mixin: () => {
        const context = currentContext();
        if (!context) return {};
        return { request_id: context.requestId, ...(context.traceparent ? { trace_id: traceIdOf(context.traceparent) } : {}) };
      },
    },
    opts.destination,
  );
}

/** A logger whose lines are kept in memory (one JSON text each), for tests that read what was logged. */
export function createCapturingLogger(opts: Omit<LoggerOptions, "destination">): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ ...opts, destination }), lines };
}
