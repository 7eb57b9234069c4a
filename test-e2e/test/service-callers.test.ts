import { healthV1, paymentsV1 } from "@c402/contracts";
import { createClient } from "@c402/rpc";
import { SERVICES } from "@c402/topology";

/**
 * Authenticated gRPC between the processes (distributed mode; the embedded
 * process's own check is in deploy/embedded/test/embedded.test.ts): each
 * service serves only the callers its RPC_CALLERS lists, each identified by
 * its own RPC_TOKEN. So a process that is not the gateway cannot call
 * payments' FacilitatorSettle, even from inside the network.
 */
const distributed = process.env.E2E_RUN_MODE === "distributed";
const grpc = JSON.parse(process.env.E2E_GRPC ?? '{"addresses":{},"tokens":{}}') as { addresses: Record<string, string>; tokens: Record<string, string> };

(distributed ? describe : describe.skip)("gRPC callers (distributed mode)", () => {
  const settle = async (token?: string) => {
    const client = createClient(paymentsV1.PaymentsService, grpc.addresses.payments as string, token ? { token } : {});
    try {
      return await client.facilitatorSettle({});
    } finally {
      client.close();
    }
  };

  it("payments' FacilitatorSettle refuses every caller but the gateway: catalog's own token, schedules' (a caller of the series' methods only), none, a forged one", async () => {
    expect(Object.keys(grpc.tokens).sort()).toEqual(["catalog", "gateway", "payments", "schedules"]);
    for (const token of [grpc.tokens.catalog, grpc.tokens.payments, grpc.tokens.schedules, undefined, "0".repeat(64)]) {
      // Refused before the handler: to the caller an internal error (UNAUTHENTICATED, no problem document).
      await expect(settle(token)).rejects.toMatchObject({ slug: "internal" });
    }
    // The gateway's token gets past the check, to the contract's rules (an empty request breaks them).
    await expect(settle(grpc.tokens.gateway)).rejects.toMatchObject({ slug: "invalid-request" });
  });

  it("the schedules token reaches payments' series methods (GetSeriesStart answers, here NOT_FOUND for a series never sold)", async () => {
    const client = createClient(paymentsV1.PaymentsService, grpc.addresses.payments as string, { token: grpc.tokens.schedules as string });
    try {
      await expect(client.getSeriesStart({ scheduleId: "sch_000000000000000000000000" })).rejects.toMatchObject({ slug: "not-found" });
    } finally {
      client.close();
    }
  });

  it("every service serves the gateway and refuses a caller without a token", async () => {
    for (const s of SERVICES) {
      const anonymous = createClient(healthV1.HealthService, grpc.addresses[s.name] as string);
      const asGateway = createClient(healthV1.HealthService, grpc.addresses[s.name] as string, { token: grpc.tokens.gateway as string });
      try {
        await expect(anonymous.check({})).rejects.toMatchObject({ slug: "internal" });
        await expect(asGateway.check({})).resolves.toMatchObject({ service: s.name });
      } finally {
        anonymous.close();
        asGateway.close();
      }
    }
  });
});
