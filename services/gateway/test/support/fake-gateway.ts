import type { AddressInfo } from "node:net";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MemoryCache, type Cache } from "@c402/cache";
import { catalogV1, identityV1, paymentsV1, requirementMessage } from "@c402/contracts";
import { createLogger } from "@c402/logging";
import { encodeHeader, type PaymentRequirements } from "@c402/x402";
import { createGatewayApp, startGateway, type GatewaySettings, type ServiceClients } from "../../src/index";

/**
 * The gateway with fake service clients, served over real HTTP on
 * 127.0.0.1: the routes are driven exactly as a buyer or a seller drives
 * them, with catalog, payments and identity answering what each test says.
 */

export const BASE_URL = "https://pay.test";
export const SITE_URL = "https://site.test";
export const CHECKOUT_ID = "chk_WeatherParis000000000000";
export const PAYMENT_ID = "pay_Receipt00000000000000000";
export const ACCOUNT_ID = "acct_Seller000000000000000000";
export const PAY_TO = "0x1111111111111111111111111111111111111111";
export const PAYER = "0x2222222222222222222222222222222222222222";
export const USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
export const TX_HASH = `0x${"ab".repeat(32)}`;

type ClientName = "identity" | "contentGrants" | "catalog" | "payments" | "fulfillment" | "webhooks" | "escrow" | "schedules" | "spendingWallets";
export type Fakes = { [C in ClientName]?: Partial<ServiceClients[C]> };

/** A client answering with `methods`; any other call rejects naming itself, so a test sees an unexpected call. */
function fakeClient<C extends object>(name: string, methods: object): C {
  return new Proxy(methods, {
    get(target, prop) {
      if (prop in target) return (target as Record<string | symbol, unknown>)[prop];
      if (prop === "close") return () => undefined;
      return () => Promise.reject(new Error(`${name}.${String(prop)} was not expected`));
    },
  }) as C;
}

/** One request a fake received. */
export interface Call {
  client: ClientName;
  method: string;
  req: unknown;
  options: unknown;
}

/**
 * The same fakes, recording every request they receive, in order: `of(method)` lists one method's requests,
 * `called()` every call as "client.method" (to assert which services a route asked, and nothing else).
 */
export function recorded(fakes: Fakes) {
  const calls: Call[] = [];
  const wrap = (client: ClientName, methods: object = {}) =>
    Object.fromEntries(
      Object.entries(methods).map(([method, answer]) => [
        method,
        (req: unknown, options?: unknown) => {
          calls.push({ client, method, req, options });
          return (answer as (req: unknown, options?: unknown) => unknown)(req, options);
        },
      ]),
    );
  return {
    fakes: {
      identity: wrap("identity", fakes.identity),
      contentGrants: wrap("contentGrants", fakes.contentGrants),
      catalog: wrap("catalog", fakes.catalog),
      payments: wrap("payments", fakes.payments),
      fulfillment: wrap("fulfillment", fakes.fulfillment),
      webhooks: wrap("webhooks", fakes.webhooks),
      escrow: wrap("escrow", fakes.escrow),
      schedules: wrap("schedules", fakes.schedules),
      spendingWallets: wrap("spendingWallets", fakes.spendingWallets),
    } as Fakes,
    calls,
    of: (method: string) => calls.filter((c) => c.method === method).map((c) => c.req),
    called: () => calls.map((c) => `${c.client}.${c.method}`),
  };
}

export function fakeClients(fakes: Fakes): ServiceClients {
  return {
    identity: fakeClient("identity", fakes.identity ?? {}),
    contentGrants: fakeClient("contentGrants", fakes.contentGrants ?? {}),
    catalog: fakeClient("catalog", fakes.catalog ?? {}),
    payments: fakeClient("payments", fakes.payments ?? {}),
    fulfillment: fakeClient("fulfillment", fakes.fulfillment ?? {}),
    webhooks: fakeClient("webhooks", fakes.webhooks ?? {}),
    escrow: fakeClient("escrow", fakes.escrow ?? {}),
    schedules: fakeClient<NonNullable<ServiceClients["schedules"]>>("schedules", fakes.schedules ?? {}),
    spendingWallets: fakeClient<NonNullable<ServiceClients["spendingWallets"]>>("spendingWallets", fakes.spendingWallets ?? {}),
    health: {},
  };
}

const settings = {
  serviceName: "c402",
  version: "0.0.0",
  runMode: "embedded",
  authRateLimitPerMinute: 30,
} satisfies Omit<GatewaySettings, "baseUrl" | "siteUrl">;

