/**
 * Child process: the seller's webhook receiver of bench/src/webhooks.ts, a
 * bare node:http server on a free loopback port. Every POST is read whole,
 * answered 200 at once, and reported to the parent over IPC as
 * `{ type: "arrival", paymentId, deliveryId, at }`, where `at` is when its
 * body had arrived, on the clock the parent uses too
 * (performance.timeOrigin + performance.now(): wall-clock milliseconds with
 * a fraction). It runs apart from the load generator so the two never share
 * an event loop.
 *
 * `{ type: "down" }` closes the server and every open connection (new
 * connections are refused) and answers `{ type: "down-done", at }`;
 * `{ type: "up" }` listens again on the same port and answers
 * `{ type: "up-done", at }` (or `{ type: "up-failed", error }`).
 */
import { createServer, type Server } from "node:http";
import { performance } from "node:perf_hooks";
import { freePort, serveChild } from "../lib/child";

export interface ReceiverInfo {
  /** Where deliveries are to be sent (http://127.0.0.1:<port>/hook). */
  url: string;
  port: number;
}

export const RECEIVER_PATH = "/hook";

export interface Arrival {
  type: "arrival";
  /** data.payment_id of a checkout.paid event ("" for any other body). */
  paymentId: string;
  /** The webhook-id header: the delivery, the same on every attempt of it. */
  deliveryId: string;
  at: number;
}

export type ReceiverMessage = Arrival | { type: "down-done"; at: number } | { type: "up-done"; at: number } | { type: "up-failed"; error: string };

const clock = () => performance.timeOrigin + performance.now();
const send = (m: ReceiverMessage) => process.send?.(m);

function receiver(): Server {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = clock();
      let paymentId = "";
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data?: { payment_id?: unknown } };
        if (typeof body.data?.payment_id === "string") paymentId = body.data.payment_id;
      } catch {
        // not JSON: reported with no payment id
      }
      res.writeHead(200, { "content-length": 0 });
      res.end();
      const deliveryId = req.headers["webhook-id"];
      send({ type: "arrival", paymentId, deliveryId: typeof deliveryId === "string" ? deliveryId : "", at });
    });
  });
  server.keepAliveTimeout = 65_000;
  return server;
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    // Kept-alive sockets too: the dispatcher must find the receiver gone, not a pooled connection to it.
    server.closeAllConnections();
  });
}

serveChild<ReceiverInfo>(async () => {
  const port = await freePort();
  let server = receiver();
  await listen(server, port);
  process.on("message", (m: { type?: string }) => {
    if (m?.type === "down") {
      void close(server).then(() => send({ type: "down-done", at: clock() }));
    } else if (m?.type === "up") {
      void (async () => {
        // Another socket may have taken the port meanwhile (rare): try again for up to 10 s.
        for (let tries = 0; ; tries++) {
          server = receiver();
          try {
            await listen(server, port);
            send({ type: "up-done", at: clock() });
            return;
          } catch (err) {
            if (tries >= 100) {
              send({ type: "up-failed", error: err instanceof Error ? err.message : String(err) });
              return;
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      })();
    }
  });
  return { info: { url: `http://127.0.0.1:${port}${RECEIVER_PATH}`, port }, stop: () => close(server) };
});
