import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One POST a receiver got: the raw body (what signatures cover) and its headers. */
export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  at: number;
  /** What the receiver answered (after `behave` chose). */
  answered: string;
}

/**
 * What the receiver does with the next request: a status (with headers), a
 * hang past the sender's timeout, a reset connection, or a redirect.
 */
export type ReceiverBehaviour =
  { status: number; headers?: Record<string, string> } | { hangMs: number } | { reset: true } | { redirectTo: string; status?: 301 | 302 | 307 | 308 };

export interface WebhookReceiver {
  /** http://127.0.0.1:<port> */
  url: string;
  received: ReceivedDelivery[];
  /** Chooses the answer to each request, in order; default 200. Replace it at any time. */
  behave: (req: { path: string; headers: IncomingHttpHeaders; rawBody: string; n: number }) => ReceiverBehaviour;
  /** Resolves once `count` requests arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/** A seller's webhook receiver on loopback for delivery tests: records every POST and answers as told. */
export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  const receiver: WebhookReceiver = {
    url: "",
    received,
    behave: () => ({ status: 200 }),
    waitFor(count, timeoutMs = 30_000) {
      if (received.length >= count) return Promise.resolve(received.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`webhook receiver: ${received.length} of ${count} deliveries after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received.slice());
          },
        });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const answer = (res: ServerResponse, b: ReceiverBehaviour): string => {
    if ("reset" in b) {
      res.socket?.destroy();
      return "reset";
    }
    if ("hangMs" in b) {
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200).end();
      }, b.hangMs);
      return `hang ${b.hangMs}`;
    }
    if ("redirectTo" in b) {
      res.writeHead(b.status ?? 302, { location: b.redirectTo }).end();
      return `redirect ${b.status ?? 302}`;
    }
    res.writeHead(b.status, { "content-type": "text/plain", ...b.headers }).end(String(b.status));
    return String(b.status);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      const behaviour = receiver.behave({ path, headers: req.headers, rawBody, n: received.length });
      received.push({ path, headers: req.headers, rawBody, at: Date.now(), answered: answer(res, behaviour) });
      for (const w of waiters.splice(0)) {
        if (received.length >= w.count) w.resolve();
        else waiters.push(w);
      }
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
