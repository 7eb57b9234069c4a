import { create } from "@bufbuild/protobuf";
import { RedisCache } from "@c402/cache";
import { catalogV1, identityV1, paymentsV1 } from "@c402/contracts";
import { ACCOUNT_ID, CHECKOUT_ID, checkout, quote, resolveCredential, SELLER_KEY, serveApp, type Served } from "./support/fake-gateway";

/**
 * The gateway while its cache (Redis) is gone (G33; the failure drills show
 * it under load on real processes): the routes it meters fail closed with 503
 * and Retry-After, the rest go on without it.
 */

const auth = { authorization: `Bearer ${SELLER_KEY}` };
let cache: RedisCache;
let served: Served;

beforeAll(async () => {
  // Nothing listens on port 1: every cache call fails at once.
  cache = new RedisCache("redis://127.0.0.1:1");
  const relay = checkout({ fulfillment: catalogV1.Fulfillment.RELAY, reusable: true });
  served = await serveApp(
    {
      identity: {
        resolveCredential: resolveCredential(identityV1.Scope.FULL),
        getPublicProfile: async () => create(identityV1.GetPublicProfileResponseSchema, { profile: { accountId: ACCOUNT_ID, slug: "weather" } }),
      },
      catalog: {
        getCheckout: async () => create(catalogV1.GetCheckoutResponseSchema, { checkout: relay }),
        createCheckout: async () => create(catalogV1.CreateCheckoutResponseSchema, { checkout: checkout() }),
      },
      payments: { quotePayment: async () => quote(paymentsV1.SettlementKind.SIMULATED) },
    },
    cache,
  );
});

afterAll(async () => {
  await served.close();
  await cache.close();
});

describe("while the cache cannot be reached", () => {
  it("answers a seller's read, its failed authentications counted in this process", async () => {
    const read = await fetch(`${served.url}/v1/checkouts/${CHECKOUT_ID}`, { headers: auth });
    expect(read.status).toBe(200);
  });

  it("refuses a seller's write and a sign-in with 503 and Retry-After, deciding nothing", async () => {
    const write = await fetch(`${served.url}/v1/checkouts`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "Forecast", price_usd: "0.01", payload: { temp_c: 21 } }),
    });
    const signIn = await fetch(`${served.url}/auth/wallet/challenge`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ address: "0x2222222222222222222222222222222222222222", network: "eip155:8453" }),
    });
    for (const refused of [write, signIn]) {
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });

  it("serves a call URL's face, asking identity and catalog instead of the cache", async () => {
    const face = await fetch(`${served.url}/r/weather/${CHECKOUT_ID}`);
    expect(face.status).toBe(402);
  });
});
