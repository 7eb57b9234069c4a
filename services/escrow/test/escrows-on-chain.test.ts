import { fromBinary } from "@bufbuild/protobuf";
import { decodeEnvelope, KafkaBus, type Subscription } from "@c402/bus";
import { escrowEventsV1, escrowV1, EVENT_TYPES, TOPICS } from "@c402/contracts";
import { openPostgres, type ServiceDatabase } from "@c402/db";
import { startDevchain, type RunningDevchain } from "@c402/devchain";
import { ESCROW_STATE, escrowTotal, type EscrowTerms } from "@c402/evm-contracts";
import { newId } from "@c402/ids";
import { createLogger } from "@c402/logging";
import { createClient, RpcServer, type ServiceClient } from "@c402/rpc";
import { describeWith, eventually, freshPostgresDatabase, infraAvailable, uniqueName } from "@c402/testkit";
import type { Hex } from "viem";
import { createEscrowService, EscrowBook, EscrowSweeper, escrowSettingsOf, jsonRpcEscrowChain, type EscrowServiceSettings } from "../src";
import type { EscrowDb } from "../src/store/escrow-store";
import { ChainRig, DAY, HOUR, signPrepared } from "./support/escrow-chain-rig";

const { EscrowState, EscrowAction } = escrowV1;

/**
 * Escrows on the devchain through the service's gRPC contract, with PostgreSQL and Kafka: each row
 * of the spec's table taken on the chain, the state moved by what the contract's logs say (whoever
 * sent the transaction), exact USDC balances, each escrow.* event published once.
 */
