import { paymentsV1, TOPICS } from "@c402/contracts";
import {
  addressVariables,
  callerMethodsOf,
  callersOf,
  databaseSecretKey,
  GATEWAY,
  rpcMethod,
  SERVICES,
  serviceNamed,
  topologyProblems,
  type ServiceEntry,
} from "../src";

describe("the service list", () => {
  it("is consistent: unique names, schemas, roles and variables; callees first; every consumed topic published", () => {
    expect(topologyProblems()).toEqual([]);
  });

  it("follows the naming rules the deploy files rely on", () => {
    for (const s of SERVICES) {
      const snake = s.name.replaceAll("-", "_");
      expect(s.database).toEqual({ schema: snake, role: `c402_${snake}` });
      expect(s.addressEnv).toBe(`${snake.toUpperCase()}_GRPC_ADDRESS`);
    }
  });

  it("names the payment-settled topic's writer and readers", () => {
    expect(SERVICES.filter((s) => (s.topics.publishes as readonly string[]).includes(TOPICS.paymentSettled)).map((s) => s.name)).toEqual(["payments"]);
    expect(SERVICES.filter((s) => (s.topics.consumes as readonly string[]).includes(TOPICS.paymentSettled)).map((s) => s.name)).toEqual([
      "catalog",
      "schedules",
      "webhooks",
    ]);
  });

  it("names the schedule topic's writer and reader: the schedules service, and webhooks", () => {
    expect(SERVICES.filter((s) => (s.topics.publishes as readonly string[]).includes(TOPICS.scheduleEvents)).map((s) => s.name)).toEqual(["schedules"]);
    expect(SERVICES.filter((s) => (s.topics.consumes as readonly string[]).includes(TOPICS.scheduleEvents)).map((s) => s.name)).toEqual(["webhooks"]);
  });

  it("lets schedules call payments (ADR 20), never the other way round", () => {
    expect(callersOf("payments")).toEqual(["gateway", "schedules"]);
    expect(callersOf("schedules")).toEqual(["gateway"]);
  });

  it("names the escrow topic's writer: the escrow service alone", () => {
    expect(SERVICES.filter((s) => (s.topics.publishes as readonly string[]).includes(TOPICS.escrowEvents)).map((s) => s.name)).toEqual(["escrow"]);
  });

  it("limits the schedules token to the series' methods of payments, each a method payments has", () => {
    const limited = callerMethodsOf("payments");
    expect([...limited.keys()]).toEqual(["schedules"]);
    expect([...limited.get("schedules")!].sort()).toEqual([
      "payments.v1.PaymentsService/CancelHeldAuthorizations",
      "payments.v1.PaymentsService/ChargeHeldPeriod",
      "payments.v1.PaymentsService/GetSeriesStart",
    ]);
    expect(callerMethodsOf("catalog").size).toBe(0);
    expect(() => rpcMethod(paymentsV1.PaymentsService, "nope" as never)).toThrow(/has no method nope/);
  });

  it("gives a caller the address variables of its callees", () => {
    expect(addressVariables(GATEWAY.calls, (s) => `${s.name}:1`)).toEqual({
      IDENTITY_GRPC_ADDRESS: "identity:1",
      CONTENT_GRANTS_GRPC_ADDRESS: "content-grants:1",
      CATALOG_GRPC_ADDRESS: "catalog:1",
      PAYMENTS_GRPC_ADDRESS: "payments:1",
      FULFILLMENT_GRPC_ADDRESS: "fulfillment:1",
      WEBHOOKS_GRPC_ADDRESS: "webhooks:1",
      ESCROW_GRPC_ADDRESS: "escrow:1",
      SCHEDULES_GRPC_ADDRESS: "schedules:1",
      SPENDING_WALLETS_GRPC_ADDRESS: "spending-wallets:1",
    });
    expect(databaseSecretKey(serviceNamed("payments"))).toBe("PAYMENTS_DATABASE_URL");
    expect(() => serviceNamed("nope")).toThrow(/no service named nope/);
  });

  it("reports what is wrong with a bad list", () => {
    const base = serviceNamed("catalog");
    const bad: ServiceEntry[] = [
      { ...base, name: "a", calls: ["b"], database: { schema: "a", role: "r" } },
      { ...base, name: "b", calls: ["zz"], database: { schema: "a", role: "r2" }, topics: { publishes: [], consumes: ["t"] } },
      { ...base, name: "c--d", addressEnv: "C__D_GRPC_ADDRESS", calls: [], database: { schema: "c", role: "r3" }, topics: { publishes: [], consumes: [] } },
    ];
    expect(topologyProblems(bad, { ...GATEWAY, calls: [] })).toEqual([
      "a: addressEnv must be <NAME>_GRPC_ADDRESS",
      "a calls b, which must come earlier in the list (start order)",
      "a consumes events.payments.v1.payment-settled, which no service publishes",
      "schema a is used by both a and b",
      "variable CATALOG_GRPC_ADDRESS is used by both a and b",
      "b: addressEnv must be <NAME>_GRPC_ADDRESS",
      "b calls zz, which is not in the list",
      "b consumes t, which no service publishes",
      "c--d: a name must be lowercase letters, digits and single inner dashes (a DNS label)",
    ]);
  });
});
