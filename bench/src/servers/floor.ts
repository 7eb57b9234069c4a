/**
 * Child process: the floor of the fixed architecture for a relayed call, what
 * any design on the owner's card must do at the least for a package call and
 * nothing more. An Express route (the gateway) makes one gRPC unary call over
 * loopback (gateway → fulfillment, raw bytes, no protobuf) to a server in the
 * same process (the embedded mode's shape), whose handler fetches the origin
 * with a pooled undici Agent and answers its body; the route wraps it in JSON
 * as a package call's answer is. No authentication, no rate limit, no
 * database, no outbound guard: the ceiling a package call could reach here.
 */
import * as grpc from "@grpc/grpc-js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import { Agent, request } from "undici";
import { listenOnLoopback, serveChild } from "../lib/child";
import { express } from "../lib/untyped";

export interface FloorInfo {
  /** Like the proxy's: a request to url + path reaches origin + path. */
  url: string;
}

const bytes = (b: Buffer) => b;
const relayMethod = {
  path: "/bench.Floor/Relay",
  requestStream: false,
  responseStream: false,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
} as const;
const definition: grpc.ServiceDefinition = { relay: relayMethod };

serveChild<FloorInfo>(async () => {
  const origin = process.env.BENCH_ORIGIN_URL;
  if (!origin) throw new Error("BENCH_ORIGIN_URL is not set");
  const agent = new Agent();

  const server = new grpc.Server();
  server.addService(definition, {
    relay: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      request(`${origin}${call.request.toString()}`, { dispatcher: agent })
        .then(async (r) => done(null, Buffer.from(await r.body.arrayBuffer())))
        .catch((err: Error) => done({ code: grpc.status.UNAVAILABLE, details: err.message }));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());

  const app = express();
  app.disable("x-powered-by");
  app.use((req: IncomingMessage, res: ServerResponse) => {
    client.makeUnaryRequest(relayMethod.path, bytes, bytes, Buffer.from(req.url ?? "/"), (err, body) => {
      const answer = err || !body ? undefined : JSON.stringify({ fulfillment: { payload: JSON.parse(body.toString()) }, calls_remaining: 1 });
      res.writeHead(answer ? 200 : 502, { "content-type": "application/json" });
      res.end(answer ?? "{}");
    });
  });
  const served = await listenOnLoopback(createServer(app));
  return { ...served, stop: async () => (await served.stop(), client.close(), server.forceShutdown()) };
});
