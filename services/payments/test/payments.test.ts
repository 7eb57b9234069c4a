import { EmbeddedPostgres, migrate } from "@c402/db";
import {
  decodeHeader,
  encodeHeader,
  parsePaymentPayload,
  preparedPayment,
  signExactEvmPayment,
  type PaymentPayload,
  type PaymentRequirements,
} from "@c402/x402";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { paymentsMigrations } from "../src";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { RehearsalSettlement } from "../src/domain/settlement/rehearsal";
import { settledEventOf } from "./support/settled-event";

const SELLER = "0x2222222222222222222222222222222222222222";
const checkouts = new Map<string, CheckoutForPayment>();
function addCheckout(over: Partial<CheckoutForPayment> = {}): CheckoutForPayment {
  const c: CheckoutForPayment = {
    id: `chk_${checkouts.size}`,
    accountId: "acct_seller",
    title: "Weather",
    priceAtomic: 100_000n,
    payTo: SELLER,
    armed: false,
    reusable: false,
    status: "open",
    ...over,
  };
  checkouts.set(c.id, c);
  return c;
}

describe("payments: rehearsal purchase flow", () => {
  let pg: EmbeddedPostgres;
  let payments: Payments;
  let rehearsal: RehearsalSettlement;
  let db: EmbeddedPostgres extends never ? never : any;
  let commits = 0;
  /** How far the service's clock runs ahead (an authorization's window passes without waiting). */
  let skewMs = 0;
  const buyer = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("payments");
    await migrate(database, paymentsMigrations);
    db = database.db;
    const now = () => new Date(Date.now() + skewMs);
    rehearsal = new RehearsalSettlement({ db: database.db, subjectSecret: "test-secret", onCommitted: () => commits++, now });
    payments = new Payments({
      db: database.db,
      checkouts: async (id) => {
        const c = checkouts.get(id);
        if (!c) throw Object.assign(new Error("no"), { slug: "not-found" });
        return c;
      },
      settlements: [rehearsal],
      now,
    });
  });
  afterAll(() => pg.close());

  async function pay(checkout: CheckoutForPayment, face: "live" | "test", mutate?: (p: PaymentPayload) => void, signer = buyer) {
    const { accepts } = await payments.quote(checkout.id, face);
    const payment = await signExactEvmPayment(signer, accepts[0] as PaymentRequirements);
    mutate?.(payment);
    return { header: encodeHeader(payment), payment };
  }

  const rows = async () => (await db.selectFrom("payments").select(["id"]).execute()).length;
  const outbox = async () => (await db.selectFrom("outbox").select(["seq"]).execute()).length;
  const settledEvent = (paymentId: string) => settledEventOf(db, paymentId);

  it("quotes one rehearsal requirement on the test face and on an unarmed live face", async () => {
    const c = addCheckout();
    for (const face of ["test", "live"] as const) {
      const q = await payments.quote(c.id, face);
      expect(q.settlement).toBe("simulated");
      expect(q.accepts).toEqual([
        {
          scheme: "exact",
          network: "eip155:84532",
          asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
          amount: "110500",
          payTo: SELLER,
          maxTimeoutSeconds: 300,
          extra: { name: "USDC rehearsal - no funds move", version: "2", checkoutId: c.id, rehearsal: true },
        },
      ]);
    }
  });

  it("answers 503 on an armed live face when no network can settle (the rehearsal face still works)", async () => {
    const c = addCheckout({ armed: true });
    await expect(payments.quote(c.id, "live")).rejects.toMatchObject({ slug: "unavailable" });
    expect((await payments.quote(c.id, "test")).settlement).toBe("simulated");
  });

  it("settles a rehearsal payment with a complete receipt and one outbox event", async () => {
    const c = addCheckout();
    const { header } = await pay(c, "test");
    const before = { rows: await rows(), outbox: await outbox(), commits };
    const r = await payments.submit(c.id, "test", header);
    expect(r.redelivered).toBe(false);
    expect(r.receipt).toMatchObject({
      checkout_id: c.id,
      network: "eip155:84532",
      price_atomic: 100_000n,
      provider_amount: 100_000n,
      platform_amount: null,
      fee_amount: 10_500n,
      total: 110_500n,
      payer: buyer.address,
      pay_to: SELLER,
      test_mode: true,
      delivery_outcome: "delivered",
    });
    expect(r.receipt.id).toMatch(/^pay_/);
    expect(r.receipt.subject).toMatch(/^sub_[0-9a-f]{32}$/);
    expect(r.receipt.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(r.settleResponse).toEqual({ success: true, transaction: r.receipt.tx_hash, network: "eip155:84532", payer: buyer.address });
    expect(await rows()).toBe(before.rows + 1);
    expect(await outbox()).toBe(before.outbox + 1);
    expect(commits).toBe(before.commits + 1);
    const event = await settledEvent(r.receipt.id);
    expect(event).toMatchObject({ paymentId: r.receipt.id, checkoutId: c.id, amountUsd: "0.100000", total: 110_500n, testMode: true, reusableCheckout: false });
  });

  it("a checkout with a platform cut: the cut out of the price, the fee on top, the platform's wallet and sold_by on the receipt and the event", async () => {
    const feeTo = "0x3333333333333333333333333333333333333333";
    const c = addCheckout({ platform: { feeBps: 250, feeTo }, soldBy: "market" });
    const r = await payments.submit(c.id, "test", (await pay(c, "test")).header);
    expect(r.receipt).toMatchObject({
      price_atomic: 100_000n,
      provider_amount: 97_500n,
      platform_amount: 2_500n,
      platform_fee_bps: 250,
      platform_fee_to: feeTo,
      fee_amount: 10_500n,
      total: 110_500n,
      sold_by: "market",
    });
    expect(await settledEvent(r.receipt.id)).toMatchObject({
      providerAmount: 97_500n,
      platformAmount: 2_500n,
      platformFeeTo: feeTo,
      soldBy: "market",
      total: 110_500n,
    });
  });

  it("says in the event whether the checkout keeps selling", async () => {
    const c = addCheckout({ reusable: true });
    const r = await payments.submit(c.id, "test", (await pay(c, "test")).header);
    expect(await settledEvent(r.receipt.id)).toMatchObject({ checkoutId: c.id, reusableCheckout: true });
  });

  it("redelivers the same receipt when the same payment is presented again, recording nothing", async () => {
    const c = addCheckout();
    const { header } = await pay(c, "test");
    const first = await payments.submit(c.id, "test", header);
    const before = { rows: await rows(), outbox: await outbox() };
    const again = await payments.submit(c.id, "test", header);
    expect(again.redelivered).toBe(true);
    expect(again.receipt.id).toBe(first.receipt.id);
    expect({ rows: await rows(), outbox: await outbox() }).toEqual(before);
  });

  it("redelivers a recorded payment whose authorization has expired since, recording nothing; an expired new one is refused", async () => {
    const c = addCheckout();
    const { header } = await pay(c, "test");
    const expiredUnused = (await pay(c, "test")).header;
    const first = await payments.submit(c.id, "test", header);
    const before = { rows: await rows(), outbox: await outbox() };
    skewMs = 2 * 3_600_000;
    try {
      const again = await payments.submit(c.id, "test", header);
      expect([again.redelivered, again.receipt.id]).toEqual([true, first.receipt.id]);
      await expect(payments.submit(c.id, "test", expiredUnused)).rejects.toMatchObject({ slug: "payment-required" });
      expect({ rows: await rows(), outbox: await outbox() }).toEqual(before);
    } finally {
      skewMs = 0;
    }
  });

  it("still redelivers a recorded payment once the checkout stopped selling; a new payment gets 410", async () => {
    const c = addCheckout();
    const { header } = await pay(c, "test");
    const first = await payments.submit(c.id, "test", header);
    const fresh = (await pay(c, "test")).header;
    c.status = "void";
    const again = await payments.submit(c.id, "test", header);
    expect(again).toMatchObject({ redelivered: true, receipt: { id: first.receipt.id } });
    await expect(payments.submit(c.id, "test", fresh)).rejects.toMatchObject({ slug: "gone" });
    await expect(payments.submit(c.id, "test", "not a payment")).rejects.toMatchObject({ slug: "gone" });
  });

  it.each([
    ["to", (p: PaymentPayload) => (p.payload.authorization.to = "0x3333333333333333333333333333333333333333")],
    ["value", (p: PaymentPayload) => (p.payload.authorization.value = "1")],
    ["validBefore", (p: PaymentPayload) => (p.payload.authorization.validBefore = String(BigInt(p.payload.authorization.validBefore) + 1n))],
  ])("never redelivers a settled payment re-presented with %s changed under the same signature", async (_field, change) => {
    const c = addCheckout();
    const { header, payment } = await pay(c, "test");
    const first = await payments.submit(c.id, "test", header);
    const tampered = structuredClone(payment);
    change(tampered);
    await expect(payments.submit(c.id, "test", encodeHeader(tampered))).rejects.toMatchObject({
      slug: "payment-required",
      extensions: { reason: "invalid_exact_evm_signature" },
    });
    expect((await payments.submit(c.id, "test", header)).receipt.id).toBe(first.receipt.id);
  });

  it("verifies a rehearsal payment without recording it, and refuses one already recorded as a used nonce", async () => {
    const c = addCheckout();
    const { accepts } = await payments.quote(c.id, "test");
    const requirement = accepts[0] as PaymentRequirements;
    const payload = parsePaymentPayload(decodeHeader((await pay(c, "test")).header));
    const before = await rows();
    await rehearsal.verify(c, payload, requirement);
    expect(await rows()).toBe(before);
    expect(await rehearsal.isRecorded(payload, requirement)).toBe(false);
    await payments.submit(c.id, "test", encodeHeader(payload));
    expect(await rehearsal.isRecorded(payload, requirement)).toBe(true);
    await expect(rehearsal.verify(c, payload, requirement)).rejects.toMatchObject({ extensions: { reason: "invalid_exact_evm_nonce_already_used" } });
  });

  it("settles concurrent duplicates once", async () => {
    const c = addCheckout();
    const { header } = await pay(c, "test");
    const before = await rows();
    const results = await Promise.all(Array.from({ length: 20 }, () => payments.submit(c.id, "test", header)));
    expect(new Set(results.map((r) => r.receipt.id)).size).toBe(1);
    expect(results.filter((r) => !r.redelivered)).toHaveLength(1);
    expect(await rows()).toBe(before + 1);
  });

  it("keeps the subject stable per wallet and seller, different across sellers", async () => {
    const a1 = addCheckout();
    const a2 = addCheckout();
    const b = addCheckout({ accountId: "acct_other" });
    const s = async (c: CheckoutForPayment) => (await payments.submit(c.id, "test", (await pay(c, "test")).header)).receipt.subject;
    const [x, y, z] = [await s(a1), await s(a2), await s(b)];
    expect(x).toBe(y);
    expect(z).not.toBe(x);
    expect(x).not.toContain(buyer.address.slice(2, 10).toLowerCase());
  });

  describe("refuses", () => {
    const cases: [string, (p: PaymentPayload) => void, string][] = [
      [
        "a wrong signature",
        (p) => (p.payload.signature = p.payload.signature.slice(0, 10) + (p.payload.signature[10] === "a" ? "b" : "a") + p.payload.signature.slice(11)),
        "invalid_exact_evm_signature",
      ],
      [
        "a signature by another wallet",
        (p) => (p.payload.authorization.from = privateKeyToAccount(generatePrivateKey()).address),
        "invalid_exact_evm_signature",
      ],
      ["a wrong amount in the authorization", (p) => (p.payload.authorization.value = "110499"), "invalid_exact_evm_payload_authorization_value_mismatch"],
      ["an amount that matches no requirement", (p) => (p.accepted = { ...(p.accepted as PaymentRequirements), amount: "1" }), "no_matching_requirements"],
      ["another recipient", (p) => (p.payload.authorization.to = "0x3333333333333333333333333333333333333333"), "invalid_exact_evm_recipient_mismatch"],
      [
        "an expired authorization",
        (p) => (p.payload.authorization.validBefore = String(Math.floor(Date.now() / 1000) - 1)),
        "invalid_exact_evm_payload_authorization_valid_before",
      ],
      [
        "an authorization not valid yet",
        (p) => (p.payload.authorization.validAfter = String(Math.floor(Date.now() / 1000) + 600)),
        "invalid_exact_evm_payload_authorization_valid_after",
      ],
      ["another network", (p) => (p.accepted = { ...(p.accepted as PaymentRequirements), network: "eip155:8453" }), "no_matching_requirements"],
      ["another scheme", (p) => (p.accepted = { ...(p.accepted as PaymentRequirements), scheme: "upto" }), "invalid_scheme"],
    ];
    it.each(cases)("%s", async (_name, mutate, reason) => {
      const c = addCheckout();
      const { header } = await pay(c, "test", mutate);
      const before = await rows();
      await expect(payments.submit(c.id, "test", header)).rejects.toMatchObject({ slug: "payment-required", extensions: { reason } });
      expect(await rows()).toBe(before);
    });

    it.each([
      ["not base64", "%%%"],
      ["not JSON", Buffer.from("nope").toString("base64")],
      ["oversized", Buffer.from(JSON.stringify({ x: "a".repeat(40_000) })).toString("base64")],
      ["wrong version", encodeHeader({ x402Version: 9 })],
      ["missing payload", encodeHeader({ x402Version: 2, accepted: {} })],
    ])("a malformed header (%s)", async (_name, header) => {
      const c = addCheckout();
      await expect(payments.submit(c.id, "test", header)).rejects.toMatchObject({ slug: "payment-required" });
    });

    it("a rehearsal payment presented to an armed live face", async () => {
      const c = addCheckout({ armed: true });
      const { header } = await pay(c, "test");
      await expect(payments.submit(c.id, "live", header)).rejects.toMatchObject({
        slug: "payment-required",
        extensions: { reason: "rehearsal_payment_on_live_face" },
      });
    });

    it("live settlement while no chain is configured, with 503", async () => {
      const c = addCheckout({ armed: true });
      const { header } = await pay(addCheckout(), "test");
      await expect(payments.submit(c.id, "live", header)).rejects.toMatchObject({ slug: "payment-required" });
      const live = await signExactEvmPayment(buyer, {
        scheme: "exact",
        network: "eip155:8453",
        asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        amount: "110500",
        payTo: SELLER,
        maxTimeoutSeconds: 300,
        extra: { name: "USD Coin", version: "2" },
      });
      await expect(payments.submit(c.id, "live", encodeHeader(live))).rejects.toMatchObject({ slug: "unavailable" });
    });

    it("an authorization already used on another checkout", async () => {
      const c1 = addCheckout();
      const c2 = addCheckout();
      const { header } = await pay(c1, "test");
      await payments.submit(c1.id, "test", header);
      // Every requirement names its checkout (extra.checkoutId), so it matches nothing c2 issued.
      await expect(payments.submit(c2.id, "test", header)).rejects.toMatchObject({
        slug: "payment-required",
        extensions: { reason: "no_matching_requirements" },
      });
    });

    it("an expired or void checkout, with 410", async () => {
      for (const status of ["expired", "void"] as const) {
        const c = addCheckout({ status });
        await expect(payments.quote(c.id, "test")).rejects.toMatchObject({ slug: "gone" });
      }
    });
  });

  it("answers thousands of random malformed headers with a payment-required problem, never another error", async () => {
    const c = addCheckout();
    const valid = encodeHeader(await signExactEvmPayment(buyer, (await payments.quote(c.id, "test")).accepts[0] as PaymentRequirements));
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const junk = (): string => {
      switch (rand(8)) {
        case 0:
          return Array.from({ length: rand(200) }, () => String.fromCharCode(32 + rand(95))).join("");
        case 1: {
          const i = rand(valid.length);
          return valid.slice(0, i) + "A" + valid.slice(i + 1);
        }
        case 2:
          return valid.slice(0, rand(valid.length));
        case 3:
          return encodeHeader({ x402Version: 2, accepted: { __proto__: { amount: "1" } }, payload: { signature: 1, authorization: [] } });
        case 4:
          return encodeHeader({
            x402Version: 2,
            payload: {
              signature: "0x" + "f".repeat(130),
              authorization: {
                from: "0x" + "1".repeat(40),
                to: Number.MAX_VALUE * 10,
                value: "99999999999999999999999999999999999999999999999999999999999999999999999999999999",
                validAfter: "0",
                validBefore: "-1",
                nonce: "0x",
              },
            },
          });
        case 5:
          return Buffer.from("[".repeat(5000)).toString("base64");
        case 6:
          return Buffer.from([0xff, 0xfe, 0xfd, rand(256)]).toString("base64");
        default:
          return encodeHeader(JSON.parse(Buffer.from(valid, "base64").toString()).payload);
      }
    };
    for (let i = 0; i < 2000; i++) {
      const header = junk();
      const err = await payments.submit(c.id, "test", header).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (err === undefined) continue; // a mutation that happened to keep the payment valid
      expect(err).toMatchObject({ slug: "payment-required" });
    }
  });

  it("rehearses on a paid single-shot checkout (rehearsals never depend on status)", async () => {
    const c = addCheckout({ status: "paid", armed: true });
    const { header } = await pay(c, "test");
    expect((await payments.submit(c.id, "test", header)).receipt.test_mode).toBe(true);
    await expect(payments.quote(c.id, "live")).rejects.toMatchObject({ slug: "gone" });
  });

  it("prepares typed data that, once signed, pays", async () => {
    const c = addCheckout();
    const answer = await payments.prepare(c.id, "test", { payer: buyer.address });
    expect(answer.network).toBe("eip155:84532");
    const prepared = preparedPayment(answer.requirement, answer.authorization!, "http://127.0.0.1:4020/c/x/test");
    expect(prepared.typedData.domain).toMatchObject({ name: "USDC rehearsal - no funds move", version: "2", chainId: 84532 });
    expect(prepared.typedData.message).toMatchObject({ from: buyer.address, to: SELLER, value: "110500" });
    const signature = await buyer.signTypedData({
      domain: prepared.typedData.domain,
      types: { TransferWithAuthorization: prepared.typedData.types.TransferWithAuthorization },
      primaryType: "TransferWithAuthorization",
      message: {
        ...prepared.typedData.message,
        value: BigInt(prepared.typedData.message.value),
        validAfter: BigInt(prepared.typedData.message.validAfter),
        validBefore: BigInt(prepared.typedData.message.validBefore),
        nonce: prepared.typedData.message.nonce as `0x${string}`,
      },
    });
    const stub = { ...prepared.payloadStub, payload: { ...prepared.payloadStub.payload, signature } };
    const r = await payments.submit(c.id, "test", encodeHeader(stub));
    expect(r.receipt.payer).toBe(buyer.address);
    await expect(payments.prepare(c.id, "test", { payer: "nope" })).rejects.toMatchObject({ slug: "invalid-request" });
    await expect(payments.prepare(c.id, "test", { payer: buyer.address, network: "eip155:1" })).rejects.toMatchObject({
      slug: "invalid-request",
    });
  });
});
