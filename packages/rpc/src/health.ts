import * as grpc from "@grpc/grpc-js";
import { service as healthDefinition, type ServingStatus } from "grpc-health-check";

export type { ServingStatus };

/** A client of the standard grpc.health.v1 service, as Kubernetes' gRPC probe and grpc_health_probe are. */
export interface GrpcHealthClient extends grpc.Client {
  check(req: { service: string }, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: { status: ServingStatus }) => void): void;
  watch(req: { service: string }): grpc.ClientReadableStream<{ status: ServingStatus }>;
}

export const GrpcHealthClient = grpc.makeGenericClientConstructor(healthDefinition as grpc.ServiceDefinition, "Health") as unknown as new (
  address: string,
  credentials: grpc.ChannelCredentials,
) => GrpcHealthClient;

/** What grpc.health.v1 Check answers for `service` ("" is the server as a whole); "UNREACHABLE" when it does not answer. */
export function grpcHealth(address: string, service = "", timeoutMs = 3_000): Promise<ServingStatus | "UNREACHABLE"> {
  const client = new GrpcHealthClient(address, grpc.credentials.createInsecure());
  return new Promise((resolve) =>
    client.check({ service }, { deadline: Date.now() + timeoutMs }, (err, res) => {
      client.close();
      resolve(err || !res ? "UNREACHABLE" : res.status);
    }),
  );
}

/** Waits until the server at `address` reports SERVING (as a readiness probe would), or fails after `timeoutMs`. */
export async function waitUntilServing(address: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = await grpcHealth(address, "", 1_000);
    if (status === "SERVING") return;
    if (Date.now() > until) throw new Error(`${address} is not serving after ${timeoutMs} ms (grpc.health.v1: ${status})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
