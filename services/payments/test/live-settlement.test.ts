import { TestUSDC } from "@c402/evm-contracts";
import { breakdown } from "@c402/money";
import { devchainKey } from "@c402/devchain";
import type { NonceReservation, Settlement } from "@c402/evm-chain";
import { createPublicClient, createWalletClient, getAddress, http, keccak256, parseTransaction, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { LiveChain } from "../src/domain/settlement/live-evm";
import type { CheckoutForPayment } from "../src/domain/requirements";
import type { SettlementOutcome } from "../src/domain/settlement/settlement";
import { liveCheckout, openSagaFixture, signedLivePayment, type SagaFixture } from "./support/devchain-payments";
import { liveSaga } from "./support/live-saga";
import { settledEventOf } from "./support/settled-event";

/**
 * The live purchase saga against a real local chain and the embedded
 * database: crash at each step then resume (G6 in-process: the logic; the
 * real kill -9 across processes is crash-recovery.test.ts), broadcast then
 * timeout answers pending and never re-prompts (G7), front-running is benign
 * (G9), a settlement that cannot succeed delivers nothing (G11).
 */
class Crash extends Error {}

describe("live settlement saga on the devchain", () => {
  let fixture: SagaFixture;
  let devchain: SagaFixture["devchain"];
  let database: SagaFixture["database"];
  let live: LiveChain;
  let usdc: SagaFixture["usdc"];
  const frontRunner = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 6 });

  beforeAll(async () => {
    fixture = await openSagaFixture();
    ({ devchain, database, live, usdc } = fixture);
  }, 90_000);
  afterAll(() => fixture?.close());

  const pub = () => createPublicClient({ transport: http(devchain.url) });
  const rpc = (method: string, params: unknown[] = []) => pub().request({ method: method as never, params: params as never });
  const balance = (a: string) => usdc.balance(a);
  const saga = (chain: LiveChain = live, settleTimeoutMs = 5_000) => liveSaga(database.db, chain, { settleTimeoutMs });
  const rows = (id: string) => database.db.selectFrom("payments").selectAll().where("checkout_id", "=", id).execute();
  const events = async (paymentId: string) => (await database.db.selectFrom("outbox").select("key").where("key", "=", paymentId).execute()).length;

  const checkout = () => liveCheckout();

  async function buyerWith(amount: bigint): Promise<PrivateKeyAccount> {
    const buyer = privateKeyToAccount(generatePrivateKey());
    await usdc.mint(buyer.address, amount);
    return buyer;
  }

  const pay = (c: CheckoutForPayment, buyer: PrivateKeyAccount) => signedLivePayment(live, c, buyer);

  /** The live chain (`base`'s) with `replace` overriding some methods; everything else is the real adapter (same nonce state). */
  function withChain(replace: Partial<Record<keyof LiveChain["chain"], (...args: never[]) => Promise<unknown>>>, base: LiveChain = live): LiveChain {
    const chain = new Proxy(base.chain, {
      get(target, prop, receiver) {
        const override = (replace as Record<string | symbol, unknown>)[prop];
        if (override) return override;
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { ...base, chain };
  }

  /** A failpoint: `step` throws Crash (the process "dies") once. */
  function crashingAt(step: "signSettlementsReserved" | "broadcast" | "waitForReceipt"): LiveChain {
    let armed = true;
    const original = (live.chain[step] as (...args: never[]) => Promise<unknown>).bind(live.chain);
    return withChain({
      [step]: async (...args: never[]) => {
        if (!armed) return original(...args);
        armed = false;
        if (step === "waitForReceipt") throw new Crash("killed after broadcast, before reading the receipt");
        if (step === "broadcast") throw new Crash("killed after the hash was recorded, before sending");
        throw new Crash("killed after the claim");
      },
    });
  }

  it.each(["signSettlementsReserved", "broadcast", "waitForReceipt"] as const)(
    "a crash at %s is resumed by the sweep: one charge, one receipt, one event",
    async (step) => {
      const c = checkout();
      const buyer = await buyerWith(1_000_000n);
      const { payload, requirement } = await pay(c, buyer);
      // A failed broadcast is ambiguous by design (it may have reached the chain): the buyer is told "pending".
      const first = await saga(crashingAt(step))
        .submit(c, payload, requirement)
        .catch((e: unknown) => e);
      if (step === "broadcast") expect(first).toMatchObject({ kind: "pending" });
      else expect(first).toBeInstanceOf(Crash);
      const [before] = await rows(c.id);
      expect(before?.status).toMatch(/claimed|settling/);

      // Restart: a new saga (as after a process restart) sweeps what was left.
      await saga().sweep(0);
      const [after] = await rows(c.id);
      expect(after?.status).toBe("settled");
      const b = breakdown(100_000n);
      expect(await balance(buyer.address)).toBe(1_000_000n - b.total);
      expect(await balance(c.payTo)).toBe(b.providerAmount);
      expect(await events(after!.id)).toBe(1);
      expect(await settledEventOf(database.db, after!.id)).toMatchObject({
        paymentId: after!.id,
        testMode: false,
        reusableCheckout: true,
        txHash: after!.tx_hash,
      });
      // The buyer re-presenting the payment gets the same receipt, no second charge.
      const again = await saga().submit(c, payload, requirement);
      expect(again).toMatchObject({ kind: "settled", redelivered: true, row: { id: after!.id } });
      expect(await balance(buyer.address)).toBe(1_000_000n - b.total);
    },
  );

  it("a single-shot sale says in its event that the checkout stops selling", async () => {
    const c = liveCheckout({ reusable: false });
    const { payload, requirement } = await pay(c, await buyerWith(1_000_000n));
    const outcome = await saga().submit(c, payload, requirement);
    expect(outcome).toMatchObject({ kind: "settled", row: { single_shot: true } });
    expect(await settledEventOf(database.db, outcome.row.id)).toMatchObject({ checkoutId: c.id, testMode: false, reusableCheckout: false });
  });

  it("broadcast then timeout answers pending (never a fresh 402) and settles once mined (G7)", async () => {
    const c = checkout();
    const buyer = await buyerWith(1_000_000n);
    const { payload, requirement } = await pay(c, buyer);
    await rpc("evm_setAutomine", [false]);
    try {
      const first = await saga(live, 300).submit(c, payload, requirement);
      expect(first.kind).toBe("pending");
      expect(first.row.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
      const again = await saga(live, 300).submit(c, payload, requirement);
      expect(again).toMatchObject({ kind: "pending", row: { id: first.row.id, tx_hash: first.row.tx_hash } });
    } finally {
      await rpc("evm_setAutomine", [true]);
      await rpc("evm_mine");
    }
    const settled = await saga().submit(c, payload, requirement);
    expect(settled.kind).toBe("settled");
    expect(await balance(buyer.address)).toBe(1_000_000n - breakdown(100_000n).total);
    expect((await rows(c.id)).length).toBe(1);
  });

  it("a front-run straight to the token is benign: recorded settled, charged once (G9)", async () => {
    const c = checkout();
    const buyer = await buyerWith(1_000_000n);
    const { payload, requirement } = await pay(c, buyer);
    const a = payload.payload.authorization;
    const wallet = createWalletClient({ account: frontRunner, transport: http(devchain.url) });
    await pub().waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: devchain.usdc,
        abi: TestUSDC.abi,
        functionName: "transferWithAuthorization",
        args: [
          getAddress(a.from),
          getAddress(a.to),
          BigInt(a.value),
          BigInt(a.validAfter),
          BigInt(a.validBefore),
          a.nonce as Hex,
          payload.payload.signature as Hex,
        ],
        chain: null,
      }),
    });
    const outcome = await saga().submit(c, payload, requirement);
    expect(outcome.kind).toBe("settled");
    const b = breakdown(100_000n);
    expect(await balance(buyer.address)).toBe(1_000_000n - b.total);
    expect(await balance(c.payTo)).toBe(b.providerAmount);
    expect(await events(outcome.row.id)).toBe(1);
  });

  it("funds moved away between verify and settle: the settlement does not happen, a 402 with its hash, no receipt, no event (G11)", async () => {
    const c = checkout();
    const buyer = await buyerWith(200_000n);
    const { payload, requirement } = await pay(c, buyer);
    const drainThenSign = async (...args: Parameters<LiveChain["chain"]["signSettlementsReserved"]>) => {
      await rpc("hardhat_setBalance", [buyer.address, "0xDE0B6B3A7640000"]);
      const w = createWalletClient({ account: buyer, transport: http(devchain.url) });
      await pub().waitForTransactionReceipt({
        hash: await w.writeContract({
          address: devchain.usdc,
          abi: TestUSDC.abi,
          functionName: "transfer",
          args: [usdc.minter.address, 200_000n],
          chain: null,
        }),
      });
      return live.chain.signSettlementsReserved(...args);
    };
    // The transaction goes out (settleEach skips a payment that cannot settle) and settles nothing for it.
    await expect(saga(withChain({ signSettlementsReserved: drainThenSign as never })).submit(c, payload, requirement)).rejects.toMatchObject({
      slug: "payment-required",
      extensions: { reason: "settlement_failed", settlement: { transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), network: devchain.network } },
    });
    const [row] = await rows(c.id);
    expect(row?.status).toBe("failed");
    const receipt = await pub().getTransactionReceipt({ hash: row!.tx_hash as Hex });
    expect(live.chain.settledIn(receipt, getAddress(row!.split_address!), buyer.address, row!.nonce as Hex)).toBeUndefined();
    expect(await live.chain.authorizationUsed(buyer.address, payload.payload.authorization.nonce as Hex)).toBe(false);
    expect(await events(row!.id)).toBe(0);
    expect(await balance(c.payTo)).toBe(0n);
  });

  /**
   * The live chain with the first settlement transaction held before it is sent, until `release`: the
   * payments that become ready meanwhile go out together in the next one.
   */
  function holdingFirstBroadcast(base: LiveChain = live) {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let first = true;
    const held = withChain(
      {
        broadcast: (async (raw: Hex) => {
          if (first) {
            first = false;
            await released;
          }
          return base.chain.broadcast(raw);
        }) as never,
      },
      base,
    );
    return { live: held, release };
  }

  /** Waits until `count` payments of these checkouts are claimed (ready to settle). */
  async function claimed(ids: string[], count: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const ready = await database.db.selectFrom("payments").select("id").where("checkout_id", "in", ids).where("status", "=", "claimed").execute();
      if (ready.length >= count) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error("the payments were never claimed");
  }

  /**
   * Submits the first checkout's payment (its transaction to be held by the saga's chain), then, once it
   * is signed, the others; answers once the others are claimed, with every submission (in order).
   */
  async function firstThenTogether(
    s: ReturnType<typeof saga>,
    checkouts: CheckoutForPayment[],
    signed: Awaited<ReturnType<typeof pay>>[],
  ): Promise<Promise<SettlementOutcome>[]> {
    const submit = (i: number) => s.submit(checkouts[i]!, signed[i]!.payload, signed[i]!.requirement);
    const outcomes = [submit(0)];
    await new Promise((r) => setTimeout(r, 300)); // the first is signed and held before the others arrive
    for (let i = 1; i < checkouts.length; i++) outcomes.push(submit(i));
    await claimed(
      checkouts.slice(1).map((c) => c.id),
      checkouts.length - 1,
    );
    return outcomes;
  }

  it("payments that arrive together are gathered into a shared transaction, each settled and charged once", async () => {
    const checkouts = Array.from({ length: 5 }, () => checkout());
    const buyers: PrivateKeyAccount[] = [];
    for (let i = 0; i < checkouts.length; i++) buyers.push(await buyerWith(1_000_000n));
    const signed = await Promise.all(checkouts.map((c, i) => pay(c, buyers[i]!)));
    // A wait long enough that only the payments' arrival ends it (production waits at most GATHER_MS).
    const s = liveSaga(database.db, live, { settleTimeoutMs: 5_000, gatherMs: 10_000 });
    const outcomes = await Promise.all(checkouts.map((c, i) => s.submit(c, signed[i]!.payload, signed[i]!.requirement)));
    expect(outcomes.map((o) => o.kind)).toEqual(Array(5).fill("settled"));
    const settledRows = await Promise.all(checkouts.map(async (c) => (await rows(c.id))[0]!));
    // The first waited for those already on their way (SettlementBatches.arriving) instead of going alone.
    expect(new Set(settledRows.map((r) => r.tx_hash)).size).toBe(1);
    const b = breakdown(100_000n);
    for (const [i, row] of settledRows.entries()) {
      expect(row.status).toBe("settled");
      expect(await balance(buyers[i]!.address)).toBe(1_000_000n - b.total);
      expect(await events(row.id)).toBe(1);
    }
  });

  it("payments ready together settle in one transaction; one that cannot settle any more fails alone, the others are charged once", async () => {
    const first = checkout();
    const together = [checkout(), checkout(), checkout()];
    const buyers = [await buyerWith(1_000_000n), await buyerWith(1_000_000n), await buyerWith(200_000n), await buyerWith(1_000_000n)];
    const signed = await Promise.all([first, ...together].map((c, i) => pay(c, buyers[i]!)));
    const held = holdingFirstBroadcast();
    const outcomes = await firstThenTogether(saga(held.live), [first, ...together], signed);
    // The second of them moves its funds away before the transaction is signed.
    await rpc("hardhat_setBalance", [buyers[2]!.address, "0xDE0B6B3A7640000"]);
    const w = createWalletClient({ account: buyers[2]!, transport: http(devchain.url) });
    await pub().waitForTransactionReceipt({
      hash: await w.writeContract({ address: devchain.usdc, abi: TestUSDC.abi, functionName: "transfer", args: [usdc.minter.address, 200_000n], chain: null }),
    });
    held.release();
    const results = await Promise.all(outcomes.map((o) => o.catch((e: unknown) => e)));
    expect(results.map((r) => (r as { kind?: string }).kind)).toEqual(["settled", "settled", undefined, "settled"]);
    expect(results[2]).toMatchObject({ extensions: { reason: "settlement_failed" } });
    const rowsOf = await Promise.all([first, ...together].map(async (c) => (await rows(c.id))[0]!));
    expect(rowsOf.map((r) => r.status)).toEqual(["settled", "settled", "failed", "settled"]);
    // The three that were ready together share one transaction; the first had its own.
    expect(new Set(rowsOf.slice(1).map((r) => r.tx_hash)).size).toBe(1);
    expect(rowsOf[1]!.tx_hash).not.toBe(rowsOf[0]!.tx_hash);
    const b = breakdown(100_000n);
    for (const i of [0, 1, 3]) {
      expect(await balance(buyers[i]!.address)).toBe(1_000_000n - b.total);
      expect(await events(rowsOf[i]!.id)).toBe(1);
    }
    expect(await events(rowsOf[2]!.id)).toBe(0);
    expect(await balance(together[1]!.payTo)).toBe(0n);
  });

  it("a crash after a shared transaction is recorded, before it is sent, is resumed by the sweep: each payment once, in that transaction", async () => {
    const first = checkout();
    const together = [checkout(), checkout()];
    const buyers = [await buyerWith(1_000_000n), await buyerWith(1_000_000n), await buyerWith(1_000_000n)];
    const signed = await Promise.all([first, ...together].map((c, i) => pay(c, buyers[i]!)));
    const held = holdingFirstBroadcast();
    let broadcasts = 0;
    const crashing = withChain(
      {
        broadcast: (async (raw: Hex) => {
          if (++broadcasts === 2) throw new Crash("killed after the shared transaction was recorded, before sending");
          return held.live.chain.broadcast(raw);
        }) as never,
      },
      held.live,
    );
    const outcomes = await firstThenTogether(saga(crashing), [first, ...together], signed);
    held.release();
    const results = await Promise.all(outcomes);
    expect(results.map((r) => r.kind)).toEqual(["settled", "pending", "pending"]);
    const recorded = await Promise.all(together.map(async (c) => (await rows(c.id))[0]!));
    expect(recorded.map((r) => r.status)).toEqual(["settling", "settling"]);
    expect(recorded[0]!.tx_hash).toBe(recorded[1]!.tx_hash);
    expect(live.chain.settlesSeveral(recorded[0]!.raw_tx as Hex)).toBe(true);

    await saga().sweep(0);
    const after = await Promise.all(together.map(async (c) => (await rows(c.id))[0]!));
    expect(after.map((r) => [r.status, r.tx_hash])).toEqual([
      ["settled", recorded[0]!.tx_hash],
      ["settled", recorded[0]!.tx_hash],
    ]);
    const b = breakdown(100_000n);
    for (const [i, row] of after.entries()) {
      expect(await balance(buyers[i + 1]!.address)).toBe(1_000_000n - b.total);
      expect(await balance(together[i]!.payTo)).toBe(b.providerAmount);
      expect(await events(row.id)).toBe(1);
    }
  });

  it("a shared transaction that reverted whole (out of gas) is settled again, each payment in a transaction of its own", async () => {
    const first = checkout();
    const together = [checkout(), checkout()];
    const buyers = [await buyerWith(1_000_000n), await buyerWith(1_000_000n), await buyerWith(1_000_000n)];
    const signed = await Promise.all([first, ...together].map((c, i) => pay(c, buyers[i]!)));
    const held = holdingFirstBroadcast();
    const facilitator = privateKeyToAccount(devchainKey(devchain.mnemonic, 0));
    // A transaction of several is signed with too little gas for the second payment's allowance: it reverts whole.
    const starving = withChain(
      {
        signSettlementsReserved: ((settlements: Settlement[], reserve: NonceReservation<unknown>) =>
          held.live.chain.signSettlementsReserved(settlements, (key, sign) =>
            reserve(key, async (nonce) => {
              const real = await sign(nonce);
              if (settlements.length === 1) return real;
              const tx = parseTransaction(real.raw);
              const raw = await facilitator.signTransaction({
                chainId: tx.chainId!,
                type: "eip1559",
                to: tx.to!,
                data: tx.data!,
                nonce,
                gas: 600_000n,
                maxFeePerGas: tx.maxFeePerGas!,
                maxPriorityFeePerGas: tx.maxPriorityFeePerGas!,
              });
              return { raw, txHash: keccak256(raw) };
            }),
          )) as never,
      },
      held.live,
    );
    const outcomes = await firstThenTogether(saga(starving), [first, ...together], signed);
    held.release();
    const results = await Promise.all(outcomes);
    expect(results.map((r) => r.kind)).toEqual(["settled", "settled", "settled"]);
    const after = await Promise.all(together.map(async (c) => (await rows(c.id))[0]!));
    // Each was settled by a transaction of its own, after the shared one reverted.
    expect(after[0]!.tx_hash).not.toBe(after[1]!.tx_hash);
    for (const row of after) expect(live.chain.settlesSeveral(row.raw_tx as Hex)).toBe(false);
    const b = breakdown(100_000n);
    for (const [i, row] of after.entries()) {
      expect(row.status).toBe("settled");
      expect(await balance(buyers[i + 1]!.address)).toBe(1_000_000n - b.total);
      expect(await events(row.id)).toBe(1);
    }
  });

  it("an authorization that already paid for another checkout is refused", async () => {
    const c1 = checkout();
    const c2 = { ...checkout(), payTo: c1.payTo };
    const buyer = await buyerWith(1_000_000n);
    const { payload, requirement } = await pay(c1, buyer);
    expect((await saga().submit(c1, payload, requirement)).kind).toBe("settled");
    await expect(saga().submit(c2, payload, requirement)).rejects.toMatchObject({ extensions: { reason: "invalid_exact_evm_nonce_already_used" } });
  });
});
