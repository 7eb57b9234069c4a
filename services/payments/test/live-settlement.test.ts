import { TestUSDC } from "@c402/evm-contracts";
import { breakdown } from "@c402/money";
import { createPublicClient, createWalletClient, getAddress, http, type Hex } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { LiveChain } from "../src/domain/settlement/live-evm";
import type { CheckoutForPayment } from "../src/domain/requirements";
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

  /** The live chain with `replace` overriding some methods; everything else is the real adapter (same nonce state). */
  function withChain(replace: Partial<Record<keyof LiveChain["chain"], (...args: never[]) => Promise<unknown>>>): LiveChain {
    const chain = new Proxy(live.chain, {
      get(target, prop, receiver) {
        const override = (replace as Record<string | symbol, unknown>)[prop];
        if (override) return override;
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { ...live, chain };
  }

  /** A failpoint: `step` throws Crash (the process "dies") once. */
  function crashingAt(step: "signSettleReserved" | "broadcast" | "waitForReceipt"): LiveChain {
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

  it.each(["signSettleReserved", "broadcast", "waitForReceipt"] as const)(
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

  it("funds moved away between verify and settle: the settlement reverts, a 402 with its hash, no receipt, no event (G11)", async () => {
    const c = checkout();
    const buyer = await buyerWith(200_000n);
    const { payload, requirement } = await pay(c, buyer);
    const drainThenSign = async (...args: Parameters<LiveChain["chain"]["signSettleReserved"]>) => {
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
      return live.chain.signSettleReserved(...args);
    };
    // The signature reuses the simulation's gas figure, so the transaction goes out and reverts on-chain.
    await expect(saga(withChain({ signSettleReserved: drainThenSign as never })).submit(c, payload, requirement)).rejects.toMatchObject({
      slug: "payment-required",
      extensions: { reason: "settlement_failed", settlement: { transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), network: devchain.network } },
    });
    const [row] = await rows(c.id);
    expect(row?.status).toBe("failed");
    expect((await pub().getTransactionReceipt({ hash: row!.tx_hash as Hex })).status).toBe("reverted");
    expect(await events(row!.id)).toBe(0);
    expect(await balance(c.payTo)).toBe(0n);
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
