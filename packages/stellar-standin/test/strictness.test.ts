import { Account, Asset, Keypair, Networks, Operation, TransactionBuilder, rpc, xdr, type Transaction } from "@stellar/stellar-sdk";
import { MAX_SIGNATURE_EXPIRATION_LEDGERS, startStellarStandin, trustCertificateInThisProcess, type StellarStandin } from "../src";
import { Transfers, fundedKeypairs, resultCode, transferOperation, type PreparedTransfer } from "./transfers";

/**
 * Each check the stand-in makes, by a transaction that breaks it: refused as the
 * network refuses it (sendTransaction ERROR with the core result code, or a
 * transaction that lands FAILED, its fee charged and its sequence number used),
 * and no USDC moves. Ledgers close only when a test closes one.
 */
describe("the stand-in's checks", () => {
  let standin: StellarStandin;
  let server: rpc.Server;
  let transfers: Transfers;
  let untrust: () => void;
  const fee = 100n + 30_000n; // the base fee and the resource fee a simulation answers

  beforeAll(async () => {
    standin = await startStellarStandin({ ledgerMs: 0 });
    untrust = trustCertificateInThisProcess(standin.caCertificatePem);
    server = new rpc.Server(standin.url);
    transfers = new Transfers(standin, server);
  });

  afterAll(async () => {
    untrust();
    await standin.close();
  });

  /** A buyer holding 10 USDC, a seller with a trustline, a facilitator that submits; the buyer's transfer of `amount`, signed. */
  async function setup(amount = 2_500_000n) {
    const [buyer, seller, facilitator] = fundedKeypairs(standin, 3) as [Keypair, Keypair, Keypair];
    standin.mintUsdc(buyer.publicKey(), 100_000_000n);
    standin.mintUsdc(seller.publicKey(), 0n);
    const prepared = await transfers.prepare({ from: buyer.publicKey(), to: seller.publicKey(), amount, submitter: facilitator });
    const signed: PreparedTransfer = { ...prepared, auth: await transfers.sign(prepared.auth, buyer) };
    return { buyer, seller, facilitator, prepared, signed };
  }

  function snapshot(...accounts: Keypair[]) {
    return {
      usdc: accounts.map((account) => standin.usdcBalance(account.publicKey())),
      xlm: accounts.map((account) => standin.xlmBalance(account.publicKey())),
      sequence: accounts.map((account) => standin.sequenceNumber(account.publicKey())),
      transfers: standin.transfers().length,
    };
  }

  async function expectRefusedAtSend(tx: Transaction | ReturnType<typeof TransactionBuilder.buildFeeBumpTransaction>, code: string, parties: Keypair[]) {
    const before = snapshot(...parties);
    const sent = await server.sendTransaction(tx);
    expect({ status: sent.status, code: resultCode(sent.errorResult) }).toEqual({ status: "ERROR", code });
    standin.closeLedger();
    expect((await server.getTransaction(sent.hash)).status).toBe("NOT_FOUND");
    expect(snapshot(...parties)).toEqual(before);
    return sent;
  }

  /** Lands FAILED: the fee is charged and the sequence number used, but no USDC moves. */
  async function expectFailedOnChain(tx: Transaction, parties: { buyer: Keypair; seller: Keypair; facilitator: Keypair }, reason: RegExp) {
    const { buyer, seller, facilitator } = parties;
    const before = snapshot(buyer, seller, facilitator);
    const { sent, found } = await transfers.sendAndClose(tx);
    expect(sent.status).toBe("PENDING");
    expect(found.status).toBe("FAILED");
    if (found.status !== "FAILED") return;
    expect(resultCode(found.resultXdr)).toBe("txFailed");
    expect(found.resultXdr.result().results()[0]!.tr().invokeHostFunctionResult().switch().name).toBe("invokeHostFunctionTrapped");
    expect(found.events.contractEventsXdr.flat()).toEqual([]);
    const diagnostics = (found.diagnosticEventsXdr ?? []).map((event) => event.event().body().v0().data().str().toString());
    expect(diagnostics.join("\n")).toMatch(reason);
    const after = snapshot(buyer, seller, facilitator);
    expect(after.usdc).toEqual(before.usdc);
    expect(after.transfers).toBe(before.transfers);
    expect(after.xlm[2]).toBe(before.xlm[2]! - BigInt(tx.fee));
    expect(after.sequence[2]).toBe(before.sequence[2]! + 1n);
  }

  it("applies a well-formed transfer: SUCCESS, balances move by the amount, the fee is charged, the sequence number is used", async () => {
    const { buyer, seller, facilitator, signed } = await setup();
    const before = snapshot(buyer, seller, facilitator);
    const tx = transfers.build(signed, facilitator);
    expect(BigInt(tx.fee)).toBe(fee);
    const { sent, found } = await transfers.sendAndClose(tx);
    expect(sent.status).toBe("PENDING");
    expect(found.status).toBe("SUCCESS");
    const after = snapshot(buyer, seller, facilitator);
    expect(after.usdc).toEqual([before.usdc[0]! - 2_500_000n, 2_500_000n, 0n]);
    expect(after.xlm).toEqual([before.xlm[0], before.xlm[1], before.xlm[2]! - fee]);
    expect(after.sequence[2]).toBe(before.sequence[2]! + 1n);
  });

  describe("authorization entries", () => {
    it("refuses an entry signed by another key than the payer's", async () => {
      const parties = await setup();
      const forged = { ...parties.prepared, auth: await transfers.sign(parties.prepared.auth, Keypair.random()) };
      await expect(server.simulateTransaction(transfers.build(forged, parties.facilitator))).resolves.toMatchObject({
        error: expect.stringMatching(/is not a signer of/),
      });
      await expectFailedOnChain(transfers.build(forged, parties.facilitator), parties, /is not a signer of/);
    });

    it("refuses an entry signed for another network (the passphrase is in the preimage)", async () => {
      const parties = await setup();
      const otherNetwork = { ...parties.prepared, auth: await transfers.sign(parties.prepared.auth, parties.buyer, { passphrase: Networks.PUBLIC }) };
      await expectFailedOnChain(transfers.build(otherNetwork, parties.facilitator), parties, /does not verify/);
    });

    it("refuses an entry whose signed invocation was changed afterwards (a larger amount)", async () => {
      const parties = await setup();
      const larger = transferOperation(standin.usdc, parties.buyer.publicKey(), parties.seller.publicKey(), 9_000_000n).body().invokeHostFunctionOp();
      const entry = xdr.SorobanAuthorizationEntry.fromXDR(parties.signed.auth[0]!.toXDR());
      entry.rootInvocation().function().contractFn().args(larger.hostFunction().invokeContract().args());
      const tampered = { ...parties.signed, hostFunction: larger.hostFunction(), auth: [entry] };
      await expectFailedOnChain(transfers.build(tampered, parties.facilitator), parties, /does not verify/);
    });

    it("refuses an entry that authorizes another call than the one made", async () => {
      const parties = await setup();
      const other = transferOperation(standin.usdc, parties.buyer.publicKey(), parties.seller.publicKey(), 9_000_000n).body().invokeHostFunctionOp();
      const mismatched = { ...parties.signed, hostFunction: other.hostFunction() };
      await expectFailedOnChain(transfers.build(mismatched, parties.facilitator), parties, /authorizes another call/);
    });

    it("refuses a transfer the payer never authorized (no entry, and the payer is not the source)", async () => {
      const parties = await setup();
      await expectFailedOnChain(transfers.build({ ...parties.prepared, auth: [] }, parties.facilitator), parties, /has not authorized/);
    });

    it("takes a nonce once: the same signed entry in a second transaction fails, moving nothing", async () => {
      const parties = await setup();
      const first = await transfers.sendAndClose(transfers.build(parties.signed, parties.facilitator));
      expect(first.found.status).toBe("SUCCESS");
      await expect(server.simulateTransaction(transfers.build(parties.signed, parties.facilitator))).resolves.toMatchObject({
        error: expect.stringMatching(/already used/),
      });
      await expectFailedOnChain(transfers.build(parties.signed, parties.facilitator), parties, /nonce .* already used/);
    });

    it("refuses an entry whose signature expired, and one that expires beyond the allowed window", async () => {
      const parties = await setup();
      const expiring = { ...parties.prepared, auth: await transfers.sign(parties.prepared.auth, parties.buyer, { validUntil: standin.latestLedger() }) };
      // Valid for the ledger that was current when signed, not for the next one it would land in.
      await expectFailedOnChain(transfers.build(expiring, parties.facilitator), parties, /signature expired/);
      const tooFar = {
        ...parties.prepared,
        auth: await transfers.sign(parties.prepared.auth, parties.buyer, { validUntil: standin.latestLedger() + 1 + MAX_SIGNATURE_EXPIRATION_LEDGERS }),
      };
      await expectFailedOnChain(transfers.build(tooFar, parties.facilitator), parties, /beyond the largest allowed/);
    });

    it("lets a payer that is the source account authorize with the transaction's own signature", async () => {
      const [payer, payee] = fundedKeypairs(standin, 2) as [Keypair, Keypair];
      standin.mintUsdc(payer.publicKey(), 5_000_000n);
      standin.mintUsdc(payee.publicKey(), 0n);
      const prepared = await transfers.prepare({ from: payer.publicKey(), to: payee.publicKey(), amount: 5_000_000n, submitter: payer });
      expect(prepared.auth.map((entry) => entry.credentials().switch().name)).toEqual(["sorobanCredentialsSourceAccount"]);
      const { found } = await transfers.sendAndClose(transfers.build(prepared, payer));
      expect(found.status).toBe("SUCCESS");
      expect(standin.usdcBalance(payee.publicKey())).toBe(5_000_000n);
    });
  });

  describe("the envelope", () => {
    it("refuses a transaction signed by another key than its source's (txBAD_AUTH), or for another network", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      await expectRefusedAtSend(transfers.build(signed, facilitator, { signers: [Keypair.random()] }), "txBadAuth", [buyer, seller, facilitator]);
      await expectRefusedAtSend(transfers.build(signed, facilitator, { signers: [] }), "txBadAuth", [buyer, seller, facilitator]);
      const otherNetwork = TransactionBuilder.fromXDR(transfers.build(signed, facilitator, { signers: [] }).toXDR(), Networks.PUBLIC) as Transaction;
      otherNetwork.sign(facilitator);
      await expectRefusedAtSend(TransactionBuilder.fromXDR(otherNetwork.toXDR(), standin.networkPassphrase) as Transaction, "txBadAuth", [
        buyer,
        seller,
        facilitator,
      ]);
    });

    it("refuses a signature no signer needed (txBAD_AUTH_EXTRA)", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      await expectRefusedAtSend(transfers.build(signed, facilitator, { signers: [facilitator, Keypair.random()] }), "txBadAuthExtra", [
        buyer,
        seller,
        facilitator,
      ]);
    });

    it("takes the next sequence number only (txBAD_SEQ for a used one and for one ahead)", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      await expectRefusedAtSend(transfers.build(signed, facilitator, { sequenceOffset: -1n }), "txBadSeq", [buyer, seller, facilitator]);
      await expectRefusedAtSend(transfers.build(signed, facilitator, { sequenceOffset: 1n }), "txBadSeq", [buyer, seller, facilitator]);
    });

    it("lets a minSeqNum precondition skip sequence numbers (CAP-21), from that minimum only", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      const current = standin.sequenceNumber(facilitator.publicKey())!;
      await expectRefusedAtSend(transfers.build(signed, facilitator, { sequenceOffset: 5n, minAccountSequence: String(current + 1n) }), "txBadSeq", [
        buyer,
        seller,
        facilitator,
      ]);
      const { found } = await transfers.sendAndClose(transfers.build(signed, facilitator, { sequenceOffset: 5n, minAccountSequence: String(current) }));
      expect(found.status).toBe("SUCCESS");
      expect(standin.sequenceNumber(facilitator.publicKey())).toBe(current + 6n);
    });

    it("answers DUPLICATE for a transaction already waiting, and txBAD_SEQ once it has landed", async () => {
      const { facilitator, signed } = await setup();
      const tx = transfers.build(signed, facilitator);
      expect((await server.sendTransaction(tx)).status).toBe("PENDING");
      expect((await server.sendTransaction(tx)).status).toBe("DUPLICATE");
      standin.closeLedger();
      expect((await server.getTransaction(tx.hash().toString("hex"))).status).toBe("SUCCESS");
      const again = await server.sendTransaction(tx);
      expect({ status: again.status, code: resultCode(again.errorResult) }).toEqual({ status: "ERROR", code: "txBadSeq" });
      expect(standin.transfers().filter((transfer) => transfer.hash === tx.hash().toString("hex"))).toHaveLength(1);
    });

    it("queues one transaction per account: another waits (TRY_AGAIN_LATER)", async () => {
      const first = await setup();
      const second = await transfers.prepare({ from: first.buyer.publicKey(), to: first.seller.publicKey(), amount: 1n, submitter: first.facilitator });
      expect((await server.sendTransaction(transfers.build(first.signed, first.facilitator))).status).toBe("PENDING");
      const waiting = transfers.build({ ...second, auth: await transfers.sign(second.auth, first.buyer) }, first.facilitator, { sequenceOffset: 1n });
      expect((await server.sendTransaction(waiting)).status).toBe("TRY_AGAIN_LATER");
      standin.closeLedger();
    });

    it("honours time and ledger bounds (txTOO_LATE, txTOO_EARLY)", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      const now = Math.floor(Date.now() / 1000);
      const parties = [buyer, seller, facilitator];
      await expectRefusedAtSend(transfers.build(signed, facilitator, { timebounds: { minTime: 0, maxTime: now - 10 } }), "txTooLate", parties);
      await expectRefusedAtSend(transfers.build(signed, facilitator, { timebounds: { minTime: now + 3600, maxTime: 0 } }), "txTooEarly", parties);
      // maxLedger is exclusive: a transaction sent now lands in the next ledger.
      await expectRefusedAtSend(
        transfers.build(signed, facilitator, { ledgerbounds: { minLedger: 0, maxLedger: standin.latestLedger() + 1 } }),
        "txTooLate",
        parties,
      );
      await expectRefusedAtSend(
        transfers.build(signed, facilitator, { ledgerbounds: { minLedger: standin.latestLedger() + 5, maxLedger: 0 } }),
        "txTooEarly",
        parties,
      );
      const { found } = await transfers.sendAndClose(
        transfers.build(signed, facilitator, { ledgerbounds: { minLedger: 0, maxLedger: standin.latestLedger() + 2 } }),
      );
      expect(found.status).toBe("SUCCESS");
    });

    it("drops a waiting transaction that is no longer valid when its ledger closes: it never lands, and costs nothing", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      const maxTime = Math.floor(Date.now() / 1000) + 1;
      const tx = transfers.build(signed, facilitator, { timebounds: { minTime: 0, maxTime } });
      const before = snapshot(buyer, seller, facilitator);
      expect((await server.sendTransaction(tx)).status).toBe("PENDING");
      // The ledger closes after the transaction's time bound: core drops it from the set.
      while (Math.floor(Date.now() / 1000) <= maxTime) await new Promise((resolve) => setTimeout(resolve, 100));
      standin.closeLedger();
      expect((await server.getTransaction(tx.hash().toString("hex"))).status).toBe("NOT_FOUND");
      expect(snapshot(buyer, seller, facilitator)).toEqual(before);
    });

    it("refuses two operations in one Soroban transaction (txMALFORMED)", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      const extra = Operation.invokeHostFunction({ func: signed.hostFunction, auth: signed.auth });
      await expectRefusedAtSend(transfers.build(signed, facilitator, { extraOperation: extra }), "txMalformed", [buyer, seller, facilitator]);
    });

    it("refuses a fee below the resource fee plus the base fee (txINSUFFICIENT_FEE) and a source that cannot pay it (txINSUFFICIENT_BALANCE)", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      const cheap = { ...signed, sorobanData: xdr.SorobanTransactionData.fromXDR(signed.sorobanData.toXDR()) };
      cheap.sorobanData.resourceFee(xdr.Int64.fromString("1000000"));
      const underpaid = transfers.build(cheap, facilitator);
      const envelope = underpaid.toEnvelope();
      envelope.v1().tx().fee(100);
      const resigned = TransactionBuilder.fromXDR(envelope, standin.networkPassphrase) as Transaction;
      resigned.signatures.length = 0;
      resigned.sign(facilitator);
      await expectRefusedAtSend(resigned, "txInsufficientFee", [buyer, seller, facilitator]);
      const poor = Keypair.random();
      standin.fundAccount(poor.publicKey(), fee - 1n);
      await expectRefusedAtSend(transfers.build(signed, poor), "txInsufficientBalance", [buyer, seller, poor]);
    });

    it("refuses a source account that does not exist (txNO_ACCOUNT)", async () => {
      const { signed } = await setup();
      const stranger = Keypair.random();
      const tx = new TransactionBuilder(new Account(stranger.publicKey(), "1"), {
        fee: "100",
        networkPassphrase: standin.networkPassphrase,
        sorobanData: signed.sorobanData,
      })
        .addOperation(Operation.invokeHostFunction({ func: signed.hostFunction, auth: signed.auth }))
        .setTimeout(60)
        .build();
      tx.sign(stranger);
      const sent = await server.sendTransaction(tx);
      expect({ status: sent.status, code: resultCode(sent.errorResult) }).toEqual({ status: "ERROR", code: "txNoAccount" });
    });
  });

  describe("the call and the balances", () => {
    it("fails a transfer larger than the payer's balance, charging the fee; the nonce stays unused, so the same entry lands once the balance suffices", async () => {
      const parties = await setup(60_000_000n);
      // Another payment of the buyer lands first: what was signed no longer fits the balance.
      const other = await transfers.prepare({ from: parties.buyer.publicKey(), to: parties.seller.publicKey(), amount: 60_000_000n, submitter: parties.buyer });
      expect((await transfers.sendAndClose(transfers.build(other, parties.buyer))).found.status).toBe("SUCCESS");
      await expect(server.simulateTransaction(transfers.build(parties.signed, parties.facilitator))).resolves.toMatchObject({
        error: expect.stringMatching(/balance is not sufficient/),
      });
      await expectFailedOnChain(transfers.build(parties.signed, parties.facilitator), parties, /balance is not sufficient/);
      standin.mintUsdc(parties.buyer.publicKey(), 20_000_000n);
      const { found } = await transfers.sendAndClose(transfers.build(parties.signed, parties.facilitator));
      expect(found.status).toBe("SUCCESS");
      expect(standin.usdcBalance(parties.buyer.publicKey())).toBe(0n);
      expect(standin.usdcBalance(parties.seller.publicKey())).toBe(120_000_000n);
    });

    it("fails the next transaction of an account when told to (failNextTransaction): trapped, the fee charged, nothing moved, the nonce unused; once", async () => {
      const parties = await setup();
      const bystander = await setup();
      expect(() => standin.failNextTransaction("GNOTANACCOUNT")).toThrow(/not an account id/);
      standin.failNextTransaction(parties.facilitator.publicKey());
      // Another account's transaction is not the one armed for.
      expect((await transfers.sendAndClose(transfers.build(bystander.signed, bystander.facilitator))).found.status).toBe("SUCCESS");
      await expectFailedOnChain(transfers.build(parties.signed, parties.facilitator), parties, /told to fail this transaction/);
      // Used once, and the nonce was never spent: the same signed entry lands in the next transaction.
      expect((await transfers.sendAndClose(transfers.build(parties.signed, parties.facilitator))).found.status).toBe("SUCCESS");
      expect(standin.usdcBalance(parties.seller.publicKey())).toBe(2_500_000n);
      // Armed for any account: the next transaction to apply, whoever sends it.
      const anyone = await setup();
      standin.failNextTransaction();
      await expectFailedOnChain(transfers.build(anyone.signed, anyone.facilitator), anyone, /told to fail this transaction/);
    });

    it("fails a transfer to an account without a USDC trustline", async () => {
      const [buyer, stranger, facilitator] = fundedKeypairs(standin, 3) as [Keypair, Keypair, Keypair];
      standin.mintUsdc(buyer.publicKey(), 10_000_000n);
      await expect(transfers.prepare({ from: buyer.publicKey(), to: stranger.publicKey(), amount: 1n, submitter: facilitator })).rejects.toThrow(
        /trustline entry is missing/,
      );
    });

    it("runs no contract but USDC's asset contract, and no function but transfer", async () => {
      const parties = await setup();
      const unknown = "CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC"; // testnet's native (XLM) asset contract
      await expect(
        transfers.prepare({ from: parties.buyer.publicKey(), to: parties.seller.publicKey(), amount: 1n, submitter: parties.facilitator, contract: unknown }),
      ).rejects.toThrow(/is not on this ledger/);
      const elsewhere = transferOperation(unknown, parties.buyer.publicKey(), parties.seller.publicKey(), 2_500_000n)
        .body()
        .invokeHostFunctionOp()
        .hostFunction();
      await expectFailedOnChain(transfers.build({ ...parties.signed, hostFunction: elsewhere }, parties.facilitator), parties, /is not on this ledger/);
    });

    it("pays a contract address (C…): its balance lives in the asset contract, readable through getSACBalance", async () => {
      const [buyer, facilitator] = fundedKeypairs(standin, 2) as [Keypair, Keypair];
      standin.mintUsdc(buyer.publicKey(), 10_000_000n);
      const vault = "CA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUWDA";
      const prepared = await transfers.prepare({ from: buyer.publicKey(), to: vault, amount: 4_000_000n, submitter: facilitator });
      const { found } = await transfers.sendAndClose(transfers.build({ ...prepared, auth: await transfers.sign(prepared.auth, buyer) }, facilitator));
      expect(found.status).toBe("SUCCESS");
      expect(standin.usdcBalance(vault)).toBe(4_000_000n);
      const balance = await server.getSACBalance(
        vault,
        new Asset("USDC", "GBBD47IF6LWK7P7MDEVSCWR7DPUWV3NY3DTQEVFL4NAT4AQH3ZLLFLA5"),
        standin.networkPassphrase,
      );
      expect(balance.balanceEntry?.amount).toBe("4000000");
    });
  });

  describe("fee bumps", () => {
    it("lands a fee bump: the fee source pays, the inner source uses its sequence number, getTransaction says feeBump", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      const [sponsor] = fundedKeypairs(standin, 1) as [Keypair];
      const inner = transfers.build(signed, facilitator);
      const bump = TransactionBuilder.buildFeeBumpTransaction(sponsor, inner.fee, inner, standin.networkPassphrase);
      bump.sign(sponsor);
      const before = snapshot(buyer, seller, facilitator, sponsor);
      const { sent, found } = await transfers.sendAndClose(bump);
      expect(sent.hash).toBe(bump.hash().toString("hex"));
      expect(found.status).toBe("SUCCESS");
      if (found.status !== "SUCCESS") return;
      expect(found.feeBump).toBe(true);
      expect(resultCode(found.resultXdr)).toBe("txFeeBumpInnerSuccess");
      const after = snapshot(buyer, seller, facilitator, sponsor);
      expect(after.xlm[2]).toBe(before.xlm[2]);
      expect(after.xlm[3]).toBe(before.xlm[3]! - BigInt(bump.fee));
      expect(after.sequence[2]).toBe(before.sequence[2]! + 1n);
      expect(after.usdc[1]).toBe(2_500_000n);
    });

    it("refuses a fee bump not signed by its fee source (txBAD_AUTH), and one whose inner transaction is invalid (txFEE_BUMP_INNER_FAILED)", async () => {
      const { buyer, seller, facilitator, signed } = await setup();
      const [sponsor] = fundedKeypairs(standin, 1) as [Keypair];
      const inner = transfers.build(signed, facilitator);
      const unsigned = TransactionBuilder.buildFeeBumpTransaction(sponsor, inner.fee, inner, standin.networkPassphrase);
      unsigned.sign(Keypair.random());
      await expectRefusedAtSend(unsigned, "txBadAuth", [buyer, seller, facilitator, sponsor]);
      const badInner = transfers.build(signed, facilitator, { signers: [Keypair.random()] });
      const bump = TransactionBuilder.buildFeeBumpTransaction(sponsor, badInner.fee, badInner, standin.networkPassphrase);
      bump.sign(sponsor);
      const sent = await expectRefusedAtSend(bump, "txFeeBumpInnerFailed", [buyer, seller, facilitator, sponsor]);
      expect(sent.errorResult!.result().innerResultPair().result().result().switch().name).toBe("txBadAuth");
    });
  });
});
