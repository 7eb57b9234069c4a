import type { Cache } from "@c402/cache";
import type {
  catalogV1,
  contentGrantsV1,
  escrowV1,
  fulfillmentV1,
  healthV1,
  identityV1,
  paymentsV1,
  schedulesV1,
  spendingWalletsV1,
  webhooksV1,
} from "@c402/contracts";
import type { Logger } from "@c402/logging";
import type { ServiceClient } from "@c402/rpc";
import type { GatewaySettings } from "../config";

export interface ServiceClients {
  identity: ServiceClient<typeof identityV1.IdentityService>;
  contentGrants: ServiceClient<typeof contentGrantsV1.ContentGrantsService>;
  catalog: ServiceClient<typeof catalogV1.CatalogService>;
  payments: ServiceClient<typeof paymentsV1.PaymentsService>;
  fulfillment: ServiceClient<typeof fulfillmentV1.FulfillmentService>;
  webhooks: ServiceClient<typeof webhooksV1.WebhooksService>;
  escrow: ServiceClient<typeof escrowV1.EscrowService>;
  /** Recurring series (ADR 20). */
  schedules: ServiceClient<typeof schedulesV1.SchedulesService>;
  spendingWallets: ServiceClient<typeof spendingWalletsV1.SpendingWalletsService>;
  /** Health of each backing service, by name. */
  health: Record<string, ServiceClient<typeof healthV1.HealthService>>;
}

export interface GatewayDeps {
  clients: ServiceClients;
  cache: Cache;
  logger: Logger;
  settings: GatewaySettings;
}