const logger = createLogger({ service: "gateway-test", level: "silent" });

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** createGatewayApp(deps) with fake clients (and a MemoryCache unless `cache` is given), listening on a free port. */
export async function serveApp(fakes: Fakes, cache: Cache = new MemoryCache()): Promise<Served> {
  const app = createGatewayApp({
    clients: fakeClients(fakes),
    cache,
    logger,
    settings: { ...settings, baseUrl: BASE_URL, siteUrl: SITE_URL },
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Servers a test file opened, closed after each test. */
export function servers() {
  const open: Served[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  const keep = (s: Served) => (open.push(s), s);
  return { app: async (fakes: Fakes) => keep(await serveApp(fakes)), edge: async (fakes: Fakes) => keep(await serveEdge(fakes)) };
}

/** The whole edge (startGateway: the socket fast path in front of the app) with fake clients. */
export async function serveEdge(fakes: Fakes): Promise<Served> {
  const gateway = await startGateway({
    host: "127.0.0.1",
    port: 0,
    baseUrl: BASE_URL,
    siteUrl: SITE_URL,
    settings,
    clients: fakeClients(fakes),
    cache: new MemoryCache(),
    logger,
  });
  return { url: `http://127.0.0.1:${gateway.port}`, close: () => gateway.close() };
}

export function checkout(init: MessageInitShape<typeof catalogV1.CheckoutSchema> = {}): catalogV1.Checkout {
  return create(catalogV1.CheckoutSchema, {
    id: CHECKOUT_ID,
    accountId: ACCOUNT_ID,
    title: "Weather for Paris",
    description: "Today's temperature",
    priceAtomic: 100_000n,
    payTo: PAY_TO,
    payloadJson: JSON.stringify({ temp_c: 21 }),
    reusable: false,
    armed: false,
    status: catalogV1.CheckoutStatus.OPEN,
    createdAt: timestampFromDate(new Date("2025-01-02T03:04:05.000Z")),
    offer: create(catalogV1.OfferCardSchema, { freshness: "hourly" }),
    ...init,
  });
}

export function getCheckout(init: MessageInitShape<typeof catalogV1.CheckoutSchema> = {}) {
  return async () => create(catalogV1.GetCheckoutResponseSchema, { checkout: checkout(init) });
}

export const REQUIREMENT = {
  scheme: "exact",
  network: "eip155:84532",
  asset: USDC,
  amount: "110500",
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: "USDC rehearsal - no funds move", version: "2", checkoutId: CHECKOUT_ID, rehearsal: true },
} satisfies PaymentRequirements;

/** payments.quotePayment's answer: REQUIREMENT, the price, and the checkout payments read for the quote. */
export function quote(
  settlement: paymentsV1.SettlementKind = paymentsV1.SettlementKind.SIMULATED,
  checkoutInit: MessageInitShape<typeof catalogV1.CheckoutSchema> = {},
): paymentsV1.QuotePaymentResponse {
  return create(paymentsV1.QuotePaymentResponseSchema, {
    accepts: [requirementMessage(REQUIREMENT)],
    price: { price: 100_000n, providerAmount: 100_000n, feeAmount: 10_500n, total: 110_500n },
    settlement,
    checkout: checkout(checkoutInit),
  });
}

export function receipt(init: MessageInitShape<typeof paymentsV1.ReceiptSchema> = {}): paymentsV1.Receipt {
  return create(paymentsV1.ReceiptSchema, {
    id: PAYMENT_ID,
    checkoutId: CHECKOUT_ID,
    accountId: ACCOUNT_ID,
    network: "eip155:84532",
    asset: USDC,
    amountUsd: "0.10",
    providerAmount: 100_000n,
    feeAmount: 10_500n,
    total: 110_500n,
    payer: PAYER,
    subject: "sub_Buyer0000000000000000000",
    payTo: PAY_TO,
    txHash: TX_HASH,
    testMode: true,
    settledAt: timestampFromDate(new Date("2025-01-02T03:05:00.000Z")),
    checkoutTitle: "Weather for Paris",
    deliveryOutcome: "delivered",
    ...init,
  });
}

/** A well-formed x402 v2 payment header for REQUIREMENT (the signature is not checked here: payments is fake). */
export function paymentHeader(): string {
  return encodeHeader({
    x402Version: 2,
    accepted: REQUIREMENT,
    payload: {
      signature: `0x${"11".repeat(65)}`,
      authorization: { from: PAYER, to: PAY_TO, value: "110500", validAfter: "0", validBefore: "99999999999", nonce: `0x${"33".repeat(32)}` },
    },
  });
}

/** A JSON answer's body, to assert on. */
export const bodyOf = (res: Response): Promise<any> => res.json();

export function decodeBase64Json(value: string | null): unknown {
  if (value === null) throw new Error("the header is missing");
  return JSON.parse(Buffer.from(value, "base64").toString("utf8"));
}

export const SELLER_KEY = "sk_test_abcdEFGHijklMNOPqrstUVWX";

/** identity.resolveCredential for SELLER_KEY with the given scope (a test key of ACCOUNT_ID). */
export function resolveCredential(scope: identityV1.Scope = identityV1.Scope.FULL) {
  return async ({ secret }: { secret?: string }) => {
    if (secret !== SELLER_KEY) throw new Error(`unexpected credential ${String(secret)}`);
    return create(identityV1.ResolveCredentialResponseSchema, {
      accountId: ACCOUNT_ID,
      keyId: "key_SellerKey000000000000000",
      keyPrefix: "sk_test_abcd",
      scope,
      mode: identityV1.KeyMode.TEST,
      kind: identityV1.CredentialKind.API_KEY,
      actor: "key:sk_test_abcd",
    });
  };
}
