import {
  C402Escrow,
  ESCROW_ACTION,
  ESCROW_STATE,
  ESCROW_TIMED_EXIT,
  escrowId,
  escrowTermsProblem,
  escrowTotal,
  ZERO_ADDRESS,
  type EscrowActionName,
  TestUSDC,
  type EscrowTerms,
} from "@c402/evm-contracts";
import fc from "fast-check";
import { BaseError, ContractFunctionRevertedError, createPublicClient, http, toHex, type Address, type Hex, type PublicClient } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { DAY, EscrowRig, HOUR, type EscrowFunction } from "./support/escrow-rig";

/**
 * Random sequences of actions, signers, signatures (good, stale, expired) and time jumps over a
 * few escrows, against a model of the spec's table (ADR 18). After every step: the chain agrees
 * with the model (state, nonce, timestamps, every balance to the unit); per escrow, paid out plus
 * refunded never exceeds the deposit and a final escrow paid exactly one side in full; the
 * contract holds exactly the deposits of the live escrows; a final state never changes; only the
 * seller, platform and fee wallet (release) or the buyer (refund) ever receive anything.
 *
 * ESCROW_PROPERTY_RUNS sets the number of sequences (default 50, about 15 s here);
 * ESCROW_PROPERTY_SEED replays one.
 */
const RUNS = Number(process.env.ESCROW_PROPERTY_RUNS ?? 50);
const SEED = process.env.ESCROW_PROPERTY_SEED === undefined ? undefined : Number(process.env.ESCROW_PROPERTY_SEED);
const { none, held, on_hold, escalated, released, refunded } = ESCROW_STATE;
const FINAL: number[] = [released, refunded];
const LIVE: number[] = [held, on_hold, escalated];

type Who = "buyer" | "seller" | "arbiter" | "stranger";
type Command =
  | { kind: "act"; escrow: number; action: EscrowActionName; who: Who | "party"; signed: boolean; flaw: "none" | "stale" | "expired" }
  | { kind: "rule"; escrow: number; toSeller: boolean; who: Who }
  | { kind: "release" | "refund"; escrow: number; who: Who }
  | { kind: "warp"; seconds: bigint }
  | { kind: "warpTo"; escrow: number; delta: bigint };

interface Model {
  id: Hex;
  terms: EscrowTerms;
  total: bigint;
  state: number;
  depositedAt: bigint;
  heldAt: bigint;
  escalatedAt: bigint;
  nonce: bigint;
  wallets: Record<Exclude<Who, "stranger">, PrivateKeyAccount>;
}

/** When the state's timed exit opens (and the moves competing with it close), as the contract says it. */
function deadline(m: Model): bigint {
  if (m.state === escalated) return m.escalatedAt + m.terms.backstopWindow;
  const settled = m.depositedAt + m.terms.settleWindow;
  if (m.state === on_hold) {
    const afterHold = m.heldAt + m.terms.holdWindow;
    return afterHold > settled ? afterHold : settled;
  }
  return settled;
}

interface EscrowSpec {
  amount: bigint;
  platformAmount: bigint;
  fee: bigint;
  settleWindow: bigint;
  holdWindow: bigint;
  backstopExtra: bigint;
  preset: number;
}
interface Scenario {
  escrows: EscrowSpec[];
  commands: Command[];
}

const pick = (values: bigint[]) => fc.constantFrom(...values);
const escrowSpec: fc.Arbitrary<EscrowSpec> = fc.record({
  amount: fc.bigInt({ min: 1n, max: 10n ** 12n }),
  platformAmount: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 10n ** 9n })),
  fee: fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 10n ** 8n })),
  settleWindow: pick([HOUR, HOUR + 1n, 2n * HOUR, DAY, 7n * DAY, 30n * DAY]),
  holdWindow: pick([HOUR, 2n * HOUR, DAY, 3n * DAY, 30n * DAY]),
  backstopExtra: pick([1n, HOUR, 10n * DAY, 150n * DAY]),
  preset: fc.integer({ min: 0, max: 3 }),
});

