import { Keypair } from "@stellar/stellar-sdk";
import { Lanes, MAX_I128, sendByTime, stellarUnitsFromUsdc, usdcFromStellarUnits, USDC_DECIMALS } from "../src";

describe("USDC amounts between the service (6 decimals) and Stellar (7)", () => {
  it("goes to Stellar exactly: one service unit is ten Stellar units", () => {
    expect(USDC_DECIMALS).toBe(7);
    expect(stellarUnitsFromUsdc(1_105_000n)).toBe(11_050_000n); // $1.105
    expect(stellarUnitsFromUsdc(1n)).toBe(10n); // $0.000001
    expect(stellarUnitsFromUsdc(0n)).toBe(0n);
    expect(() => stellarUnitsFromUsdc(-1n)).toThrow(RangeError);
    expect(() => stellarUnitsFromUsdc(MAX_I128 / 10n + 1n)).toThrow(/i128/);
  });

  it("comes back exactly or not at all: a seventh decimal is never rounded away", () => {
    expect(usdcFromStellarUnits(11_050_000n)).toBe(1_105_000n);
    expect(usdcFromStellarUnits(stellarUnitsFromUsdc(987_654_321n))).toBe(987_654_321n);
    expect(() => usdcFromStellarUnits(11_050_001n)).toThrow(/not rounded/);
    expect(() => usdcFromStellarUnits(9n)).toThrow(/not rounded/);
    expect(() => usdcFromStellarUnits(-10n)).toThrow(RangeError);
  });
});

describe("when a settlement must be sent to land by a ledger (sendByTime)", () => {
  const now = Date.parse("2026-11-26T12:00:00Z");
  const closed = { sequence: 1_000, closeTime: now / 1000 - 2 };

  it("is when the ledger before it closes at the earliest: the latest ledger's close time plus a ledger's time for each one between", () => {
    // Ledger 1,013 applies transactions sent before ledger 1,012 closes: 12 ledgers after 1,000 closed, 5 s each.
    expect(sendByTime(closed, 1_013, 5, now)).toBe(now - 2_000 + 12 * 5_000);
    // Shorter ledgers: earlier.
    expect(sendByTime(closed, 1_013, 2, now)).toBe(now - 2_000 + 12 * 2_000);
    // The next ledger is being built now: past already. A closed one, further past.
    expect(sendByTime(closed, 1_001, 5, now)).toBe(now - 2_000);
    expect(sendByTime(closed, 990, 5, now)).toBeLessThan(now - 2_000);
  });

  it("counts a latest ledger whose close time the RPC does not say as closed a ledger before now (errs early)", () => {
    expect(sendByTime({ sequence: 1_000 }, 1_013, 5, now)).toBe(now - 5_000 + 12 * 5_000);
  });
});

describe("Lanes: serialized submission per source account", () => {
  /** Runs `count` works on `lanes`, each holding its lane for a few milliseconds; records which ran on which lane and how many at once. */
  async function crowd(lanes: Lanes, count: number) {
    let running = 0;
    let most = 0;
    const perLane = new Map<string, number[]>();
    const busy = new Set<string>();
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        lanes.run(async (lane) => {
          const account = lane.keypair.publicKey();
          expect(busy.has(account)).toBe(false);
          busy.add(account);
          most = Math.max(most, ++running);
          perLane.set(account, [...(perLane.get(account) ?? []), i]);
          await new Promise((resolve) => setTimeout(resolve, 5 + (i % 3)));
          running--;
          busy.delete(account);
        }),
      ),
    );
    return { most, perLane };
  }

  it("one account: one settlement at a time, in arrival order", async () => {
    const { most, perLane } = await crowd(new Lanes([Keypair.random()]), 8);
    expect(most).toBe(1);
    expect([...perLane.values()]).toEqual([[0, 1, 2, 3, 4, 5, 6, 7]]);
  });

  it("channels: as many at once as there are accounts, never two on one", async () => {
    const { most, perLane } = await crowd(new Lanes([Keypair.random(), Keypair.random(), Keypair.random()]), 12);
    expect(most).toBe(3);
    expect(perLane.size).toBe(3);
    expect([...perLane.values()].flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it("runs work that must be on one account's lane there, waiting for it while other lanes are free", async () => {
    const [first, second] = [Keypair.random(), Keypair.random()];
    const lanes = new Lanes([first, second]);
    const order: string[] = [];
    let releaseFirst!: () => void;
    const holding = lanes.run(
      (lane) =>
        new Promise<void>((resolve) => {
          order.push(`hold ${lane.keypair.publicKey() === first.publicKey() ? "first" : "second"}`);
          releaseFirst = resolve;
        }),
      first.publicKey(),
    );
    const onFirst = lanes.run(async () => void order.push("resumed on first"), first.publicKey());
    // Another settlement takes the free lane meanwhile.
    await lanes.run(async (lane) => void order.push(`other on ${lane.keypair.publicKey() === second.publicKey() ? "second" : "first"}`));
    releaseFirst();
    await Promise.all([holding, onFirst]);
    expect(order).toEqual(["hold first", "other on second", "resumed on first"]);
    await expect(lanes.run(async () => undefined, Keypair.random().publicKey())).rejects.toThrow(/not one of the source accounts/);
  });

  it("frees the lane when the work fails, and keeps what it learnt of the sequence", async () => {
    const lanes = new Lanes([Keypair.random()]);
    await expect(
      lanes.run(async (lane) => {
        lane.sequence = 41n;
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(await lanes.run(async (lane) => lane.sequence)).toBe(41n);
    expect(() => new Lanes([])).toThrow(/at least one/);
  });
});
