import { OutboxRelay, outboxMigration } from "@c402/bus";
import { catalogV1, healthV1, paymentsV1, TOPICS } from "@c402/contracts";
import { migrate } from "@c402/db";
import type { ServiceClient } from "@c402/rpc";
import { standardHealth, type ServiceDeps, type ServiceModule } from "@c402/runtime";
import { isEvmNetwork, type EvmNetwork } from "@c402/x402";
import { Payments } from "./domain/payments";
import type { CheckoutForPayment } from "./domain/requirements";
import { paymentsRpc } from "./rpc/payments-rpc";
import { paymentsInitial } from "./store/migrations/0001_payments";

export { paymentsConfigSpec } from "./config";
export const PAYMENTS_SCHEMA = "payments";
export const paymentsMigrations = { "0001_payments": paymentsInitial, "0002_outbox": outboxMigration };

export interface PaymentsClients {
  catalog: ServiceClient<typeof catalogV1.CatalogService>;
}

const STATUS: Record<number, CheckoutForPayment["status"]> = {
  [catalogV1.CheckoutStatus.OPEN]: "open",
  [catalogV1.CheckoutStatus.PAID]: "paid",
  [catalogV1.CheckoutStatus.EXPIRED]: "expired",
  [catalogV1.CheckoutStatus.VOID]: "void",
};

export async function createPaymentsService(
  deps: ServiceDeps,
  clients: PaymentsClients,
  config: { subjectSecret: string; liveNetworks: readonly string[] },
): Promise<ServiceModule> {
  await migrate(deps.database, paymentsMigrations);
  const liveNetworks = config.liveNetworks.filter(isEvmNetwork) as EvmNetwork[];
  if (liveNetworks.length !== config.liveNetworks.length) throw new Error(`LIVE_NETWORKS has an unsupported network: ${config.liveNetworks.join(",")}`);
  const relay = new OutboxRelay({ db: deps.database.db, bus: deps.bus, onError: (err) => deps.logger.warn({ err }, "outbox relay round failed") });
  const checkouts = async (checkoutId: string): Promise<CheckoutForPayment> => {
    const { checkout } = await clients.catalog.getCheckout({ checkoutId });
    if (!checkout) throw new Error("catalog answered without a checkout");
    return {
      id: checkout.id,
      accountId: checkout.accountId,
      title: checkout.title,
      priceAtomic: checkout.priceAtomic,
      payTo: checkout.payTo,
      armed: checkout.armed,
      reusable: checkout.reusable,
      status: STATUS[checkout.status] ?? "void",
    };
  };
  const payments = new Payments(deps.database.db, checkouts, { subjectSecret: config.subjectSecret, liveNetworks }, () => relay.poke());
  return {
    name: "payments",
    register(server) {
      server.add(paymentsV1.PaymentsService, paymentsRpc(payments));
      server.add(healthV1.HealthService, standardHealth(deps, "payments"));
    },
    async start() {
      await deps.bus.ensureTopics([TOPICS.paymentSettled]);
      relay.start();
    },
    async stop() {
      await relay.stop();
    },
  };
}
