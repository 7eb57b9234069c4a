import { healthV1, schedulesV1 } from "@c402/contracts";
import { callerDigest, createClient, formatCallers, grpcHealth, parseCallers, RpcServer, type CallContext, type ServiceImplementation } from "../src";

/**
 * Only the callers a server lists get past it: each presents its own
 * RPC_TOKEN, the server holds only the tokens' digests. So a pod that is not
 * the gateway cannot call payments (FacilitatorSettle included), and a
 * compromised server learns no token it could present elsewhere.
 */
const GATEWAY_TOKEN = "a".repeat(20) + "gateway-token-0123456789";
const CATALOG_TOKEN = "c".repeat(20) + "catalog-token-0123456789";

describe("gRPC callers: per-process tokens checked against the server's list", () => {
  let server: RpcServer;
  let address: string;
  const seen: CallContext[] = [];

  beforeAll(async () => {
    // payments-like: only the gateway may call it.
    server = new RpcServer({ callers: parseCallers(formatCallers({ gateway: GATEWAY_TOKEN })) });
    server.add(healthV1.HealthService, {
      check: async (_req, ctx) => {
        seen.push(ctx);
        return { service: "payments", components: [] };
      },
    });
    address = `127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
    server.serving();
  });
  afterAll(() => server.stop(200));

  const ask = async (token?: string, inProcess = false) => {
    const client = createClient(healthV1.HealthService, inProcess ? server.inProcess() : address, token === undefined ? {} : { token });
    try {
      return await client.check({});
    } finally {
      client.close();
    }
  };

  // In process (embedded mode) as over the network: the token is checked all the same.
  it.each([false, true])("serves a listed caller and names it in the call context (in process: %s)", async (inProcess) => {
    await expect(ask(GATEWAY_TOKEN, inProcess)).resolves.toMatchObject({ service: "payments" });
    expect(seen.at(-1)?.caller).toBe("gateway");
  });

  it.each([false, true])(
    "refuses, before the handler runs, a call without a token, with another process's token, a forged or a short one: UNAUTHENTICATED, an internal error to the caller (in process: %s)",
    async (inProcess) => {
      const before = seen.length;
      for (const token of [undefined, CATALOG_TOKEN, "f".repeat(64), GATEWAY_TOKEN.slice(0, 31), `${GATEWAY_TOKEN}x`]) {
        await expect(ask(token, inProcess)).rejects.toMatchObject({ slug: "internal" });
      }
      expect(seen.length).toBe(before);
    },
  );

  it("leaves grpc.health.v1 open: the kubelet's probes carry no token", async () => {
    expect(await grpcHealth(address, "")).toBe("SERVING");
  });

  it("reads RPC_CALLERS as name:sha256 pairs, refusing anything else by name", () => {
    const callers = parseCallers(` gateway:${callerDigest(GATEWAY_TOKEN)}, catalog:${callerDigest(CATALOG_TOKEN)} `);
    expect([...callers.values()]).toEqual(["gateway", "catalog"]);
    expect(callerDigest("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"); // sha256("abc"), as sha256sum prints it
    // A rotation lists the old and the new token of one caller side by side.
    expect([...parseCallers(`gateway:${callerDigest(GATEWAY_TOKEN)},gateway:${callerDigest(CATALOG_TOKEN)}`).values()]).toEqual(["gateway", "gateway"]);
    expect(() => parseCallers("")).toThrow("RPC_CALLERS lists no caller");
    expect(() => parseCallers("gateway:replace-with-the-sha256-of-its-token")).toThrow(/is not <caller name>:<sha256 hex of its RPC_TOKEN>/);
    expect(() => parseCallers(`gateway:${callerDigest(GATEWAY_TOKEN)},catalog:${callerDigest(GATEWAY_TOKEN)}`)).toThrow(
      "catalog and gateway have the same token",
    );
  });
});

describe("gRPC callers limited to some methods (the service list's callsOnly)", () => {
  let server: RpcServer;
  let address: string;
  const LIST = `${schedulesV1.SchedulesService.typeName}/ListSchedules`;

  beforeAll(async () => {
    server = new RpcServer({
      callers: parseCallers(formatCallers({ gateway: GATEWAY_TOKEN, catalog: CATALOG_TOKEN })),
      callerMethods: new Map([["catalog", new Set([LIST])]]),
    });
    const unused = async () => {
      throw new Error("not called here");
    };
    server.add(schedulesV1.SchedulesService, {
      ...Object.fromEntries(schedulesV1.SchedulesService.methods.map((m) => [m.localName, unused])),
      getSchedule: async () => ({ schedule: { id: "sch_x" } }),
      listSchedules: async () => ({ schedules: [] }),
    } as unknown as ServiceImplementation<typeof schedulesV1.SchedulesService>);
    address = `127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
    server.serving();
  });
  afterAll(() => server.stop(200));

  const clientOf = (token: string, inProcess: boolean) => createClient(schedulesV1.SchedulesService, inProcess ? server.inProcess() : address, { token });

  it.each([false, true])(
    "serves a limited caller its methods and refuses it every other (PERMISSION_DENIED, an internal error to it); an unlimited caller gets all (in process: %s)",
    async (inProcess) => {
      const catalog = clientOf(CATALOG_TOKEN, inProcess);
      const gateway = clientOf(GATEWAY_TOKEN, inProcess);
      try {
        await expect(catalog.listSchedules({ accountId: "acct_x", pageSize: 1 })).resolves.toMatchObject({ schedules: [] });
        await expect(catalog.getSchedule({ scheduleId: "sch_x" })).rejects.toMatchObject({ slug: "internal" });
        await expect(gateway.getSchedule({ scheduleId: "sch_x" })).resolves.toMatchObject({ schedule: { id: "sch_x" } });
      } finally {
        catalog.close();
        gateway.close();
      }
    },
  );
});
