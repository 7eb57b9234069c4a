import { KafkaBus } from "@c402/bus";
import { openPostgres } from "@c402/db";
import { createFulfillmentService, FULFILLMENT_SCHEMA } from "@c402/fulfillment";
import { createLogger } from "@c402/logging";
import { RpcServer } from "@c402/rpc";
import { generateKeyringText, parseKeyring } from "@c402/sealed-secrets";

/** A real fulfillment service (gRPC on loopback, its schema in the test's database), which calls relay origins for payments. */
export interface FulfillmentRig {
  /** host:port of its gRPC server. */
  address: string;
  close(): Promise<void>;
}

/** Starts fulfillment as the service builds it, allowed to call origins on loopback (the tests' fake origins). */
export async function startFulfillmentRig(postgresUrl: string, kafkaBrokers: string, clientId: string): Promise<FulfillmentRig> {
  const database = openPostgres({ url: postgresUrl, schema: FULFILLMENT_SCHEMA });
  const bus = new KafkaBus({ brokers: kafkaBrokers.split(","), clientId });
  const fulfillment = await createFulfillmentService(
    { database, bus, logger: createLogger({ service: "fulfillment", level: "warn" }) },
    { keyring: parseKeyring(generateKeyringText("k1")), outbound: { allowLoopback: true, allowAddresses: [], resolveNames: false } },
  );
  const server = new RpcServer();
  fulfillment.register(server);
  const address = `127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
  return {
    address,
    async close() {
      await server.stop(1_000);
      await fulfillment.stop();
      await bus.close();
      await database.close();
    },
  };
}
