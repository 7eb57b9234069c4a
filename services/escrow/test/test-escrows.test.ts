import { decodeEnvelope } from "@c402/bus";
import { EVENT_TYPES } from "@c402/contracts";
import { migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { escrowDepositTypedData, type EscrowActionName, type EscrowTerms } from "@c402/evm-contracts";
import { newId } from "@c402/ids";
import { describeWith, freshPostgresDatabase } from "@c402/testkit";
import { REHEARSAL_TOKEN } from "@c402/x402";
import { getAddress, parseSignature, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { escrowMigrations, EscrowBook, type EscrowContract } from "../src";
import type { EscrowDb } from "../src/store/escrow-store";

const HOUR = 3_600;
const DAY = 86_400;

/** The devchain's layout: test escrows check signatures against it and never ask it anything. */
const CONTRACT: EscrowContract = {
  network: "eip155:84532",
  chainId: 84532,
  address: "0xc40200000000000000000000000000000000e5C0",
  token: { address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", name: "USDC", version: "2" },
};

/**
 * Test escrows (rehearsals, ADR 19): the same table walked with signatures checked and no chain
 * asked, on the service's clock; each escrow.* event written once; the timed exits taken by the
 * sweeper once, however many sweep at the same time.
 */
describeWith("postgres")("test escrows on PostgreSQL", () => {
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let db: EscrowDb;
  let clock = new Date("2026-12-01T12:00:00Z");
  let book: EscrowBook;

  beforeAll(async () => {
    fresh = await freshPostgresDatabase();
    database = openPostgres({ url: fresh.url, schema: "escrow" });
    await migrate(database, escrowMigrations);
    db = database.db as EscrowDb;
    book = new EscrowBook(db, { contract: CONTRACT, now: () => clock });
  });
  afterAll(async () => {
    await database?.close();
    await fresh?.drop();
  });

  const later = (seconds: number) => (clock = new Date(clock.getTime() + seconds * 1000));

  async function eventsOf(paymentId: string): Promise<string[]> {
    const rows = await db
      .selectFrom("outbox" as never)
      .select(["payload" as never, "seq" as never])
      .where("key" as never, "=", paymentId as never)
      .orderBy("seq" as never)
      .execute();
    return (rows as { payload: Uint8Array }[]).map((r) => decodeEnvelope(r.payload).type);
  }

  /** A test deposit, signed (as payments' rehearsal face has the buyer sign it) under the rehearsal token's domain, or `opts.token`'s. */
  async function deposit(opts: { signer?: PrivateKeyAccount; token?: typeof CONTRACT.token } = {}) {
    const [buyer, seller, arbiter] = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey())) as [
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
    ];
    const terms: EscrowTerms = {
      buyer: buyer.address,
      seller: seller.address,
      platform: "0x0000000000000000000000000000000000000000",
      feeTo: privateKeyToAccount(generatePrivateKey()).address,
      arbiter: arbiter.address,
      amount: 1_000_000n,
      platformAmount: 0n,
      fee: 30_000n,
      settleWindow: BigInt(3 * DAY),
      holdWindow: BigInt(7 * DAY),
      backstopWindow: BigInt(30 * DAY),
      preset: 1,
      salt: toHex(crypto.getRandomValues(new Uint8Array(32))),
    };
    const validBefore = BigInt(Math.floor(clock.getTime() / 1000) + DAY);
    const token = opts.token ?? { ...REHEARSAL_TOKEN, address: getAddress(REHEARSAL_TOKEN.address) };
    const typed = escrowDepositTypedData({ chainId: CONTRACT.chainId, escrow: CONTRACT.address, token, terms, validAfter: 0n, validBefore });
    const signature = await (opts.signer ?? buyer).signTypedData(typed);
    const paymentId = newId("payment");
    const request = {
      paymentId,
      accountId: "acct_test_escrows",
      checkoutId: "esc_000000000000000000000001",
      network: CONTRACT.network,
      testMode: true,
      terms: {
        buyer: terms.buyer,
        seller: terms.seller,
        platform: terms.platform,
        feeTo: terms.feeTo,
        arbiter: terms.arbiter,
        amount: "1000000",
        platformAmount: "0",
        fee: "30000",
        preset: "standard" as const,
        settleSeconds: 3 * DAY,
        holdSeconds: 7 * DAY,
        backstopSeconds: 30 * DAY,
        salt: terms.salt,
      },
      authorization: { validAfter: "0", validBefore: validBefore.toString(), nonce: typed.message.nonce, signature },
    };
    return { paymentId, request, buyer, seller, arbiter, checkoutId: request.checkoutId };
  }

  async function act(e: Awaited<ReturnType<typeof deposit>>, action: EscrowActionName, signer = action === "cancel" ? e.seller : e.buyer) {
    const p = await book.prepareAction(e.paymentId, e.checkoutId, action);
    const { r, s, v, yParity } = parseSignature(await signer.signTypedData(p.typedData));
    return book.submitAction({ paymentId: e.paymentId, checkoutId: e.checkoutId, action, deadline: p.deadline, v: Number(v ?? BigInt(yParity + 27)), r, s });
  }

  it("holds a test deposit whose signature is the buyer's, no chain asked; a replay answers it; another signer is refused", async () => {
    const e = await deposit();
    const r = await book.deposit(e.request);
    expect(r).toMatchObject({ pending: false, replayed: false, row: { state: "held", test_mode: true, deposit_tx_hash: null } });
    expect(await book.deposit(e.request)).toMatchObject({ replayed: true, row: { state: "held" } });
    const forged = await deposit({ signer: privateKeyToAccount(generatePrivateKey()) });
    await expect(book.deposit(forged.request)).rejects.toThrow(/not signed by the buyer/);
    // Signed under the real token's domain (a signature that could move money): never a test deposit.
    const real = await deposit({ token: CONTRACT.token });
    await expect(book.deposit(real.request)).rejects.toThrow(/not signed by the buyer/);
    expect(await eventsOf(e.paymentId)).toEqual([EVENT_TYPES.escrowHeld]);
  });

  it("approve releases; a replayed signed action answers the first outcome; a stale signature is refused", async () => {
    const e = await deposit();
    await book.deposit(e.request);
    const p = await book.prepareAction(e.paymentId, e.checkoutId, "approve");
    const { r, s, v, yParity } = parseSignature(await e.buyer.signTypedData(p.typedData));
    const submit = {
      paymentId: e.paymentId,
      checkoutId: e.checkoutId,
      action: "approve" as const,
      deadline: p.deadline,
      v: Number(v ?? BigInt(yParity + 27)),
      r,
      s,
    };
    expect(await book.submitAction(submit)).toMatchObject({ replayed: false, row: { state: "released", closed_by: "approve" } });
    expect(await book.submitAction(submit)).toMatchObject({ replayed: true, row: { state: "released" } });
    await expect(act(e, "hold")).rejects.toThrow(/released: nothing more can happen/);
    expect(await eventsOf(e.paymentId)).toEqual([EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowReleased]);
  });

  it("a signature asked before another action is stale: the escrow's nonce moved", async () => {
    const e = await deposit();
    await book.deposit(e.request);
    const stale = await book.prepareAction(e.paymentId, e.checkoutId, "request-refund");
    await act(e, "hold");
    const { r, s, v, yParity } = parseSignature(await e.buyer.signTypedData(stale.typedData));
    await expect(
      book.submitAction({
        paymentId: e.paymentId,
        checkoutId: e.checkoutId,
        action: "request-refund",
        deadline: stale.deadline,
        v: Number(v ?? BigInt(yParity + 27)),
        r,
        s,
      }),
    ).rejects.toThrow(/current nonce/);
  });

  it("walks every row: settle window, hold window, escalation to the backstop, the seller's cancel; the sweeper acts once", async () => {
    const settle = await deposit();
    const holdWindow = await deposit();
    const backstop = await deposit();
    const cancel = await deposit();
    for (const e of [settle, holdWindow, backstop, cancel]) await book.deposit(e.request);
    expect(await act(holdWindow, "hold")).toMatchObject({ row: { state: "on_hold" } });
    await act(backstop, "hold");
    expect(await act(backstop, "request-refund")).toMatchObject({ row: { state: "escalated" } });
    expect(await act(cancel, "cancel")).toMatchObject({ row: { state: "refunded", closed_by: "cancel" } });
    // Too early for anything timed. (Other tests' escrows fall due too as the clock moves: counts are at least.)
    expect(await book.sweepTimedExits(true)).toBe(0);
    later(3 * DAY);
    const other = new EscrowBook(db, { contract: CONTRACT, now: () => clock });
    const acted = await Promise.all([book.sweepTimedExits(true), other.sweepTimedExits(true)]);
    expect(acted[0] + acted[1]).toBeGreaterThanOrEqual(1);
    expect((await book.get(settle.paymentId)).closed_by).toBe("settle_window");
    later(7 * DAY);
    expect(await book.sweepTimedExits(true)).toBeGreaterThanOrEqual(1);
    expect(await book.get(holdWindow.paymentId)).toMatchObject({ state: "released", closed_by: "hold_window" });
    // The backstop counts from the escalation: 30 days after it.
    expect((await book.get(backstop.paymentId)).state).toBe("escalated");
    await expect(book.prepareRuling(backstop.paymentId, "acct_other", true)).rejects.toThrow(/No such escrow/);
    expect((await book.prepareRuling(backstop.paymentId, "acct_test_escrows", false)).transaction.from).toBe(backstop.arbiter.address);
    later(30 * DAY);
    expect(await book.sweepTimedExits(true)).toBeGreaterThanOrEqual(1);
    expect(await book.get(backstop.paymentId)).toMatchObject({ state: "refunded", closed_by: "backstop" });
    expect(await book.sweepTimedExits(true)).toBe(0);

    expect(await eventsOf(settle.paymentId)).toEqual([EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowReleased]);
    expect(await eventsOf(holdWindow.paymentId)).toEqual([EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowOnHold, EVENT_TYPES.escrowReleased]);
    expect(await eventsOf(backstop.paymentId)).toEqual([
      EVENT_TYPES.escrowHeld,
      EVENT_TYPES.escrowOnHold,
      EVENT_TYPES.escrowEscalated,
      EVENT_TYPES.escrowRefunded,
    ]);
    expect(await eventsOf(cancel.paymentId)).toEqual([EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowRefunded]);
  });

  it("refuses an action the state does not take, naming the state; too late for a hold once the settle window ended", async () => {
    const e = await deposit();
    await book.deposit(e.request);
    await act(e, "hold");
    await expect(book.prepareAction(e.paymentId, e.checkoutId, "approve")).rejects.toThrow(/A on_hold escrow does not take the buyer's approval/);
    await expect(book.prepareAction(e.paymentId, "esc_other", "cancel")).rejects.toThrow(/No such escrow/);
    const late = await deposit();
    await book.deposit(late.request);
    later(3 * DAY + HOUR);
    await expect(book.prepareAction(late.paymentId, late.checkoutId, "hold")).rejects.toThrow(/Too late for the buyer's hold/);
  });
});

export type { Hex };
