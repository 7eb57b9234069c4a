import { create } from "@bufbuild/protobuf";
import { catalogV1, identityV1, paymentsV1 } from "@c402/contracts";
import { ACCOUNT_ID, bodyOf, CHECKOUT_ID, checkout, quote, recorded, resolveCredential, SELLER_KEY, servers } from "../support/fake-gateway";

/** PATCH, DELETE (void), restore and extend of /v1/checkouts/{id} (routes/checkouts.ts). */

const serve = servers();
const auth = { authorization: `Bearer ${SELLER_KEY}`, "content-type": "application/json" };
const ACTOR = "key:sk_test_abcd";
const send = (url: string, method: string, body?: unknown) =>
  fetch(url, { method, headers: auth, ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) });

function lifecycleFakes(scope: identityV1.Scope = identityV1.Scope.PAYMENTS) {
  return recorded({
    identity: { resolveCredential: resolveCredential(scope) },
    catalog: {
      updateCheckout: async () => create(catalogV1.UpdateCheckoutResponseSchema, { checkout: checkout({ title: "Changed" }), changed: ["title"] }),
      voidCheckout: async () =>
        create(catalogV1.VoidCheckoutResponseSchema, {
          checkout: checkout({ status: catalogV1.CheckoutStatus.VOID }),
          voided: [CHECKOUT_ID],
          liabilities: { liveKeys: 2, callsUnspent: 7n, unearnedAtomic: 1_750_000n },
          alreadyVoid: false,
        }),
      restoreCheckout: async () =>
        create(catalogV1.RestoreCheckoutResponseSchema, { checkout: checkout({ status: catalogV1.CheckoutStatus.PAID }), restored: true }),
      extendCheckout: async () => create(catalogV1.ExtendCheckoutResponseSchema, { checkout: checkout() }),
    },
    payments: { quotePayment: async () => quote(paymentsV1.SettlementKind.SIMULATED) },
  });
}

describe("PATCH /v1/checkouts/{id}", () => {
  it("maps values to set and nulls to clear, answers the updated checkout, and drops the faces' cached 402s", async () => {
    const { fakes, of } = lifecycleFakes();
    const { url } = await serve.app(fakes);
    await fetch(`${url}/c/${CHECKOUT_ID}`);
    const res = await send(`${url}/v1/checkouts/${CHECKOUT_ID}`, "PATCH", {
      title: "Changed",
      description: null,
      freshness: "daily",
      coverage: null,
      input_schema: { type: "object" },
      example_output: null,
    });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toMatchObject({ id: CHECKOUT_ID, title: "Changed" });
    expect(of("updateCheckout")).toEqual([
      {
        accountId: ACCOUNT_ID,
        actor: ACTOR,
        checkoutId: CHECKOUT_ID,
        patch: { title: "Changed", offer: { freshness: "daily", inputSchemaJson: '{"type":"object"}' }, clear: ["description", "coverage", "example_output"] },
      },
    ]);
    await fetch(`${url}/c/${CHECKOUT_ID}`);
    expect(of("quotePayment")).toHaveLength(2);
  });

  it.each([
    [{ price_usd: "2.00" }, "price_usd", "cannot be changed after create"],
    [{ pay_to: "0x1111111111111111111111111111111111111111" }, "pay_to", "cannot be changed after create"],
    [{ payload: 5 }, "payload", "has the wrong type"],
    [{ reusable: true }, "reusable", "is not a known field"],
    [{ title: 5 }, "title", "has the wrong type"],
  ])("refuses %j with 422 naming %s, without asking catalog", async (body, field, reason) => {
    const { fakes, of } = lifecycleFakes();
    const { url } = await serve.app(fakes);
    const res = await send(`${url}/v1/checkouts/${CHECKOUT_ID}`, "PATCH", body);
    expect(res.status).toBe(422);
    expect(await bodyOf(res)).toMatchObject({ errors: [{ field, reason }] });
    expect(of("updateCheckout")).toEqual([]);
  });

  it("needs scope payments", async () => {
    const { fakes } = lifecycleFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const res = await send(`${url}/v1/checkouts/${CHECKOUT_ID}`, "PATCH", { title: "x" });
    expect(res.status).toBe(403);
    expect(await bodyOf(res)).toMatchObject({ needed_scope: "payments" });
  });
});

describe("DELETE /v1/checkouts/{id}", () => {
  it("answers {voided, liabilities} with the void checkout", async () => {
    const { fakes, of } = lifecycleFakes();
    const { url } = await serve.app(fakes);
    const res = await send(`${url}/v1/checkouts/${CHECKOUT_ID}`, "DELETE");
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toMatchObject({
      voided: [CHECKOUT_ID],
      already_void: false,
      liabilities: { live_keys: 2, calls_unspent: 7, unearned: { amount: "1.750000", currency: "USD" } },
      checkout: { id: CHECKOUT_ID, status: "void" },
    });
    expect(of("voidCheckout")).toEqual([{ accountId: ACCOUNT_ID, actor: ACTOR, checkoutId: CHECKOUT_ID }]);
  });
});

describe("POST /v1/checkouts/{id}/restore and /extend", () => {
  it("restore answers the recomputed checkout", async () => {
    const { fakes, of } = lifecycleFakes();
    const { url } = await serve.app(fakes);
    const res = await send(`${url}/v1/checkouts/${CHECKOUT_ID}/restore`, "POST");
    expect(await bodyOf(res)).toMatchObject({ id: CHECKOUT_ID, status: "paid", restored: true });
    expect(of("restoreCheckout")).toEqual([{ accountId: ACCOUNT_ID, actor: ACTOR, checkoutId: CHECKOUT_ID }]);
  });

  it("extend passes minutes, or nothing to clear the deadline", async () => {
    const { fakes, of } = lifecycleFakes();
    const { url } = await serve.app(fakes);
    expect((await send(`${url}/v1/checkouts/${CHECKOUT_ID}/extend`, "POST", { expires_in_minutes: 90 })).status).toBe(200);
    expect((await send(`${url}/v1/checkouts/${CHECKOUT_ID}/extend`, "POST", { expires_in_minutes: null })).status).toBe(200);
    expect(of("extendCheckout")).toEqual([
      { accountId: ACCOUNT_ID, actor: ACTOR, checkoutId: CHECKOUT_ID, expiresInMinutes: 90n },
      { accountId: ACCOUNT_ID, actor: ACTOR, checkoutId: CHECKOUT_ID },
    ]);
  });

  it.each([
    [{}],
    [{ expires_in_minutes: 0 }],
    [{ expires_in_minutes: 527_041 }],
    [{ expires_in_minutes: "60" }],
    [{ expires_in_minutes: 1.5 }],
    [{ expires_at: "x" }],
  ])("extend refuses %j with 422", async (body) => {
    const { fakes, of } = lifecycleFakes();
    const { url } = await serve.app(fakes);
    const res = await send(`${url}/v1/checkouts/${CHECKOUT_ID}/extend`, "POST", body);
    expect(res.status).toBe(422);
    expect(of("extendCheckout")).toEqual([]);
  });
});
