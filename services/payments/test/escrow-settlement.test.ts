import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EVENT_TYPES, escrowEventsV1 } from "@c402/contracts";
import { EmbeddedPostgres, migrate } from "@c402/db";
import { newId } from "@c402/ids";
import { escrowDepositTypedData, escrowId, escrowTotal, ZERO_ADDRESS, type EscrowTerms } from "@c402/evm-contracts";
import { ProblemError } from "@c402/problems";
import { encodeHeader, EVM_NETWORKS, preparedEscrowDeposit, randomNonce, type PaymentRequirements } from "@c402/x402";
import type { Kysely } from "kysely";
import { getAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { paymentsMigrations } from "../src";
import { applyEscrowOutcome } from "../src/events/escrow-outcomes";
import type { EscrowNetwork } from "../src/domain/escrow-sale";
import { Payments } from "../src/domain/payments";
import { REHEARSAL_DOMAIN, REHEARSAL_NETWORK, type CheckoutForPayment } from "../src/domain/requirements";
import { EscrowSettlement, type DepositAnswer, type DepositCall } from "../src/domain/settlement/escrow";
import { PaidOnDelivery, type DeliveryRecord, type OriginDelivery } from "../src/domain/settlement/paid-on-delivery";
import { RehearsalSettlement } from "../src/domain/settlement/rehearsal";
import { paymentsStore as store, type PaymentsDb } from "../src/store/payments-store";
import { settledEventOf } from "./support/settled-event";

const SELLER = getAddress("0x2222222222222222222222222222222222222222");
const ARBITER = getAddress("0x3333333333333333333333333333333333333333");
const PLATFORM = getAddress("0x4444444444444444444444444444444444444444");
const FEE_WALLET = getAddress("0x5555555555555555555555555555555555555555");
const CONTRACT = getAddress("0x6666666666666666666666666666666666666666");
const LIVE = EVM_NETWORKS["eip155:8453"];
const REHEARSAL = EVM_NETWORKS[REHEARSAL_NETWORK];

const liveNetwork: EscrowNetwork = {
  network: "eip155:8453",
  chainId: LIVE.chainId,
  contract: CONTRACT,
  token: { address: getAddress(LIVE.usdc), name: LIVE.name, version: LIVE.version },
  feeTo: FEE_WALLET,
};
const rehearsalNetwork: EscrowNetwork = {
  network: REHEARSAL_NETWORK,
  chainId: REHEARSAL.chainId,
  contract: CONTRACT,
  token: { address: getAddress(REHEARSAL.usdc), ...REHEARSAL_DOMAIN },
  feeTo: FEE_WALLET,
};

/** A relay checkout's origin as fulfillment calls it: charged or not as the test sets, each answer recorded under its payment. */
class FakeOrigin implements OriginDelivery {
  charged = true;
  delivered = new Map<string, DeliveryRecord>();
  /** Deposits already asked when the origin was called: it must be called before any money moves. */
  depositsAtCall: number[] = [];
  constructor(private readonly deposits: FakeDeposits) {}
  async deliver(req: { paymentId: string }): Promise<DeliveryRecord> {
    this.depositsAtCall.push(this.deposits.calls.length);
    const record: DeliveryRecord = {
      outcome: this.charged ? "delivered" : "origin_failed",
      charged: this.charged,
      status: this.charged ? 200 : 502,
      contentType: "application/json",
      body: Buffer.from(JSON.stringify({ tracking: "1Z999" })),
      latencyMs: 5,
      bytes: 20,
      reason: this.charged ? "" : "origin_error",
    };
    if (this.charged) this.delivered.set(req.paymentId, record);
    return record;
  }
  async conclude(paymentId: string) {
    return this.delivered.get(paymentId);
  }
  async check() {}
}

/** The escrow service's Deposit as a test double: records every call, answers what the test sets (or fails, as an unreachable service). */
class FakeDeposits {
  calls: DepositCall[] = [];
  answer: DepositAnswer | Error = { outcome: "held", replayed: false, txHash: `0x${"ab".repeat(32)}` };
  async deposit(call: DepositCall): Promise<DepositAnswer> {
    this.calls.push(call);
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

const checkouts = new Map<string, CheckoutForPayment>();
function addCheckout(over: Partial<CheckoutForPayment> = {}): CheckoutForPayment {
  const c: CheckoutForPayment = {
    id: newId("escrowCheckout"),
    accountId: "acct_seller",
    title: "Vintage lamp",
    priceAtomic: 10_000_000n,
    payTo: SELLER,
    armed: true,
    reusable: true,
    status: "open",
    escrow: { preset: "standard", settleSeconds: 7 * 86_400, holdSeconds: 14 * 86_400, backstopSeconds: 30 * 86_400, arbiterEvm: ARBITER },
    ...over,
  };
  checkouts.set(c.id, c);
  return c;
}

async function rejection(p: Promise<unknown>): Promise<{ slug: string; reason: unknown; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ProblemError) return { slug: err.slug, reason: err.extensions.reason, message: err.message };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("payments: escrow sales (EscrowSettlement, ADR 19)", () => {
  let pg: EmbeddedPostgres;
  let db: PaymentsDb;
  let payments: Payments;
  let skewMs = 0;
  const deposits = new FakeDeposits();
  const origin = new FakeOrigin(deposits);
  const buyer = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    pg = await EmbeddedPostgres.open();
    const database = pg.forSchema("payments");
    await migrate(database, paymentsMigrations);
    db = database.db as PaymentsDb;
    const now = () => new Date(Date.now() + skewMs);
    const paidOnDelivery = new PaidOnDelivery({ db, delivery: origin, settleTimeoutMs: 15_000, now });
    const checkoutOf = async (id: string) => {
      const c = checkouts.get(id);
      if (!c) throw new ProblemError("not-found", "No such checkout.");
      return c;
    };
    const common = { db, subjectSecret: "test-secret", now, deposits, paidOnDelivery, checkouts: checkoutOf };
    payments = new Payments({
      db,
      checkouts: checkoutOf,
      settlements: [
        new RehearsalSettlement({ db, subjectSecret: "test-secret", onCommitted: () => {}, now }),
        new EscrowSettlement({ ...common, testMode: true, network: rehearsalNetwork }),
        new EscrowSettlement({ ...common, testMode: false, network: liveNetwork }),
      ],
      now,
    });
  });
  afterAll(() => pg.close());
  beforeEach(() => {
    skewMs = 0;
    deposits.calls = [];
    deposits.answer = { outcome: "held", replayed: false, txHash: `0x${"ab".repeat(32)}` };
  });

  const rowCount = async () => (await db.selectFrom("payments").select("id").execute()).length;
  const outboxCount = async () => (await outbox().execute()).length;
  /** The outbox's rows (payments' schema holds it beside the payments). */
  const outbox = (key?: string) => {
    const all = (db as unknown as Kysely<any>).selectFrom("outbox").select("seq");
    return key === undefined ? all : all.where("key", "=", key);
  };

  /** The terms a deposit by `payer` with `salt` carries, as the contract reads them. */
  function termsOf(
    c: CheckoutForPayment,
    payer: string,
    salt: Hex,
    split = { amount: 10_000_000n, platformAmount: 0n, platform: ZERO_ADDRESS as Hex },
  ): EscrowTerms {
    return {
      buyer: getAddress(payer),
      seller: SELLER,
      platform: split.platform,
      feeTo: FEE_WALLET,
      arbiter: ARBITER,
      amount: split.amount,
      platformAmount: split.platformAmount,
      fee: 120_000n,
      settleWindow: BigInt(c.escrow?.settleSeconds ?? 0),
      holdWindow: BigInt(c.escrow?.holdSeconds ?? 0),
      backstopWindow: BigInt(c.escrow?.backstopSeconds ?? 0),
      preset: 1,
      salt,
    };
  }

  /**
   * A buyer's escrow payment as a wallet makes it: prepare, sign the typed
   * data the contract package builds for those terms, bring the salt back.
   * `tamper` changes the payload after signing.
   */
  async function pay(
    c: CheckoutForPayment,
    face: "live" | "test",
    opts: { signer?: PrivateKeyAccount; payer?: string; tamper?: (p: { authorization: Record<string, string>; salt: string; signature: string }) => void } = {},
  ) {
    const payer = opts.payer ?? buyer.address;
    const prepared = await payments.prepare(c.id, face, { payer });
    const a = prepared.authorization;
    if (!a || prepared.salt === undefined) throw new Error("an escrow prepare answers an authorization and a salt");
    const at = face === "live" ? liveNetwork : rehearsalNetwork;
    const typed = escrowDepositTypedData({
      chainId: at.chainId,
      escrow: at.contract,
      token: at.token,
      terms: termsOf(c, payer, prepared.salt as Hex),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
    });
    const signature = await (opts.signer ?? buyer).signTypedData(typed);
    const payload = { authorization: { ...a } as Record<string, string>, salt: prepared.salt, signature };
    opts.tamper?.(payload);
    const header = encodeHeader({ x402Version: 2, resource: { url: `https://pay.example/e/${c.id}` }, accepted: prepared.requirement, payload });
    return { header, prepared, typed };
  }

  it("issues one escrow requirement: scheme escrow, payTo the contract, price plus the escrow fee, the terms in extra.escrow", async () => {
    const c = addCheckout();
    const q = await payments.quote(c.id, "live");
    expect(q.accepts).toHaveLength(1);
    const r = q.accepts[0] as PaymentRequirements;
    expect(r).toMatchObject({ scheme: "escrow", network: "eip155:8453", asset: getAddress(LIVE.usdc), payTo: CONTRACT });
    // $10.00 + 1% + $0.02 = $10.12, to the unit; the standard fee would be 0.5% + $0.01 = $0.06.
    expect(r.amount).toBe("10120000");
    expect(q.price).toMatchObject({ price: 10_000_000n, feeAmount: 120_000n, total: 10_120_000n });
    expect(r.extra).toMatchObject({ name: "USD Coin", version: "2", checkoutId: c.id });
    const escrow = r.extra.escrow as Record<string, unknown>;
    expect(escrow).toMatchObject({ preset: "standard", settle_seconds: 604_800, hold_seconds: 1_209_600, backstop_seconds: 2_592_000, arbiter: ARBITER });
    expect(escrow.if_nobody_acts).toBe("If nobody acts, the payment is released to the seller 7 days after the deposit.");
    expect(Object.keys(escrow.exits as object)).toEqual(["seller_paid", "buyer_refunded"]);
    // A pure function of the checkout: the same requirement a minute later (a presented payment matches it exactly).
    skewMs = 60_000;
    expect((await payments.quote(c.id, "live")).accepts).toEqual(q.accepts);
  });

  it("takes a platform cut out of the price and the escrow fee on top", async () => {
    const c = addCheckout({ priceAtomic: 1_000_000n, platform: { feeBps: 500, feeTo: PLATFORM } });
    const r = (await payments.quote(c.id, "live")).accepts[0] as PaymentRequirements;
    // $1.00: cut 5% = 50000, fee 1% + $0.02 = 30000.
    expect(r.amount).toBe("1030000");
    const { header, prepared } = await pay(c, "live", {});
    const terms = { ...termsOf(c, buyer.address, prepared.salt as Hex, { amount: 950_000n, platformAmount: 50_000n, platform: PLATFORM }), fee: 30_000n };
    expect(escrowTotal(terms)).toBe(1_030_000n);
    // The deposit's terms carry the same split (the payload here was signed over other terms: refused, nothing asked).
    expect((await rejection(payments.submit(c.id, "live", header))).reason).toBe("invalid_exact_evm_signature");
    expect(prepared.authorization?.nonce).toBe(escrowId(terms, LIVE.chainId, CONTRACT));
  });

  it("lists only escrow requirements for an escrow checkout, and none for a plain one", async () => {
    const c = addCheckout();
    const test = await payments.quote(c.id, "test");
    expect(test.accepts.map((r) => [r.scheme, r.network, r.extra.rehearsal])).toEqual([["escrow", REHEARSAL_NETWORK, true]]);
    const plain = addCheckout({ id: "chk_plain", escrow: undefined, armed: false });
    expect((await payments.quote(plain.id, "test")).accepts.map((r) => r.scheme)).toEqual(["exact"]);
    // An escrow checkout naming no EVM arbiter offers no rail here.
    const noArbiter = addCheckout({ escrow: { preset: "instant", settleSeconds: 3_600, holdSeconds: 3_600, backstopSeconds: 7_200 } });
    expect((await rejection(payments.quote(noArbiter.id, "live"))).slug).toBe("unavailable");
  });

  it("prepares the contract's typed data: a ReceiveWithAuthorization to the contract whose nonce is the terms' escrow id, with a fresh salt", async () => {
    const c = addCheckout();
    const first = await pay(c, "live");
    const a = first.prepared.authorization as NonNullable<typeof first.prepared.authorization>;
    const terms = termsOf(c, buyer.address, first.prepared.salt as Hex);
    expect(first.typed.primaryType).toBe("ReceiveWithAuthorization");
    expect(first.typed.message).toEqual({
      from: buyer.address,
      to: CONTRACT,
      value: BigInt(a.value),
      validAfter: 0n,
      validBefore: BigInt(a.validBefore),
      nonce: escrowId(terms, LIVE.chainId, CONTRACT),
    });
    // What the gateway's prepare answer shows a wallet (@c402/x402) is the contract package's typed data.
    const shown = preparedEscrowDeposit(first.prepared.requirement, a, `https://pay.example/e/${c.id}`, first.prepared.salt as string);
    expect(shown.typedData.primaryType).toBe(first.typed.primaryType);
    expect(shown.typedData.domain).toEqual(first.typed.domain);
    expect(shown.typedData.types.ReceiveWithAuthorization).toEqual(first.typed.types.ReceiveWithAuthorization);
    expect(Object.fromEntries(Object.entries(shown.typedData.message).map(([k, v]) => [k, String(v)]))).toEqual(
      Object.fromEntries(Object.entries(first.typed.message).map(([k, v]) => [k, String(v)])),
    );
    expect(shown.payloadStub.payload.salt).toBe(first.prepared.salt);
    expect(a.to).toBe(CONTRACT);
    expect(a.value).toBe("10120000");
    expect(a.nonce).toBe(escrowId(terms, LIVE.chainId, CONTRACT));
    const second = await payments.prepare(c.id, "live", { payer: buyer.address });
    expect(second.salt).not.toBe(first.prepared.salt);
    expect(second.authorization?.nonce).not.toBe(a.nonce);
    // The contract refuses a deposit whose buyer is the seller or the arbiter: so does prepare (422).
    expect((await rejection(payments.prepare(c.id, "live", { payer: ARBITER }))).slug).toBe("invalid-request");
    expect((await rejection(payments.prepare(c.id, "live", { payer: "not-an-address" }))).slug).toBe("invalid-request");
  });

  it("ends a paid deposit held: the goods, the escrow asked to deposit once, no receipt, no payment.settled", async () => {
    const c = addCheckout();
    const before = await outboxCount();
    const { header, prepared } = await pay(c, "live");
    const r = await payments.submit(c.id, "live", header, { handoffId: "handoff-nonce-0123456789" });
    expect(r.status).toBe("held");
    expect(r.redelivered).toBe(false);
    expect(r.receipt).toMatchObject({ status: "held", test_mode: false, pay_to: SELLER, fee_amount: 120_000n, total: 10_120_000n });
    expect(deposits.calls).toHaveLength(1);
    const call = deposits.calls[0] as DepositCall;
    expect(call).toMatchObject({ paymentId: r.receipt.id, checkoutId: c.id, network: "eip155:8453", testMode: false, handoffId: "handoff-nonce-0123456789" });
    expect(call.terms).toEqual(termsOf(c, buyer.address, prepared.salt as Hex));
    expect(call.authorization.nonce).toBe(escrowId(call.terms, LIVE.chainId, CONTRACT));
    expect(await outboxCount()).toBe(before);
    expect((await rejection(payments.receipt(r.receipt.id))).slug).toBe("not-found");
    // The handoff page learns of it (escrow-held payments carry the nonce too).
    expect((await payments.handoff(c.id, "handoff-nonce-0123456789")).id).toBe(r.receipt.id);

    // Presented again: the recorded outcome, the escrow not asked again.
    const again = await payments.submit(c.id, "live", header);
    expect(again).toMatchObject({ status: "held", redelivered: true });
    expect(again.receipt.id).toBe(r.receipt.id);
    expect(deposits.calls).toHaveLength(1);
  });

  it("refuses a deposit whose terms were not the ones prepared, writing nothing", async () => {
    const c = addCheckout();
    const other = privateKeyToAccount(generatePrivateKey());
    const rows = await rowCount();
    const cases: [string, Parameters<typeof pay>[2], string][] = [
      ["a nonce that is not the escrow id", { tamper: (p) => (p.authorization.nonce = randomNonce()) }, "invalid_escrow_nonce"],
      ["another salt", { tamper: (p) => (p.salt = randomNonce()) }, "invalid_escrow_nonce"],
      ["another payer's signature", { signer: other }, "invalid_exact_evm_signature"],
      [
        "a payer swapped after signing",
        { tamper: (p) => (p.authorization.from = other.address) },
        // The terms name the buyer: with another one their escrow id is another.
        "invalid_escrow_nonce",
      ],
      ["no salt", { tamper: (p) => delete (p as Partial<typeof p>).salt }, "invalid_escrow_salt_missing"],
      ["another amount", { tamper: (p) => (p.authorization.value = "10119999") }, "invalid_exact_evm_payload_authorization_value_mismatch"],
    ];
    for (const [what, opts, reason] of cases) {
      const { header } = await pay(c, "live", opts);
      const refused = await rejection(payments.submit(c.id, "live", header));
      expect([what, refused.slug, refused.reason]).toEqual([what, "payment-required", reason]);
    }
    // Expired: the service's clock passes validBefore.
    const { header } = await pay(c, "live");
    skewMs = 400_000;
    expect((await rejection(payments.submit(c.id, "live", header))).reason).toBe("invalid_exact_evm_payload_authorization_valid_before");
    expect(await rowCount()).toBe(rows);
    expect(deposits.calls).toHaveLength(0);
  });

  it("fails a deposit the escrow contract refuses (nothing charged), and answers the same for it again", async () => {
    const c = addCheckout();
    deposits.answer = { outcome: "refused", reason: "transfer amount exceeds balance" };
    const { header } = await pay(c, "live");
    const refused = await rejection(payments.submit(c.id, "live", header));
    expect(refused).toMatchObject({ slug: "payment-required", reason: "invalid_escrow_deposit_refused" });
    expect(refused.message).toContain("transfer amount exceeds balance");
    expect((await rejection(payments.submit(c.id, "live", header))).reason).toBe("invalid_escrow_deposit_refused");
    expect(deposits.calls).toHaveLength(1);
  });

  it("answers pending while the deposit is unconfirmed, and asks the escrow again when the payment is presented again", async () => {
    const c = addCheckout();
    deposits.answer = { outcome: "pending", replayed: false };
    const { header } = await pay(c, "live");
    expect((await payments.submit(c.id, "live", header)).status).toBe("pending");
    deposits.answer = { outcome: "held", replayed: true };
    const again = await payments.submit(c.id, "live", header);
    expect(again).toMatchObject({ status: "held", redelivered: true });
    expect(deposits.calls.map((d) => d.paymentId)).toEqual([again.receipt.id, again.receipt.id]);
  });

  it("calls a relay checkout's origin before anything moves: a charged answer is deposited and held with it; an uncharged one deposits nothing", async () => {
    const relay = { url: "https://origin.example/lamp", method: "GET", oneOffCredential: false, testDeliveryDailyCap: 25 };
    const c = addCheckout({ relay });
    const { header } = await pay(c, "live");
    const r = await payments.submit(c.id, "live", header, { params: { size: "large" } });
    expect(r).toMatchObject({ status: "held", receipt: { fulfillment: "relay", status: "held" }, delivery: { charged: true, status: 200 } });
    expect(origin.depositsAtCall.at(-1)).toBe(0);
    expect(deposits.calls).toHaveLength(1);
    // Presented again: the recorded answer, the origin not called again, nothing deposited again.
    const again = await payments.submit(c.id, "live", header);
    expect(again).toMatchObject({ status: "held", redelivered: true, delivery: { charged: true } });
    expect(origin.depositsAtCall).toHaveLength(1);
    expect(deposits.calls).toHaveLength(1);

    origin.charged = false;
    const rows = await rowCount();
    const { header: second } = await pay(c, "live");
    expect((await rejection(payments.submit(c.id, "live", second))).slug).toBe("upstream-failed");
    expect(deposits.calls).toHaveLength(1);
    // The claim is released: nothing is owed, the same payment may be presented again.
    expect(await rowCount()).toBe(rows);
    origin.charged = true;
  });

  it("resumes a deposit whose escrow service did not answer: the payment presented again, or the sweep once quiet, asks again", async () => {
    const c = addCheckout();
    deposits.answer = new ProblemError("unavailable", "A dependency of this service did not answer in time.");
    const { header } = await pay(c, "live");
    expect((await rejection(payments.submit(c.id, "live", header))).slug).toBe("unavailable");
    const paymentId = deposits.calls[0]?.paymentId as string;
    expect((await db.selectFrom("payments").select("status").where("id", "=", paymentId).executeTakeFirstOrThrow()).status).toBe("claimed");
    // A rail's own sweep (LiveEvmSettlement's, on the same network) never sees it: it would try to settle it itself.
    const later = new Date(Date.now() + 3_600_000);
    expect((await store.unfinished(db, false, later, 100, ["eip155:8453"], "plain")).map((r) => r.id)).not.toContain(paymentId);
    expect((await store.unfinished(db, false, later, 100, ["eip155:8453"], "escrow")).map((r) => r.id)).toContain(paymentId);
    deposits.answer = { outcome: "held", replayed: true };
    // Not quiet yet: the sweep leaves it to the request that may still be asking.
    await payments.sweep();
    expect(deposits.calls).toHaveLength(1);
    skewMs = 60_000;
    await payments.sweep();
    expect(deposits.calls.map((d) => d.paymentId)).toEqual([paymentId, paymentId]);
    expect(deposits.calls[1]?.terms).toEqual(deposits.calls[0]?.terms);
    expect((await db.selectFrom("payments").select("status").where("id", "=", paymentId).executeTakeFirstOrThrow()).status).toBe("held");
  });

  it("rehearses at the test face: a test escrow (test_mode true), signed under the rehearsal domain, never the live one", async () => {
    const c = addCheckout();
    const { header, typed } = await pay(c, "test");
    expect(typed.domain).toMatchObject({ name: REHEARSAL_DOMAIN.name, chainId: REHEARSAL.chainId });
    const r = await payments.submit(c.id, "test", header);
    expect(r).toMatchObject({ status: "held", receipt: { test_mode: true, network: REHEARSAL_NETWORK } });
    expect(deposits.calls).toEqual([expect.objectContaining({ testMode: true, network: REHEARSAL_NETWORK })]);
    // A rehearsal payment at the live face is refused before anything is asked.
    expect((await rejection(payments.submit(c.id, "live", header))).reason).toBe("rehearsal_payment_on_live_face");
    expect(deposits.calls).toHaveLength(1);
  });

  describe("the escrow's close (escrow.released, escrow.refunded)", () => {
    function closeEvent(type: "released" | "refunded", paymentId: string, txHash: string): Uint8Array {
      const escrow = create(escrowEventsV1.EscrowSnapshotSchema, {
        paymentId,
        state: type,
        depositedAt: timestampFromDate(new Date()),
      });
      return type === "released"
        ? toBinary(escrowEventsV1.EscrowReleasedSchema, create(escrowEventsV1.EscrowReleasedSchema, { escrow, txHash, by: "approve" }))
        : toBinary(escrowEventsV1.EscrowRefundedSchema, create(escrowEventsV1.EscrowRefundedSchema, { escrow, txHash, by: "cancel" }));
    }

    it("settles a released payment once: its receipt appears and payment.settled goes out once", async () => {
      const c = addCheckout();
      const { header } = await pay(c, "live");
      const { receipt } = await payments.submit(c.id, "live", header);
      const release = `0x${"cd".repeat(32)}`;
      const at = new Date("2026-12-10T09:30:00Z");
      expect(await applyEscrowOutcome(db, EVENT_TYPES.escrowReleased, closeEvent("released", receipt.id, release), at)).toBe(true);
      const settled = await payments.receipt(receipt.id);
      expect(settled).toMatchObject({ status: "settled", tx_hash: release, settled_at: at });
      const event = await settledEventOf(db, receipt.id);
      expect(event).toMatchObject({ paymentId: receipt.id, checkoutId: c.id, txHash: release });
      // Delivered again (or a second close): nothing moves, no second event.
      expect(await applyEscrowOutcome(db, EVENT_TYPES.escrowReleased, closeEvent("released", receipt.id, release), at)).toBe(false);
      expect(await applyEscrowOutcome(db, EVENT_TYPES.escrowRefunded, closeEvent("refunded", receipt.id, release), at)).toBe(false);
      expect((await outbox(receipt.id).execute()).length).toBe(1);
      // The buyer presenting the payment again now gets the settled sale.
      expect(await payments.submit(c.id, "live", header)).toMatchObject({ status: "settled", redelivered: true });
    });

    it("marks a refunded payment refunded: no receipt, no payment.settled", async () => {
      const c = addCheckout();
      const { header } = await pay(c, "live");
      const { receipt } = await payments.submit(c.id, "live", header);
      const refund = `0x${"ef".repeat(32)}`;
      expect(await applyEscrowOutcome(db, EVENT_TYPES.escrowRefunded, closeEvent("refunded", receipt.id, refund), new Date())).toBe(true);
      expect(await applyEscrowOutcome(db, EVENT_TYPES.escrowReleased, closeEvent("released", receipt.id, refund), new Date())).toBe(false);
      expect((await rejection(payments.receipt(receipt.id))).slug).toBe("not-found");
      expect((await outbox(receipt.id).execute()).length).toBe(0);
      expect((await rejection(payments.submit(c.id, "live", header))).slug).toBe("gone");
    });
  });
});
