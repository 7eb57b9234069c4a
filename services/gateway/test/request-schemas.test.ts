import type { BodyOf } from "../src/http/request-schemas";
import { validateBody } from "../src/http/validate";

/**
 * Each request body's type is derived from the JSON Schema that validates it
 * (http/schema-type.ts). The type assertions below are checked by the
 * typecheck (`tsc`): a derived type that drifts from what the routes expect
 * fails it.
 */

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const assertType = <T extends true>(): T | undefined => undefined;

type Goods = Record<string, unknown> | unknown[] | string | null;
type ContentDeclaration = {
  teaser?: string | null;
  author?: string | null;
  published?: string | null;
  canonical_url?: string | null;
  keywords?: string[] | null;
  section?: string | null;
  language?: string | null;
  license_url?: string | null;
  pass_scope?: "seller" | "content";
  pass_hours?: number;
};

assertType<
  Equal<
    BodyOf<"CheckoutCreate">,
    {
      title: string;
      price_usd: string;
      pay_to?: string;
      description?: string | null;
      fulfillment?: "inline" | "relay" | "mcp" | "webhook";
      payload?: Goods;
      origin_url?: string | null;
      origin_method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
      origin_auth_type?: "bearer" | "basic" | "api_key" | "custom" | null;
      origin_auth_value?: string | null;
      origin_auth_header?: string | null;
      origin_auth_secret_id?: string | null;
      mcp_tool?: string;
      reusable?: boolean;
      test_mode?: boolean | null;
      expires_in_minutes?: number | null;
      input_schema?: Goods;
      output_schema?: Goods;
      example_input?: Goods;
      example_output?: Goods;
      freshness?: string | null;
      coverage?: string | null;
      source?: string | null;
      constraints?: string | null;
      parties?: {
        buyer?: { name?: string | null; email?: string | null; ref?: string | null } | null;
        seller?: { name?: string | null; ref?: string | null } | null;
      } | null;
      platform_fee_bps?: number;
      inherit_account_payouts?: boolean;
      wallet_button?: boolean;
      test_delivery_daily_cap?: number;
      schedule_interval_days?: number;
      schedule_periods?: number;
      escrow_offer?: "optional" | "required";
      content?: ContentDeclaration;
      max_deliveries?: number | null;
      package_ttl_days?: number;
    }
  >
>();
assertType<Equal<BodyOf<"ContentGrantCreate">, { subject: string; scope?: "seller" | "content"; ttl_seconds?: number; uses?: number }>>();
assertType<Equal<BodyOf<"GrantCreate">, { subject: string; ttl_seconds?: number; uses?: number }>>();
assertType<Equal<BodyOf<"ApiKeyCreate">, { name?: string | null; scope?: "read_only" | "payments" | "full"; mode?: "test" | "live" }>>();
assertType<Equal<BodyOf<"WalletChallenge">, { address: string; network: string }>>();
assertType<Equal<BodyOf<"WalletVerify">, { message: string; signature: string }>>();
assertType<Equal<BodyOf<"FacilitatorRequest">, { network: string; requirement: Record<string, unknown>; payload: Record<string, unknown> }>>();
assertType<Equal<BodyOf<"PaymentPrepare">, { payer: string; network?: string | null; params?: Record<string, string> | null }>>();
assertType<
  Equal<
    BodyOf<"ProfilePatch">,
    {
      slug?: string | null;
      name?: string | null;
      profile_type?: "individual" | "team" | "company" | "" | null;
      bio?: string | null;
      avatar_url?: string | null;
      website_url?: string | null;
      social_links?: Record<string, string> | null;
    }
  >
>();

describe("validateBody", () => {
  it("answers a valid body as it came", () => {
    const body = { payer: "0xabc", network: null, params: { a: "b" } };
    expect(validateBody("PaymentPrepare", body)).toBe(body);
    expect(validateBody("ApiKeyCreate", undefined)).toEqual({});
  });

  it("refuses with 422 listing every field error, the caller's first", () => {
    const refused = (() => {
      try {
        validateBody("CheckoutCreate", { price_usd: 1, payload: 5, colour: "red" }, [{ field: "origin_url", reason: "not yet" }]);
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toMatchObject({
      slug: "invalid-request",
      errors: [
        { field: "origin_url", reason: "not yet" },
        { field: "title", reason: "is required" },
        { field: "colour", reason: "is not a known field" },
        { field: "price_usd", reason: "must be string" },
        { field: "payload", reason: "has the wrong type" },
      ],
    });
  });

  it("refuses a valid body when the caller found errors, and anything but an object", () => {
    expect(() => validateBody("WalletVerify", { message: "m", signature: "s" }, [{ field: "x", reason: "no" }])).toThrow(
      expect.objectContaining({ errors: [{ field: "x", reason: "no" }] }),
    );
    expect(() => validateBody("WalletVerify", [1])).toThrow(expect.objectContaining({ errors: [{ field: "(body)", reason: "must be a JSON object" }] }));
  });
});