describeWith("postgres")("escrows on the devchain", () => {
  const kafka = infraAvailable("kafka");
  const maybe = kafka ? describe : describe.skip;
  maybe("with PostgreSQL and Kafka", () => {
    let devchain: RunningDevchain;
    let rig: ChainRig;
    let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
    let database: ServiceDatabase;
    let bus: KafkaBus;
    let server: RpcServer;
    let client: ServiceClient<typeof escrowV1.EscrowService>;
    let stopModule: () => Promise<void>;
    let subscription: Subscription;
    let settings: EscrowServiceSettings;
    /** A second replica's background work, driven by the test round by round. */
    let sweeper: EscrowSweeper;
    let book: EscrowBook;
    const events: ReturnType<typeof decodeEnvelope>[] = [];

    beforeAll(async () => {
      devchain = await startDevchain({ port: 0 });
      rig = new ChainRig(devchain);
      fresh = await freshPostgresDatabase();
      database = openPostgres({ url: fresh.url, schema: "escrow" });
      bus = new KafkaBus({ brokers: (kafka as string).split(","), clientId: "escrow-chain-test" });
      settings = escrowSettingsOf({
        evmNetwork: devchain.network,
        evmRpcUrl: devchain.url,
        escrowContract: devchain.escrow,
        escrowUsdc: devchain.usdc,
        escrowUsdcName: devchain.usdcName,
        escrowRelayerKey: rig.relayerKey,
      });
      // The service's own sweep runs its first round at start, then rarely: the test drives the rounds.
      const module = await createEscrowService({ database, bus, logger: createLogger({ service: "escrow-test", level: "silent" }) }, settings, {
        sweepIntervalMs: 3_600_000,
        confirmTimeoutMs: 10_000,
      });
      server = new RpcServer();
      module.register(server);
      const port = await server.listen("127.0.0.1", 0);
      await module.start();
      server.serving();
      client = createClient(escrowV1.EscrowService, `127.0.0.1:${port}`);
      stopModule = () => module.stop();
      const db = database.db as EscrowDb;
      const chain = jsonRpcEscrowChain({ network: devchain.network, rpcUrl: devchain.url, contract: devchain.escrow, relayerKey: rig.relayerKey });
      book = new EscrowBook(db, { contract: settings.contract!, chain, ...(settings.chain ? { gas: settings.chain } : {}) });
      sweeper = new EscrowSweeper(db, book, { resumeAfterMs: 0 });
      subscription = await bus.subscribe({
        topic: TOPICS.escrowEvents,
        group: uniqueName("escrow-chain-test"),
        handler: async (m) => void events.push(decodeEnvelope(m.value)),
      });
    }, 120_000);

    afterAll(async () => {
      client?.close();
      await subscription?.stop();
      await server?.stop(1_000);
      await stopModule?.();
      await bus?.close();
      await database?.close();
      await fresh?.drop();
      await devchain?.stop();
    });

    const typesOf = (paymentId: string) => events.filter((e) => e.aggregateId === paymentId).map((e) => e.type);
    /** Waits for the escrow's events to be exactly these (and checks no more arrive shortly after). */
    async function expectEvents(paymentId: string, types: string[]) {
      await eventually(
        () => typesOf(paymentId),
        (t) => t.length >= types.length,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 300));
      expect(typesOf(paymentId)).toEqual(types);
    }

    async function deposited(overrides: Partial<EscrowTerms> = {}) {
      const parties = await rig.parties(overrides);
      const paymentId = newId("payment");
      const request = await rig.depositRequest(paymentId, parties.terms, parties.buyer);
      const before = await rig.balances(parties.terms);
      const r = await client.deposit(depositMessage(request));
      expect(r.pending).toBe(false);
      expect(r.escrow?.state).toBe(EscrowState.HELD);
      return { ...parties, paymentId, request, before, escrowId: r.escrow!.escrowId as Hex, checkoutId: request.checkoutId };
    }

    async function act(e: Awaited<ReturnType<typeof deposited>>, action: escrowV1.EscrowAction, signer = e.buyer) {
      const prepared = await client.prepareAction({ paymentId: e.paymentId, checkoutId: e.checkoutId, action });
      const sig = await signPrepared(signer, prepared.typedDataJson);
      return client.submitAction({ paymentId: e.paymentId, checkoutId: e.checkoutId, action, deadline: sig.deadline, v: sig.v, r: sig.r, s: sig.s });
    }

    /** The parties' balances (the contract's is left out: a warp makes every other test's held escrow due too). */
    const partiesOf = async (t: EscrowTerms) => {
      const { contract: _contract, ...rest } = await rig.balances(t);
      return rest;
    };
    const released = (t: EscrowTerms, { contract: _contract, ...before }: Awaited<ReturnType<ChainRig["balances"]>>) => ({
      ...before,
      buyer: before.buyer - escrowTotal(t),
      seller: before.seller + t.amount,
      platform: before.platform + t.platformAmount,
      feeTo: before.feeTo + t.fee,
    });

    const partiesBefore = ({ contract: _contract, ...before }: Awaited<ReturnType<ChainRig["balances"]>>) => before;

    it("deposits: the buyer's total moves into the contract, the escrow is held, escrow.held once; a replay answers the first deposit", async () => {
      const e = await deposited();
      expect(await rig.balances(e.terms)).toEqual({
        ...e.before,
        buyer: e.before.buyer - escrowTotal(e.terms),
        contract: e.before.contract + escrowTotal(e.terms),
      });
      expect(await rig.state(e.escrowId)).toBe(ESCROW_STATE.held);
      const again = await client.deposit(depositMessage(e.request));
      expect(again).toMatchObject({ replayed: true, pending: false, escrow: { state: EscrowState.HELD, paymentId: e.paymentId } });
      const got = await client.getEscrow({ paymentId: e.paymentId, accountId: "acct_escrow_test" });
      expect(got.escrow?.depositTxHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(got.escrow?.nextStep).toMatch(/^If nobody acts, the payment is released to the seller on /);
      await sweeper.round();
      await expectEvents(e.paymentId, [EVENT_TYPES.escrowHeld]);
      const held = fromBinary(escrowEventsV1.EscrowHeldSchema, events.find((x) => x.aggregateId === e.paymentId)!.payload);
      expect(held.escrow).toMatchObject({ paymentId: e.paymentId, state: "held", total: escrowTotal(e.terms), testMode: false });
    });

    it("a deposit not mined in time answers pending, never held; the reader confirms it once mined; a replay answers the first", async () => {
      const parties = await rig.parties();
      const paymentId = newId("payment");
      const request = await rig.depositRequest(paymentId, parties.terms, parties.buyer);
      const impatient = new EscrowBook(database.db as EscrowDb, {
        contract: settings.contract!,
        chain: jsonRpcEscrowChain({ network: devchain.network, rpcUrl: devchain.url, contract: devchain.escrow, relayerKey: rig.relayerKey }),
        confirmTimeoutMs: 300,
      });
      await rig.rpc("evm_setAutomine", [false]);
      try {
        const r = await impatient.deposit(request);
        expect(r).toMatchObject({ pending: true, replayed: false, row: { state: "depositing" } });
        const got = await client.getEscrow({ paymentId });
        expect(got.escrow).toMatchObject({ state: EscrowState.UNSPECIFIED, nextStep: "The deposit is sent and waits for the chain's confirmation." });
        expect(await client.deposit(depositMessage(request))).toMatchObject({ pending: true, replayed: true });
      } finally {
        await rig.rpc("evm_mine");
        await rig.rpc("evm_setAutomine", [true]);
      }
      await sweeper.round();
      expect((await client.getEscrow({ paymentId })).escrow?.state).toBe(EscrowState.HELD);
      const sent = await (database.db as EscrowDb).selectFrom("escrow_transactions").select("status").where("payment_id", "=", paymentId).execute();
      expect(sent).toEqual([{ status: "confirmed" }]);
      await expectEvents(paymentId, [EVENT_TYPES.escrowHeld]);
    });

    it("a deposit whose receipt is late answers pending before its caller's deadline, however long the service would wait", async () => {
      const parties = await rig.parties();
      const paymentId = newId("payment");
      const request = await rig.depositRequest(paymentId, parties.terms, parties.buyer);
      await rig.rpc("evm_setAutomine", [false]);
      try {
        // The service waits up to 10 s for a receipt; this caller gives it 3.
        const started = Date.now();
        const r = await client.deposit(depositMessage(request), { timeoutMs: 3_000 });
        expect(r).toMatchObject({ pending: true, replayed: false });
        expect(Date.now() - started).toBeLessThan(3_000);
      } finally {
        await rig.rpc("evm_mine");
        await rig.rpc("evm_setAutomine", [true]);
      }
      await sweeper.round();
      expect((await client.getEscrow({ paymentId })).escrow?.state).toBe(EscrowState.HELD);
    });

    it("refuses terms and authorizations the contract would refuse, with a reason the buyer can read, recording nothing", async () => {
      const parties = await rig.parties();
      const request = await rig.depositRequest(newId("payment"), parties.terms, parties.buyer);
      await expect(client.deposit(depositMessage({ ...request, terms: { ...request.terms, arbiter: request.terms.seller } }))).rejects.toThrow(
        /refused: the terms are invalid \(arbiter is the seller\)/,
      );
      await expect(client.deposit(depositMessage({ ...request, terms: { ...request.terms, amount: "999" } }))).rejects.toThrow(/nonce is not the escrow id/);
      const stranger = await rig.party();
      const forged = await rig.depositRequest(request.paymentId, parties.terms, stranger);
      await expect(client.deposit(depositMessage(forged))).rejects.toThrow(/not signed by the buyer/);
      await expect(client.getEscrow({ paymentId: request.paymentId })).rejects.toThrow(/No such escrow/);
    });

    it("approve: relayed from the buyer's signature, released with exact balances; a replayed signature answers the first outcome", async () => {
      const e = await deposited();
      const prepared = await client.prepareAction({ paymentId: e.paymentId, checkoutId: e.checkoutId, action: EscrowAction.APPROVE });
      expect(prepared).toMatchObject({ signer: e.buyer.address, gasless: true, transaction: { to: devchain.escrow.toLowerCase(), family: "evm" } });
      const sig = await signPrepared(e.buyer, prepared.typedDataJson);
      const submit = { paymentId: e.paymentId, checkoutId: e.checkoutId, action: EscrowAction.APPROVE, deadline: sig.deadline, v: sig.v, r: sig.r, s: sig.s };
      const r = await client.submitAction(submit);
      expect(r).toMatchObject({ pending: false, replayed: false, escrow: { state: EscrowState.RELEASED, closedBy: "approve" } });
      expect(await partiesOf(e.terms)).toEqual(released(e.terms, e.before));
      expect(await client.submitAction(submit)).toMatchObject({ replayed: true, txHash: r.txHash, escrow: { state: EscrowState.RELEASED } });
      await sweeper.round();
      await expectEvents(e.paymentId, [EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowReleased]);
      // Nothing more can happen to it.
      await expect(client.prepareAction({ paymentId: e.paymentId, checkoutId: e.checkoutId, action: EscrowAction.HOLD })).rejects.toThrow(/released/);
    });

    it("a signature by someone else is refused before anything is sent", async () => {
      const e = await deposited();
      const stranger = await rig.party();
      await expect(act(e, EscrowAction.HOLD, stranger)).rejects.toThrow(/not the buyer's/);
      await expect(act(e, EscrowAction.CANCEL, e.buyer)).rejects.toThrow(/not the seller's/);
    });

    it("the settle window ends: the sweeper releases it (settle_window)", async () => {
      const e = await deposited();
      await sweeper.round();
      expect((await client.getEscrow({ paymentId: e.paymentId })).escrow?.state).toBe(EscrowState.HELD);
      await rig.warp(3n * DAY + 1n);
      await sweeper.round();
      const got = await client.getEscrow({ paymentId: e.paymentId });
      expect(got.escrow).toMatchObject({ state: EscrowState.RELEASED, closedBy: "settle_window" });
      expect(await partiesOf(e.terms)).toEqual(released(e.terms, e.before));
      await expectEvents(e.paymentId, [EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowReleased]);
    });

    for (const toSeller of [true, false]) {
      it(`hold, request-refund, then the arbiter rules ${toSeller ? "for the seller" : "for the buyer"} from its own wallet: the reader moves it`, async () => {
        const e = await deposited();
        expect(await act(e, EscrowAction.HOLD)).toMatchObject({ escrow: { state: EscrowState.ON_HOLD } });
        const escalated = await act(e, EscrowAction.REQUEST_REFUND);
        expect(escalated.escrow).toMatchObject({ state: EscrowState.ESCALATED });
        expect(escalated.escrow?.nextStep).toMatch(/^The arbiter is asked to rule/);
        const ruling = await client.prepareRuling({ paymentId: e.paymentId, accountId: "acct_escrow_test", toSeller });
        expect(ruling.transaction).toMatchObject({ from: e.arbiter.address, to: devchain.escrow.toLowerCase(), chainId: BigInt(devchain.chainId) });
        await expect(client.prepareRuling({ paymentId: e.paymentId, accountId: "acct_other", toSeller })).rejects.toThrow(/No such escrow/);
        const receipt = await rig.send(e.arbiter, ruling.transaction!);
        expect(receipt.status).toBe("success");
        await sweeper.round();
        const got = await client.getEscrow({ paymentId: e.paymentId });
        expect(got.escrow).toMatchObject({
          state: toSeller ? EscrowState.RELEASED : EscrowState.REFUNDED,
          closedBy: "ruling",
          closeTxHash: receipt.transactionHash,
        });
        expect(await partiesOf(e.terms)).toEqual(toSeller ? released(e.terms, e.before) : partiesBefore(e.before));
        await expectEvents(e.paymentId, [
          EVENT_TYPES.escrowHeld,
          EVENT_TYPES.escrowOnHold,
          EVENT_TYPES.escrowEscalated,
          toSeller ? EVENT_TYPES.escrowReleased : EVENT_TYPES.escrowRefunded,
        ]);
        const escalatedEvent = events.find((x) => x.aggregateId === e.paymentId && x.type === EVENT_TYPES.escrowEscalated)!;
        const payload = fromBinary(escrowEventsV1.EscrowEscalatedSchema, escalatedEvent.payload);
        expect(payload.arbiterReadiness).toMatchObject({ arbiter: e.arbiter.address, family: "evm" });
        expect(payload.arbiterReadiness?.rulingsAffordable).toBeGreaterThan(0);
      });
    }

    it("escalated and no ruling: the sweeper refunds at the backstop; the buyer's own wallet's actions move it too", async () => {
      const e = await deposited();
      // The buyer acts from its own wallet, not through the service: the reader picks it up.
      await rig.callEscrow(e.buyer, "requestRefund", e.escrowId);
      await sweeper.round();
      expect((await client.getEscrow({ paymentId: e.paymentId })).escrow?.state).toBe(EscrowState.ESCALATED);
      await rig.warp(30n * DAY + 1n);
      await sweeper.round();
      expect((await client.getEscrow({ paymentId: e.paymentId })).escrow).toMatchObject({ state: EscrowState.REFUNDED, closedBy: "backstop" });
      expect(await partiesOf(e.terms)).toEqual(partiesBefore(e.before));
      await expectEvents(e.paymentId, [EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowEscalated, EVENT_TYPES.escrowRefunded]);
    });

    it("the seller cancels (signed, relayed): refunded in full", async () => {
      const e = await deposited();
      await act(e, EscrowAction.HOLD);
      const r = await act(e, EscrowAction.CANCEL, e.seller);
      expect(r.escrow).toMatchObject({ state: EscrowState.REFUNDED, closedBy: "cancel" });
      expect(await partiesOf(e.terms)).toEqual(partiesBefore(e.before));
      await sweeper.round();
      await expectEvents(e.paymentId, [EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowOnHold, EVENT_TYPES.escrowRefunded]);
    });

    it("two sweepers at once take each due exit once", async () => {
      const due = await Promise.all([1, 2, 3].map(() => deposited({ settleWindow: HOUR, holdWindow: HOUR, backstopWindow: 2n * HOUR })));
      await rig.warp(HOUR + 1n);
      const db = database.db as EscrowDb;
      const other = new EscrowBook(db, {
        contract: settings.contract!,
        chain: jsonRpcEscrowChain({ network: devchain.network, rpcUrl: devchain.url, contract: devchain.escrow, relayerKey: rig.relayerKey }),
      });
      const acted = await Promise.all([book.sweepTimedExits(false), other.sweepTimedExits(false)]);
      expect(acted[0]! + acted[1]!).toBeGreaterThanOrEqual(3);
      await sweeper.round();
      for (const e of due) {
        const exits = await db
          .selectFrom("escrow_transactions")
          .select("kind")
          .where("payment_id", "=", e.paymentId)
          .where("kind", "in", ["release", "refund"])
          .execute();
        expect(exits).toEqual([{ kind: "release" }]);
        expect((await client.getEscrow({ paymentId: e.paymentId })).escrow?.state).toBe(EscrowState.RELEASED);
        expect(await partiesOf(e.terms)).toEqual(released(e.terms, e.before));
        await expectEvents(e.paymentId, [EVENT_TYPES.escrowHeld, EVENT_TYPES.escrowReleased]);
      }
    });

    it("lists an account's escrows newest first, paged, filtered by state", async () => {
      const accountId = newId("account");
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const parties = await rig.parties();
        const paymentId = newId("payment");
        await client.deposit(depositMessage(await rig.depositRequest(paymentId, parties.terms, parties.buyer, { accountId })));
        ids.push(paymentId);
      }
      const first = await client.listEscrows({ accountId, pageSize: 2, state: EscrowState.UNSPECIFIED });
      expect(first.escrows.map((x) => x.paymentId)).toEqual([ids[2], ids[1]]);
      expect(first.hasMore).toBe(true);
      const second = await client.listEscrows({ accountId, pageSize: 2, state: EscrowState.HELD, startingAfter: ids[1] });
      expect(second.escrows.map((x) => x.paymentId)).toEqual([ids[0]]);
      expect(second.hasMore).toBe(false);
      expect((await client.listEscrows({ accountId, pageSize: 10, state: EscrowState.RELEASED })).escrows).toEqual([]);
    });
  });
});

/** A DepositRequest (domain shape) as the gRPC message payments sends. */
export function depositMessage(r: Awaited<ReturnType<ChainRig["depositRequest"]>>) {
  const PRESET = { instant: 1, standard: 2, shipping: 3, custom: 4 } as const;
  return {
    paymentId: r.paymentId,
    accountId: r.accountId,
    checkoutId: r.checkoutId,
    network: r.network,
    testMode: r.testMode,
    terms: {
      buyer: r.terms.buyer,
      seller: r.terms.seller,
      platform: r.terms.platform,
      feeTo: r.terms.feeTo,
      arbiter: r.terms.arbiter,
      amount: r.terms.amount,
      platformAmount: r.terms.platformAmount,
      fee: r.terms.fee,
      preset: PRESET[r.terms.preset ?? "custom"],
      windows: { settleSeconds: r.terms.settleSeconds, holdSeconds: r.terms.holdSeconds, backstopSeconds: r.terms.backstopSeconds },
      salt: r.terms.salt,
    },
    authorization: r.authorization,
  };
}