const who = fc.constantFrom<Who>("buyer", "seller", "arbiter", "stranger");
const command = (escrows: number): fc.Arbitrary<Command> => {
  const escrow = fc.integer({ min: 0, max: escrows - 1 });
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("act" as const),
        escrow,
        // The final actions less often than the others, so that sequences go deep.
        action: fc.oneof(
          { weight: 4, arbitrary: fc.constant<EscrowActionName>("hold") },
          { weight: 3, arbitrary: fc.constant<EscrowActionName>("request-refund") },
          { weight: 1, arbitrary: fc.constantFrom<EscrowActionName>("approve", "cancel") },
        ),
        // Mostly the wallet the action belongs to ("party": the seller's for cancel, the buyer's for the others), so that transitions happen.
        who: fc.oneof({ weight: 5, arbitrary: fc.constant("party" as const) }, { weight: 1, arbitrary: who }),
        signed: fc.boolean(),
        flaw: fc.oneof({ weight: 6, arbitrary: fc.constant("none" as const) }, { weight: 1, arbitrary: fc.constantFrom("stale" as const, "expired" as const) }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("rule" as const),
        escrow,
        toSeller: fc.boolean(),
        who: fc.oneof({ weight: 4, arbitrary: fc.constant<Who>("arbiter") }, { weight: 1, arbitrary: who }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom("release" as const, "refund" as const), escrow, who }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("warp" as const), seconds: pick([1n, 60n, HOUR, DAY, 3n * DAY, 10n * DAY, 40n * DAY]) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("warpTo" as const), escrow, delta: pick([-1n, 0n, 1n]) }) },
  );
};

const scenario: fc.Arbitrary<Scenario> = fc
  .integer({ min: 1, max: 3 })
  .chain((n) =>
    fc.record({ escrows: fc.array(escrowSpec, { minLength: n, maxLength: n }), commands: fc.array(command(n), { minLength: 5, maxLength: 40, size: "max" }) }),
  );

