import { healthV1 } from "@c402/contracts";
import * as grpc from "@grpc/grpc-js";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { grpcHealth, GrpcHealthClient, RpcServer, waitUntilServing } from "../src";

/** The service this test's server carries (our own dependency report, beside the standard one). */
const SERVICE = "health.v1.HealthService";

describe("grpc.health.v1 on every RpcServer (Kubernetes' native gRPC probes)", () => {
  let server: RpcServer;
  let client: GrpcHealthClient;
  let address: string;
  const check = (service: string) => grpcHealth(address, service);

  beforeEach(async () => {
    server = new RpcServer();
    server.add(healthV1.HealthService, { check: () => Promise.reject(new Error("not called by this test")) });
    address = `127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
    client = new GrpcHealthClient(address, grpc.credentials.createInsecure());
  });

  afterEach(async () => {
    client.close();
    await server.stop(200);
  });

  it("answers NOT_SERVING until the service has started, then SERVING, for the server and for each service", async () => {
    expect(await check("")).toBe("NOT_SERVING");
    expect(await check(SERVICE)).toBe("NOT_SERVING");
    server.serving();
    expect(await check("")).toBe("SERVING");
    expect(await check(SERVICE)).toBe("SERVING");
  });

  it("answers NOT_FOUND for a service this server does not serve", async () => {
    server.serving();
    const answer = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.check({ service: "payments.v1.PaymentsService" }, {}, (err) => resolve(err)),
    );
    expect(answer).toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("waitUntilServing waits for SERVING, and gives up with the status it last saw", async () => {
    await expect(waitUntilServing(address, 300)).rejects.toThrow(/not serving after 300 ms \(grpc.health.v1: NOT_SERVING\)/);
    setTimeout(() => server.serving(), 300);
    await waitUntilServing(address, 5_000);
    expect(await check("")).toBe("SERVING");
    await expect(waitUntilServing("127.0.0.1:1", 300)).rejects.toThrow(/UNREACHABLE/);
  });

  it("turns NOT_SERVING the moment the server starts to stop, before in-flight calls finish", async () => {
    server.serving();
    const seen: string[] = [];
    const watch = client.watch({ service: "" });
    const notServing = new Promise<void>((resolve) =>
      watch.on("data", (m: { status: string }) => {
        seen.push(m.status);
        if (m.status === "NOT_SERVING") resolve();
      }),
    );
    watch.on("error", () => undefined);
    await new Promise((r) => setTimeout(r, 50));
    const stopped = server.stop(200);
    await notServing;
    expect(seen).toEqual(["SERVING", "NOT_SERVING"]);
    watch.cancel();
    await stopped;
  });
});

describe("bin/grpc-health-probe.cjs (compose's health check)", () => {
  const probe = (address: string) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, [join(__dirname, "../bin/grpc-health-probe.cjs"), address], (err, stdout) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, out: stdout }),
      ),
    );

  it("exits 0 only while the server reports SERVING", async () => {
    const server = new RpcServer();
    const port = await server.listen("127.0.0.1", 0);
    try {
      expect(await probe(`127.0.0.1:${port}`)).toEqual({ code: 1, out: `127.0.0.1:${port} (server): NOT_SERVING\n` });
      server.serving();
      expect(await probe(`127.0.0.1:${port}`)).toEqual({ code: 0, out: `127.0.0.1:${port} (server): SERVING\n` });
    } finally {
      await server.stop(200);
    }
    const closed = await probe(`127.0.0.1:${port}`);
    expect(closed.code).toBe(1);
    expect(closed.out).toMatch(/error/);
  });
});
