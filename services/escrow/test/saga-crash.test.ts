import { migrate, openPostgres, type ServiceDatabase } from "@c402/db";
import { startDevchain, type RunningDevchain } from "@c402/devchain";
import { ESCROW_STATE, escrowTotal } from "@c402/evm-contracts";
import type { FailpointName } from "@c402/failpoints";
import { newId } from "@c402/ids";
import { describeWith, freshPostgresDatabase, resultLine, runScriptProcess } from "@c402/testkit";
import { join } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";
import { escrowMigrations, EscrowBook, EscrowSweeper, jsonRpcEscrowChain } from "../src";
import type { EscrowDb } from "../src/store/escrow-store";
import { SAGA_RESULT_PREFIX, type SagaProcessInput } from "./support/escrow-saga-input";
import { ChainRig } from "./support/escrow-chain-rig";

const DRIVER = join(__dirname, "fixtures/escrow-saga-process.ts");

/**
 * The record-first sagas killed -9 (target G6): a replica dies after recording the signed
 * transaction and before sending it, or after sending it and before confirming it. The sweep of
 * another replica resumes from the record: the same bytes are sent (or found mined), the escrow
 * ends where the chain says, and the relayer has sent exactly one transaction for the step.
 */
describeWith("postgres")("escrow sagas killed -9", () => {
  let devchain: RunningDevchain;
  let rig: ChainRig;
  let fresh: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let database: ServiceDatabase;
  let db: EscrowDb;
  let book: EscrowBook;
  let sweeper: EscrowSweeper;

  beforeAll(async () => {
    devchain = await startDevchain({ port: 0 });
    rig = new ChainRig(devchain);
    fresh = await freshPostgresDatabase();
    database = openPostgres({ url: fresh.url, schema: "escrow" });
    await migrate(database, escrowMigrations);
    db = database.db as EscrowDb;
    const chain = jsonRpcEscrowChain({ network: devchain.network, rpcUrl: devchain.url, contract: devchain.escrow, relayerKey: rig.relayerKey });
    book = new EscrowBook(db, { contract: rig.contract, chain });
    sweeper = new EscrowSweeper(db, book, { resumeAfterMs: 0 });
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await fresh?.drop();
    await devchain?.stop();
  });

  const relayerSent = () => rig.pub.getTransactionCount({ address: privateKeyToAccount(rig.relayerKey).address });
  const input = (more: Partial<SagaProcessInput>): SagaProcessInput => ({
    databaseUrl: `${fresh.url}`,
    rpcUrl: devchain.url,
    relayerKey: rig.relayerKey,
    contract: rig.contract,
    ...more,
  });

  async function crash(failpoint: FailpointName, more: Partial<SagaProcessInput>) {
    const exit = await runScriptProcess(DRIVER, input(more), { failpoint, timeoutMs: 90_000 });
    expect(exit.stderr).toContain(`failpoint ${failpoint}: SIGKILL`);
    expect(exit.signal).toBe("SIGKILL");
    expect(resultLine(exit.stdout, SAGA_RESULT_PREFIX)).toBeUndefined();
  }

  for (const failpoint of ["after-sign", "after-broadcast"] as const) {
    it(`a deposit killed ${failpoint} is resumed from its record: one deposit transaction, the escrow held`, async () => {
      const parties = await rig.parties();
      const paymentId = newId("payment");
      const request = await rig.depositRequest(paymentId, parties.terms, parties.buyer);
      const before = await rig.balances(parties.terms);
      const sentBefore = await relayerSent();
      await crash(failpoint, { deposit: request });
      const recorded = await db.selectFrom("escrow_transactions").selectAll().where("payment_id", "=", paymentId).execute();
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({ kind: "deposit", status: failpoint === "after-sign" ? "signed" : "sent" });
      expect((await book.get(paymentId)).state).toBe("depositing");

      // Payments asks again while it is unresolved: the same record answers, nothing new is signed.
      const again = await book.deposit(request);
      expect(again.replayed).toBe(true);
      await sweeper.round();
      expect(await book.get(paymentId)).toMatchObject({ state: "held", deposit_tx_hash: recorded[0]!.tx_hash });
      expect(await relayerSent()).toBe(sentBefore + 1);
      expect(await db.selectFrom("escrow_transactions").select(["status", "tx_hash"]).where("payment_id", "=", paymentId).execute()).toEqual([
        { status: "confirmed", tx_hash: recorded[0]!.tx_hash },
      ]);
      expect((await rig.balances(parties.terms)).buyer).toBe(before.buyer - escrowTotal(parties.terms));
      const outbox = await db
        .selectFrom("outbox" as never)
        .select("event_id" as never)
        .where("key" as never, "=", paymentId as never)
        .execute();
      expect(outbox).toHaveLength(1);
    }, 120_000);
  }

  for (const failpoint of ["after-sign", "after-broadcast"] as const) {
    it(`a relayed action killed ${failpoint} is resumed from its record: one transaction, the escrow on hold`, async () => {
      const parties = await rig.parties();
      const paymentId = newId("payment");
      const request = await rig.depositRequest(paymentId, parties.terms, parties.buyer);
      const held = await book.deposit(request);
      expect(held.row.state).toBe("held");
      const prepared = await book.prepareAction(paymentId, request.checkoutId, "hold");
      const { parseSignature } = await import("viem");
      const { r, s, v, yParity } = parseSignature(await parties.buyer.signTypedData(prepared.typedData));
      const action = {
        paymentId,
        checkoutId: request.checkoutId,
        action: "hold" as const,
        deadline: prepared.deadline.toString(),
        v: Number(v ?? BigInt(yParity + 27)),
        r,
        s,
      };
      const sentBefore = await relayerSent();
      await crash(failpoint, { action });
      const recorded = await db.selectFrom("escrow_transactions").selectAll().where("payment_id", "=", paymentId).where("kind", "=", "action").execute();
      expect(recorded).toHaveLength(1);
      // The same signed action again answers the record (replayed), and signs nothing new.
      const again = await book.submitAction({ ...action, deadline: BigInt(action.deadline) });
      expect(again.replayed).toBe(true);
      await sweeper.round();
      expect((await book.get(paymentId)).state).toBe("on_hold");
      expect(await rig.state(held.row.escrow_id as Hex)).toBe(ESCROW_STATE.on_hold);
      expect(await relayerSent()).toBe(sentBefore + 1);
      const types = await db
        .selectFrom("outbox" as never)
        .select("event_id" as never)
        .where("key" as never, "=", paymentId as never)
        .execute();
      expect(types).toHaveLength(2);
    }, 120_000);
  }
});