describe("C402Escrow: random sequences against the model", () => {
  let rig: EscrowRig;
  let reads: PublicClient;

  beforeAll(async () => {
    rig = await EscrowRig.start();
    reads = createPublicClient({ transport: http(rig.chain.url, { batch: true }) }) as PublicClient;
  }, 90_000);
  afterAll(() => rig?.stop());

  const balanceOf = (a: Address) => reads.readContract({ address: rig.usdc, abi: TestUSDC.abi, functionName: "balanceOf", args: [a] });

  async function run(spec: Scenario): Promise<void> {
    const snapshot = await rig.rpc<Hex>("evm_snapshot");
    try {
      await play(spec);
    } finally {
      await rig.rpc("evm_revert", [snapshot]);
    }
  }

  async function play(spec: Scenario): Promise<void> {
    const stranger = await rig.party();
    const contractStart = await rig.balance(rig.escrow);
    const expected = new Map<Address, bigint>();
    const credit = (a: Address, amount: bigint) => expected.set(a, (expected.get(a) ?? 0n) + amount);
    const models: Model[] = [];

    // Parties and funds first: every transaction after this one is mined at the model's clock.
    const opened: { terms: EscrowTerms; wallets: Model["wallets"] }[] = [];
    for (const [i, s] of spec.escrows.entries()) {
      const { terms, buyer, seller, arbiter } = await rig.terms({
        amount: s.amount,
        platformAmount: s.platformAmount,
        fee: s.fee,
        settleWindow: s.settleWindow,
        holdWindow: s.holdWindow,
        backstopWindow: s.holdWindow + s.backstopExtra > 180n * DAY ? 180n * DAY : s.holdWindow + s.backstopExtra,
        preset: s.preset,
        salt: toHex(i, { size: 32 }),
      });
      if (s.platformAmount === 0n && i % 2 === 0) terms.platform = ZERO_ADDRESS;
      if (s.fee === 0n && i % 2 === 1) terms.feeTo = ZERO_ADDRESS;
      await rig.mint(terms.buyer, escrowTotal(terms));
      opened.push({ terms, wallets: { buyer, seller, arbiter } });
    }
    let clock = (await rig.now()) + 1n;
    for (const { terms, wallets } of opened) {
      const auth = await rig.authorize(wallets.buyer, terms, { validBefore: clock + 365n * DAY });
      const deposited = await rig.mine(rig.relayer, "deposit", [terms, auth.validAfter, auth.validBefore, auth.sig.v, auth.sig.r, auth.sig.s], { at: clock });
      expect(deposited.status).toBe("success");
      for (const a of [terms.buyer, terms.seller, terms.platform, terms.feeTo, terms.arbiter]) expected.set(a, 0n);
      models.push({
        id: escrowId(terms, rig.chain.chainId, rig.escrow),
        terms,
        total: escrowTotal(terms),
        state: held,
        depositedAt: clock,
        heldAt: 0n,
        escalatedAt: 0n,
        nonce: 0n,
        wallets,
      });
      clock += 1n;
    }
    expected.set(stranger.address, 0n);
    const finals = new Map<Hex, number>();
    await check();

    for (const c of spec.commands) {
      if (c.kind === "warp") {
        clock += c.seconds;
        continue;
      }
      const m = models[c.escrow]!;
      if (c.kind === "warpTo") {
        // Right at (or a second either side of) the escrow's next deadline, when it has one.
        if (LIVE.includes(m.state)) {
          const target = deadline(m) + c.delta;
          if (target > clock) clock = target;
        }
        continue;
      }
      const wallet = (w: Who) => (w === "stranger" ? stranger : m.wallets[w]);
      const at = clock;
      clock += 1n;
      let fn: EscrowFunction;
      let args: readonly unknown[];
      let from: PrivateKeyAccount;
      let ok: boolean;
      let apply: () => void;

      if (c.kind === "act") {
        const actor = wallet(c.who === "party" ? (c.action === "cancel" ? "seller" : "buyer") : c.who);
        const party = c.action === "cancel" ? m.wallets.seller : m.wallets.buyer;
        const expired = c.signed && c.flaw === "expired";
        const stale = c.signed && c.flaw === "stale";
        if (c.signed) {
          const signed = await rig.signAction(actor, m.id, c.action, {
            nonce: stale ? (m.nonce === 0n ? 1n : m.nonce - 1n) : m.nonce,
            deadline: expired ? at - 1n : at + HOUR,
          });
          fn = "submitAction";
          args = [m.id, ESCROW_ACTION[c.action], signed.deadline, signed.sig.v, signed.sig.r, signed.sig.s];
          from = rig.relayer;
        } else {
          fn = ({ hold: "hold", approve: "approve", "request-refund": "requestRefund", cancel: "cancel" } as const)[c.action];
          args = [m.id];
          from = actor;
        }
        const allowedFrom: Record<EscrowActionName, number[]> = {
          hold: [held],
          approve: [held],
          "request-refund": [held, on_hold],
          cancel: [held, on_hold],
        };
        const timed = c.action === "hold" || c.action === "request-refund";
        ok = !expired && !stale && actor.address === party.address && allowedFrom[c.action].includes(m.state) && (!timed || at < deadline(m));
        apply = () => {
          m.nonce += 1n;
          if (c.action === "hold") [m.state, m.heldAt] = [on_hold, at];
          if (c.action === "request-refund") [m.state, m.escalatedAt] = [escalated, at];
          if (c.action === "approve") release();
          if (c.action === "cancel") refund();
        };
      } else if (c.kind === "rule") {
        fn = "rule";
        args = [m.id, c.toSeller];
        from = wallet(c.who);
        ok = c.who === "arbiter" && m.state === escalated && at < deadline(m);
        apply = () => (c.toSeller ? release() : refund());
      } else {
        fn = c.kind;
        args = [m.id];
        from = wallet(c.who);
        const from_: number[] = c.kind === "release" ? [held, on_hold] : [escalated];
        ok = from_.includes(m.state) && at >= deadline(m);
        apply = () => (c.kind === "release" ? release() : refund());
      }
      function release() {
        m.state = released;
        credit(m.terms.seller, m.terms.amount);
        if (m.terms.platformAmount > 0n) credit(m.terms.platform, m.terms.platformAmount);
        if (m.terms.fee > 0n) credit(m.terms.feeTo, m.terms.fee);
      }
      function refund() {
        m.state = refunded;
        credit(m.terms.buyer, m.total);
      }

      const mined = await rig.mine(from, fn, args, { at });
      if (mined.status !== (ok ? "success" : "reverted")) {
        const error = mined.error?.name ?? "";
        const shown = JSON.stringify(c, (_, v) => (typeof v === "bigint" ? String(v) : v));
        throw new Error(
          `${shown} at ${at} (escrow state ${m.state}, deadline ${deadline(m)}): the model says ${ok ? "success" : "revert"}, the chain ${mined.status} ${error}`,
        );
      }
      if (ok) apply();
      await check();
    }

    async function check(): Promise<void> {
      const addresses = [...expected.keys()];
      const [balances, contract, views, exits] = await Promise.all([
        Promise.all(addresses.map((a) => balanceOf(a).then((b) => [a, b] as const))).then((l) => new Map(l)),
        balanceOf(rig.escrow),
        Promise.all(models.map((m) => reads.readContract({ address: rig.escrow, abi: C402Escrow.abi, functionName: "escrows", args: [m.id] }))),
        Promise.all(models.map((m) => reads.readContract({ address: rig.escrow, abi: C402Escrow.abi, functionName: "timedExit", args: [m.id] }))),
      ]);
      // Every balance to the unit, the stranger's and the arbiters' (always 0) included: nobody else ever receives.
      expect(Object.fromEntries(balances)).toEqual(Object.fromEntries(expected));
      let live = 0n;
      for (const [i, m] of models.entries()) {
        const v = views[i]!;
        expect({ state: v.state, nonce: v.nonce, heldAt: v.heldAt, escalatedAt: v.escalatedAt, depositedAt: v.depositedAt }).toEqual({
          state: m.state,
          nonce: m.nonce,
          heldAt: m.heldAt,
          escalatedAt: m.escalatedAt,
          depositedAt: m.depositedAt,
        });
        expect(v.state).not.toBe(none);
        const [exit, exitAt] = exits[i]!;
        if (LIVE.includes(m.state)) {
          live += m.total;
          expect([exit, exitAt]).toEqual([m.state === escalated ? ESCROW_TIMED_EXIT.refund : ESCROW_TIMED_EXIT.release, deadline(m)]);
        } else expect([exit, exitAt]).toEqual([ESCROW_TIMED_EXIT.none, 0n]);
        // Paid out plus refunded never exceeds the deposit; a final escrow paid one side, in full.
        const got = (a: Address) => (a === ZERO_ADDRESS ? 0n : balances.get(a)!);
        const paid = got(m.terms.seller) + got(m.terms.platform) + got(m.terms.feeTo);
        const back = got(m.terms.buyer);
        expect(paid + back).toBeLessThanOrEqual(m.total);
        if (m.state === released) expect([paid, back]).toEqual([m.total, 0n]);
        else if (m.state === refunded) expect([paid, back]).toEqual([0n, m.total]);
        else expect([paid, back]).toEqual([0n, 0n]);
        // A final state never changes.
        if (FINAL.includes(v.state)) {
          if (finals.has(m.id)) expect(v.state).toBe(finals.get(m.id));
          finals.set(m.id, v.state);
        }
      }
      // The contract holds exactly the live escrows' deposits.
      expect(contract - contractStart).toBe(live);
    }
  }

  it("no sequence of actions, signatures and time moves money anywhere but the terms allow", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, (spec) => run(spec)),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);

  it("escrowTermsProblem refuses exactly the terms the contract refuses, with the same reason; escrowId matches the contract's", async () => {
    const [a, b, c] = [rig.payee(), rig.payee(), rig.payee()];
    const address = fc.constantFrom<Address>(a, b, c, ZERO_ADDRESS);
    const amount = fc.constantFrom(0n, 1n, 10n ** 6n);
    const bound = fc.constantFrom(0n, HOUR - 1n, HOUR, HOUR + 1n, 30n * DAY - 1n, 30n * DAY, 30n * DAY + 1n, 180n * DAY, 180n * DAY + 1n);
    const terms = fc.record({
      buyer: fc.constantFrom<Address>(a, b),
      seller: address,
      platform: address,
      feeTo: address,
      arbiter: address,
      amount,
      platformAmount: amount,
      fee: amount,
      settleWindow: bound,
      holdWindow: bound,
      backstopWindow: bound,
      preset: fc.integer({ min: 0, max: 5 }),
      salt: fc.constant(`0x${"00".repeat(32)}` as Hex),
    });
    const junk = { v: 27, r: `0x${"11".repeat(32)}` as Hex, s: `0x${"22".repeat(32)}` as Hex };
    await fc.assert(
      fc.asyncProperty(terms, async (t) => {
        const problem = escrowTermsProblem(t);
        let refusal: string | undefined;
        try {
          await reads.simulateContract({
            account: rig.relayer.address,
            address: rig.escrow,
            abi: C402Escrow.abi,
            functionName: "deposit",
            args: [t, 0n, 2n ** 64n, junk.v, junk.r, junk.s],
          });
        } catch (err) {
          const reverted = (err as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
          refusal = reverted?.data?.errorName === "InvalidTerms" ? String(reverted.data.args?.[0]) : `token: ${reverted?.reason ?? reverted?.data?.errorName}`;
        }
        // Terms that pass reach the token, which refuses the junk signature.
        expect(refusal).toBe(problem ?? "token: FiatTokenV2: invalid signature");
        if (problem === undefined)
          expect(await reads.readContract({ address: rig.escrow, abi: C402Escrow.abi, functionName: "escrowId", args: [t] })).toBe(
            escrowId(t, rig.chain.chainId, rig.escrow),
          );
      }),
      { numRuns: 300, seed: SEED },
    );
  }, 120_000);
});
