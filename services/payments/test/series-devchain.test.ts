import { TestUSDC } from "@c402/evm-contracts";
import { breakdown } from "@c402/money";
import { decodeHeader, heldPeriodNonce, type ExactEvmAuthorization, type PaymentRequirements } from "@c402/x402";
import { createWalletClient, getAddress, http, parseSignature, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { Facilitator } from "../src/domain/facilitator";
import { Payments } from "../src/domain/payments";
import type { CheckoutForPayment } from "../src/domain/requirements";
import { SeriesCharges } from "../src/domain/series-charges";
import { RehearsalSettlement } from "../src/domain/settlement/rehearsal";
import type { LiveEvmSettlement } from "../src/domain/settlement/live-evm";
import { liveCheckout, openSagaFixture, type SagaFixture } from "./support/devchain-payments";
import { liveSaga } from "./support/live-saga";
import { preparedSeries, signedCancel, signedHeader } from "./support/series";
import { settledEventOf } from "./support/settled-event";

const DAY = 86_400;
const PRICE = 100_000n;
const SPLIT = breakdown(PRICE, { platformFeeBps: 0, rule: "standard" });

/**
 * A live recurring series (ADR 20) on the devchain: the quote, the prepared
 * held periods, the purchase that verifies every held payload before period 0
 * is recorded, ChargeHeldPeriod on the chain's clock (moved with
 * evm_increaseTime) and CancelHeldAuthorizations on chain. Every purchase is
 * made before the chain's clock moves (period 0's authorization is valid for
 * minutes by the wall clock).
 */
describe("a live series on the devchain", () => {
  let fixture: SagaFixture;
  let payments: Payments;
  let series: SeriesCharges;
  let saga: LiveEvmSettlement;
  const checkouts = new Map<string, CheckoutForPayment>();
  const seriesCheckout = (periods = 3) => {
    const c = liveCheckout({ schedule: { intervalDays: 1, periods } });
    checkouts.set(c.id, c);
    return c;
  };

  beforeAll(async () => {
    fixture = await openSagaFixture();
    const db = fixture.database.db;
    saga = liveSaga(db, fixture.live, { settleTimeoutMs: 10_000 });
    const rehearsal = new RehearsalSettlement({ db, subjectSecret: "s", onCommitted: () => {}, now: () => new Date() });
    const settlements = [rehearsal, saga];
    payments = new Payments({ db, checkouts: async (id) => checkouts.get(id) as CheckoutForPayment, settlements });
    series = new SeriesCharges({ db, settlements });
  }, 120_000);
  afterAll(() => fixture?.close());

  const rpc = (method: string, params: unknown[] = []) => fixture.usdc.client.request({ method: method as never, params: params as never });
  const moveChainClock = async (seconds: number) => {
    await rpc("evm_increaseTime", [toHex(seconds)]);
    await rpc("evm_mine");
  };
  const balance = (a: string) => fixture.usdc.balance(a);
  const splitOf = (c: CheckoutForPayment) =>
    fixture.live.chain.splitAddress(fixture.live.recipients({ payTo: c.payTo, platformFeeBps: 0, platformFeeTo: null }));
  const sellerAndFee = async (c: CheckoutForPayment) => [await balance(c.payTo), await balance(fixture.devchain.feeWallet)] as const;
  const rows = (checkoutId: string) =>
    fixture.database.db.selectFrom("payments").selectAll().where("checkout_id", "=", checkoutId).orderBy("schedule_period").execute();
  const used = (from: string, nonce: string) => fixture.live.chain.authorizationUsed(getAddress(from), nonce as Hex);

  async function buyer(amount: bigint): Promise<PrivateKeyAccount> {
    const b = privateKeyToAccount(generatePrivateKey());
    if (amount > 0n) await fixture.usdc.mint(b.address, amount);
    return b;
  }

  /** A held payload re-signed by `signer` after `change` (what a tampering or confused client sends). */
  const heldWith = (requirement: PaymentRequirements, a: ExactEvmAuthorization, change: Partial<ExactEvmAuthorization>, signer: PrivateKeyAccount) =>
    signedHeader(signer, requirement, { ...a, ...change });

  const authorizationOf = (header: string) => (decodeHeader(header) as { payload: { authorization: ExactEvmAuthorization } }).payload.authorization;

  it("quotes only the EVM rail, with extra.schedule: each held period's window in seconds after the purchase (both faces)", async () => {
    const c = seriesCheckout(3);
    for (const [face, day] of [
      ["live", DAY],
      ["test", 60],
    ] as const) {
      const q = await payments.quote(c.id, face);
      expect(q.accepts).toHaveLength(1);
      expect(q.accepts[0]!.network.startsWith("eip155:")).toBe(true);
      expect(q.accepts[0]!.extra.schedule).toEqual({
        interval_days: 1,
        periods: 3,
        windows: [
          { period: 1, opens_after_seconds: day, closes_after_seconds: 2 * day },
          { period: 2, opens_after_seconds: 2 * day, closes_after_seconds: 3 * day },
        ],
      });
    }
    // A checkout that is no series says nothing of one.
    const plain = liveCheckout();
    checkouts.set(plain.id, plain);
    expect((await payments.quote(plain.id, "live")).accepts[0]!.extra.schedule).toBeUndefined();
  });

  it("prepare answers period 0 and each held period: contiguous windows from the chain's clock, nonces derived from period 0's", async () => {
    const c = seriesCheckout(4);
    const b = await buyer(0n);
    const { prepared } = await preparedSeries(payments, c.id, "live", b);
    const latest = Number(await fixture.live.chain.latestBlockTime());
    const held = prepared.schedule ?? [];
    expect(held.map((h) => h.period)).toEqual([1, 2, 3]);
    const anchor = Number(held[0]!.authorization.validAfter) - DAY;
    expect(Math.abs(anchor - latest)).toBeLessThanOrEqual(2);
    for (const h of held) {
      const a = h.authorization;
      expect(a).toMatchObject({ from: b.address, to: prepared.authorization.to, value: prepared.authorization.value });
      expect(Number(a.validAfter)).toBe(anchor + h.period * DAY);
      expect(Number(a.validBefore)).toBe(anchor + (h.period + 1) * DAY);
      expect(a.nonce).toBe(heldPeriodNonce(prepared.authorization.nonce, h.period, a.validAfter, a.validBefore));
    }
  });

  // Purchases made before the clock moves, used by the charges below.
  let bought: { c: CheckoutForPayment; b: PrivateKeyAccount; requirement: PaymentRequirements; held: string[]; scheduleId: string };
  let short: { c: CheckoutForPayment; b: PrivateKeyAccount; scheduleId: string };
  let cancelled: { c: CheckoutForPayment; b: PrivateKeyAccount; requirement: PaymentRequirements; held: string[]; scheduleId: string };

  it("every bad held payload refuses the whole purchase, naming its period, and moves no money", async () => {
    const c = seriesCheckout(3);
    const b = await buyer(10n * PRICE);
    const other = privateKeyToAccount(generatePrivateKey());
    const { prepared, header, held } = await preparedSeries(payments, c.id, "live", b);
    const r = prepared.requirement;
    const [a1, a2] = held.map(authorizationOf) as [ExactEvmAuthorization, ExactEvmAuthorization];
    const before = [await balance(b.address), ...(await sellerAndFee(c))];
    const cases: [string, string[], string][] = [
      ["wrong amount", [await heldWith(r, a1, { value: "1" }, b), held[1]!], "invalid_schedule_value"],
      ["wrong payTo", [await heldWith(r, a1, { to: other.address }, b), held[1]!], "invalid_schedule_recipient"],
      ["wrong payer's signature", [held[0]!, await heldWith(r, a2, {}, other)], "invalid_schedule_signature"],
      ["tampered window", [held[0]!, await heldWith(r, a2, { validBefore: String(Number(a2.validBefore) + 60) }, b)], "invalid_schedule_window"],
      ["wrong nonce", [await heldWith(r, a1, { nonce: toHex(7n, { size: 32 }) }, b), held[1]!], "invalid_schedule_nonce"],
      [
        "overlapping window",
        [held[0]!, await heldWith(r, a2, { validAfter: String(Number(a1.validBefore) - 10), validBefore: a2.validBefore }, b)],
        "invalid_schedule_window",
      ],
      ["missing one", [held[0]!], "invalid_schedule_held_missing"],
      ["extra one", [...held, held[1]!], "invalid_schedule_held_extra"],
      ["none (a plain X-PAYMENT)", [], "invalid_schedule_held_missing"],
      ["not base64 JSON", [held[0]!, "%%%"], "invalid_schedule_payload"],
    ];
    for (const [_case, heldHeaders, reason] of cases) {
      const refused = payments.submit(c.id, "live", header, { heldHeaders });
      await expect(refused).rejects.toMatchObject({ extensions: { reason } });
      await expect(refused.catch((e: Error) => e.message)).resolves.toMatch(
        reason.startsWith("invalid_schedule_held") ? /period/ : /schedule\[\d\] \(period \d\)/,
      );
    }
    // A held nonce already used on chain: cancelled by the buyer's signature, sent by anyone.
    const cancel = await signedCancel(b, r, b.address, a2.nonce);
    const wallet = createWalletClient({ account: fixture.usdc.minter, transport: http(fixture.devchain.url) });
    const hash = await wallet.writeContract({
      address: fixture.devchain.usdc,
      abi: TestUSDC.abi,
      functionName: "cancelAuthorization",
      args: [b.address, a2.nonce as Hex, cancel.v, cancel.r, cancel.s],
      chain: null,
    });
    await fixture.usdc.client.waitForTransactionReceipt({ hash });
    await expect(payments.submit(c.id, "live", header, { heldHeaders: held })).rejects.toMatchObject({ extensions: { reason: "invalid_schedule_nonce_used" } });
    expect([await balance(b.address), ...(await sellerAndFee(c))]).toEqual(before);
    expect(await rows(c.id)).toHaveLength(0);
    expect(await used(b.address, prepared.authorization.nonce)).toBe(false);
    // The public facilitator does not sell a series: it is bought at its face with every held period.
    const facilitator = new Facilitator({ checkouts: async (id) => checkouts.get(id) as CheckoutForPayment, settlements: [saga] });
    expect(await facilitator.settle("base", r.network, r, decodeHeader(header))).toMatchObject({ success: false, errorReason: "invalid_payment_requirements" });
    // Held payloads for a checkout that is no series: 422.
    const plain = liveCheckout();
    checkouts.set(plain.id, plain);
    await expect(payments.submit(plain.id, "live", header, { heldHeaders: held })).rejects.toMatchObject({ slug: "invalid-request" });
  });

  it("a purchase records the series and settles period 0 (exact balances); its event carries the series; presented again it redelivers the same series", async () => {
    const c = seriesCheckout(3);
    const b = await buyer(10n * PRICE);
    const [seller0, fee0] = await sellerAndFee(c);
    const { prepared, header, held } = await preparedSeries(payments, c.id, "live", b);
    const r = await payments.submit(c.id, "live", header, { heldHeaders: held });
    expect(r.status).toBe("settled");
    expect(await balance(b.address)).toBe(10n * PRICE - SPLIT.total);
    expect(await sellerAndFee(c)).toEqual([seller0 + SPLIT.providerAmount, fee0 + SPLIT.feeAmount]);
    const row = r.receipt;
    expect(row.schedule_id).toMatch(/^sch_/);
    expect(row.schedule_period).toBe(0);
    const anchor = Number(prepared.schedule![0]!.authorization.validAfter) - DAY;
    expect(r.schedule).toEqual({
      id: row.schedule_id,
      periods: 3,
      periodsSettled: 1,
      intervalDays: 1,
      paidThrough: new Date((anchor + DAY) * 1000),
      nextChargeAt: new Date((anchor + DAY) * 1000),
    });
    const event = await settledEventOf(fixture.database.db, row.id);
    expect(event.scheduleId).toBe(row.schedule_id);
    expect(event.schedulePeriod).toBe(0);
    expect(event.series).toMatchObject({ accountId: c.accountId, intervalDays: 1, periods: 3 });
    expect(event.series!.held.map((h) => [h.period, h.nonce, Number(h.validAfter!.seconds), Number(h.validBefore!.seconds)])).toEqual(
      prepared.schedule!.map((h) => [h.period, h.authorization.nonce.toLowerCase(), Number(h.authorization.validAfter), Number(h.authorization.validBefore)]),
    );
    expect(JSON.stringify(event.series, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toMatch(/signature|0x[0-9a-f]{130}/i);
    const again = await payments.submit(c.id, "live", header, { heldHeaders: held });
    expect(again.redelivered).toBe(true);
    expect(again.schedule).toEqual(r.schedule);
    expect(await rows(c.id)).toHaveLength(1);
    bought = { c, b, requirement: prepared.requirement, held, scheduleId: row.schedule_id! };

    // Two more series, charged below: one whose buyer cannot pay period 1, one cancelled.
    const c2 = seriesCheckout(3);
    const b2 = await buyer(SPLIT.total);
    const s2 = await preparedSeries(payments, c2.id, "live", b2);
    short = { c: c2, b: b2, scheduleId: (await payments.submit(c2.id, "live", s2.header, { heldHeaders: s2.held })).receipt.schedule_id! };
    const c3 = seriesCheckout(3);
    const b3 = await buyer(10n * PRICE);
    const s3 = await preparedSeries(payments, c3.id, "live", b3);
    const r3 = await payments.submit(c3.id, "live", s3.header, { heldHeaders: s3.held });
    cancelled = { c: c3, b: b3, requirement: s3.prepared.requirement, held: s3.held, scheduleId: r3.receipt.schedule_id! };
  });

  it("ChargeHeldPeriod: NOT_FOUND for no such series or period, NOT_YET before the window by the chain's clock", async () => {
    await expect(series.charge("sch_nope", 1)).rejects.toMatchObject({ slug: "not-found" });
    await expect(series.charge(bought.scheduleId, 3)).rejects.toMatchObject({ slug: "not-found" });
    expect(await series.charge(bought.scheduleId, 1)).toMatchObject({ outcome: "not_yet" });
  });

  it("CancelHeldAuthorizations: a wrong signer is refused and nothing is sent", async () => {
    const a1 = authorizationOf(cancelled.held[0]!);
    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrong = await signedCancel(stranger, cancelled.requirement, cancelled.b.address, a1.nonce);
    expect(await series.cancel(cancelled.scheduleId, [wrong])).toEqual([{ nonce: a1.nonce, period: 1, status: "refused", reason: "invalid_signature" }]);
    expect(await used(cancelled.b.address, a1.nonce)).toBe(false);
    const notOurs = await signedCancel(cancelled.b, cancelled.requirement, cancelled.b.address, toHex(9n, { size: 32 }));
    expect((await series.cancel(cancelled.scheduleId, [notOurs]))[0]).toMatchObject({ status: "refused", reason: "not_a_held_nonce" });
  });

  it("CancelHeldAuthorizations cancels on chain: the authorization can no longer be submitted, and its charge is FINAL", async () => {
    const a1 = authorizationOf(cancelled.held[0]!);
    const cancel = await signedCancel(cancelled.b, cancelled.requirement, cancelled.b.address, a1.nonce);
    const [result] = await series.cancel(cancelled.scheduleId, [cancel]);
    expect(result).toMatchObject({ nonce: a1.nonce, period: 1, status: "cancelled" });
    expect(result!.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await used(cancelled.b.address, a1.nonce)).toBe(true);
    // Asked again: the recorded cancel, nothing sent twice.
    expect((await series.cancel(cancelled.scheduleId, [cancel]))[0]).toMatchObject({ status: "cancelled", txHash: result!.txHash });
    await moveChainClock(DAY + 10);
    const sig = parseSignature((decodeHeader(cancelled.held[0]!) as { payload: { signature: Hex } }).payload.signature);
    await expect(
      fixture.usdc.client.simulateContract({
        account: fixture.usdc.minter,
        address: fixture.devchain.usdc,
        abi: TestUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [
          getAddress(a1.from),
          getAddress(a1.to),
          BigInt(a1.value),
          BigInt(a1.validAfter),
          BigInt(a1.validBefore),
          a1.nonce as Hex,
          Number(sig.v),
          sig.r,
          sig.s,
        ],
      }),
    ).rejects.toThrow(/used or canceled/i);
    expect(await series.charge(cancelled.scheduleId, 1)).toMatchObject({ outcome: "final", reason: "authorization_used_or_cancelled" });
  });

  it("once the window is open, ten concurrent charges settle the period once (exact balances, one transfer, its receipt and event)", async () => {
    const { c, b } = bought;
    const [seller0, fee0] = await sellerAndFee(c);
    const payer0 = await balance(b.address);
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => series.charge(bought.scheduleId, 1)));
    const settled = outcomes.filter((o) => o.outcome === "settled");
    expect(outcomes.every((o) => o.outcome === "settled" || o.outcome === "pending")).toBe(true);
    expect(settled.length).toBeGreaterThan(0);
    expect(new Set(outcomes.map((o) => o.row?.id)).size).toBe(1);
    const final = await series.charge(bought.scheduleId, 1);
    expect(final.outcome).toBe("settled");
    const row = final.row!;
    expect(row).toMatchObject({ schedule_id: bought.scheduleId, schedule_period: 1, status: "settled", checkout_id: c.id, payer: b.address });
    expect(await balance(b.address)).toBe(payer0 - SPLIT.total);
    expect(await sellerAndFee(c)).toEqual([seller0 + SPLIT.providerAmount, fee0 + SPLIT.feeAmount]);
    expect((await rows(c.id)).map((r) => [r.schedule_period, r.status])).toEqual([
      [0, "settled"],
      [1, "settled"],
    ]);
    const event = await settledEventOf(fixture.database.db, row.id);
    expect(event).toMatchObject({ scheduleId: bought.scheduleId, schedulePeriod: 1, reusableCheckout: true });
    expect(event.series).toBeUndefined();
    expect(splitOf(c)).toBe(getAddress(row.split_address!));
  });

  it("a buyer who cannot pay is RETRYABLE insufficient_funds (nothing recorded), then SETTLED after a top-up", async () => {
    const { c, b, scheduleId } = short;
    expect(await balance(b.address)).toBe(0n);
    expect(await series.charge(scheduleId, 1)).toEqual({ outcome: "retryable", reason: "insufficient_funds" });
    expect(await rows(c.id)).toHaveLength(1);
    // The balance read passes but the funds are gone by the time it would be signed: refused by the settle call, nothing recorded.
    const lyingChain = new Proxy(fixture.live.chain, {
      get(target, prop, receiver) {
        if (prop === "balanceOf") return async () => 10n ** 12n;
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const raced = new SeriesCharges({ db: fixture.database.db, settlements: [liveSaga(fixture.database.db, { ...fixture.live, chain: lyingChain })] });
    expect(await raced.charge(scheduleId, 1)).toEqual({ outcome: "retryable", reason: "insufficient_funds" });
    expect(await rows(c.id)).toHaveLength(1);
    await fixture.usdc.mint(b.address, SPLIT.total);
    expect((await series.charge(scheduleId, 1)).outcome).toBe("settled");
    expect(await balance(b.address)).toBe(0n);
  });

  it("after the window closes the period is FINAL", async () => {
    await moveChainClock(2 * DAY);
    expect(await series.charge(short.scheduleId, 2)).toEqual({ outcome: "final", reason: "window_closed" });
    // A settled period still answers SETTLED with its receipt.
    expect((await series.charge(bought.scheduleId, 1)).outcome).toBe("settled");
  });
});
