import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * How answers are lost once a transaction was broadcast through the proxy:
 * - `reset`: each answer from the node is replaced by a dropped connection;
 * - `silence`: each answer is withheld (the caller's own timeout fires).
 * The requests themselves still reach the node: the return path is what fails.
 */
export type AnswerFault = "reset" | "silence";

export interface RpcFaultProxy {
  url: string;
  /** From the next `eth_sendRawTransaction` on (that one included), lose every answer this way. */
  loseAnswersAfterBroadcast(fault: AnswerFault): void;
  /** From now on, never forward an `eth_sendRawTransaction`: the connection is dropped, the transaction never reaches the node. */
  dropBroadcasts(): void;
  /** Answer normally again (withheld answers are dropped). */
  heal(): void;
  /** Requests forwarded and answers lost since the start. */
  readonly counts: { forwarded: number; lost: number };
  close(): Promise<void>;
}

/**
 * A TCP-level fault proxy in front of a JSON-RPC node, on loopback (G7): it
 * forwards every request and, when armed, loses the node's answers after a
 * broadcast, so the caller cannot tell whether its transaction is on-chain.
 */
export async function startRpcFaultProxy(upstreamUrl: string): Promise<RpcFaultProxy> {
  const upstream = new URL(upstreamUrl);
  let armed: AnswerFault | undefined;
  let losing: AnswerFault | undefined;
  let dropping = false;
  const withheld = new Set<ServerResponse>();
  const counts = { forwarded: 0, lost: 0 };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (dropping && body.includes('"eth_sendRawTransaction"')) {
        counts.lost++;
        res.socket?.destroy();
        return;
      }
      if (armed && body.includes('"eth_sendRawTransaction"')) {
        losing = armed;
        armed = undefined;
      }
      counts.forwarded++;
      const forward = request(
        {
          hostname: upstream.hostname,
          port: upstream.port,
          path: upstream.pathname,
          method: "POST",
          headers: { "content-type": "application/json", "content-length": body.length },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (c: Buffer) => parts.push(c));
          answer.on("end", () => {
            if (losing === "reset") {
              counts.lost++;
              res.socket?.destroy();
              return;
            }
            if (losing === "silence") {
              counts.lost++;
              withheld.add(res);
              return;
            }
            res.writeHead(answer.statusCode ?? 502, { "content-type": answer.headers["content-type"] ?? "application/json" }).end(Buffer.concat(parts));
          });
        },
      );
      forward.on("error", () => res.socket?.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const heal = () => {
    dropping = false;
    armed = undefined;
    losing = undefined;
    for (const res of withheld) res.socket?.destroy();
    withheld.clear();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    loseAnswersAfterBroadcast(fault) {
      armed = fault;
    },
    dropBroadcasts() {
      dropping = true;
    },
    heal,
    async close() {
      heal();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
