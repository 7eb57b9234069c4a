import net from "node:net";
import type { AddressInfo } from "node:net";
import { Keypair, SorobanDataBuilder } from "@stellar/stellar-sdk";
import {
  createTestCertificateAuthority,
  MIN_RESOURCE_FEE,
  refuseStellarOrgLookups,
  startStellarStandin,
  trustCertificateInThisProcess,
  type StellarStandin,
} from "@c402/stellar-standin";
import { createEd25519Signer } from "@x402/stellar";
import { ExactStellarScheme as ExactStellarClientScheme } from "@x402/stellar/exact/client";
import { ExactStellarScheme as ExactStellarFacilitatorScheme } from "@x402/stellar/exact/facilitator";
import { NULL_ACCOUNT } from "@stellar/stellar-sdk/contract";
import {
  buildSettlementTransaction,
  StellarChain,
  StellarPaymentRejected,
  StellarRejection,
  StellarSendRefusal,
  StellarSendRefused,
  type ExactStellarRequirement,
  type SignedSettlement,
  type StellarChainOptions,
} from "../src";
import { stellarPayment } from "./exact-stellar-payments";

const USDC = (amount: number) => BigInt(Math.round(amount * 10_000_000));
/** Long enough for the payer's authorization to outlast a test at the stand-in's quick ledgers: 600 s is 120 ledgers at 5 s. */
const TIMEOUT_SECONDS = 600;

describe("StellarChain on the Soroban RPC stand-in, paid by the official @x402/stellar client", () => {
  let standin: StellarStandin;
  let untrust: () => void;
  let horizon: ReturnType<typeof refuseStellarOrgLookups>;
  let service: Keypair;
  let chain: StellarChain;
  let seller: string;

  const options = (changes: Partial<StellarChainOptions> = {}): StellarChainOptions => ({
    network: standin.network,
    rpcUrl: standin.url,
    usdcContract: standin.usdc,
    accountSecret: service.secret(),
    caCertificatePem: standin.caCertificatePem,
    rpcTimeoutMs: 5_000,
    pollIntervalMs: 50,
    ...changes,
  });

  beforeAll(async () => {
    // Ledgers close every 250 ms unless a test closes them itself.
    standin = await startStellarStandin({ ledgerMs: 250 });
    service = Keypair.random();
    standin.fundAccount(service.publicKey());
    chain = new StellarChain(options());
    // The official client builds its own RPC clients: it trusts the stand-in through the global agent, and asks no one
    // outside the machine for ledger times.
    untrust = trustCertificateInThisProcess(standin.caCertificatePem);
    horizon = refuseStellarOrgLookups();
    seller = Keypair.random().publicKey();
    standin.fundAccount(seller);
    // Its USDC trustline, without which it cannot be paid.
    standin.mintUsdc(seller, 0n);
  });
  afterAll(async () => {
    horizon?.restore();
    untrust?.();
    await standin?.close();
  });

  it("says whether a payout wallet receives USDC: an account through its USDC trustline only, a contract always; another token: unknown", async () => {
    const bare = Keypair.random().publicKey();
    standin.fundAccount(bare);
    expect(await chain.receivesUsdc(seller)).toBe(true);
    // An account holding XLM but no USDC trustline, and one that does not exist at all.
    expect(await chain.receivesUsdc(bare)).toBe(false);
    expect(await chain.receivesUsdc(Keypair.random().publicKey())).toBe(false);
    expect(await chain.receivesUsdc(standin.usdc)).toBe(true);
    expect(chain.usdcAssetName).toMatch(/^USDC:G[A-Z2-7]{55}$/);
    // A token contract other than the network's USDC: no classic asset to look for a trustline to.
    const otherToken = new StellarChain(options({ usdcContract: "CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA" }));
    expect(await otherToken.receivesUsdc(bare)).toBeUndefined();
    expect(otherToken.usdcAssetName).toBeUndefined();
  });

  it("speaks HTTPS trusting the CA it is given (its own agent, not the global one), and refuses a certificate it cannot verify", async () => {
    await expect(chain.ping()).resolves.toBeUndefined();
    const otherAuthority = await createTestCertificateAuthority();
    const untrusting = new StellarChain(options({ caCertificatePem: otherAuthority.certificatePem }));
    await expect(untrusting.ping()).rejects.toThrow(/certificate/);
  });

  it("says when a settlement must be sent to land by a ledger, from the latest ledger's close time the RPC reports", async () => {
    // The RPC's close time is in whole seconds and a ledger closes every 250 ms here: the latest closed at most 1.25 s
    // before it is read. A ledger closing during the call moves the answer one ledger's time earlier.
    for (const ledgerSeconds of [5, 1]) {
      const counting = new StellarChain(options({ ledgerSeconds }));
      const [first, before] = [standin.latestLedger(), Date.now()];
      const at = await counting.sendBy(first + 13);
      const [last, after] = [standin.latestLedger(), Date.now()];
      expect(at).toBeLessThanOrEqual(after + 12 * ledgerSeconds * 1_000);
      expect(at).toBeGreaterThanOrEqual(before - 1_250 + (12 - (last - first)) * ledgerSeconds * 1_000);
    }
  });

  /** A buyer holding `balance`, and the official client's payment of `amount` from it to payTo (the seller by default). */
  async function buyerPayment(amount: bigint, balance = USDC(10), payTo = seller) {
    const buyer = Keypair.random();
    standin.fundAccount(buyer.publicKey());
    standin.mintUsdc(buyer.publicKey(), balance);
    const requirement: ExactStellarRequirement = { payTo, asset: standin.usdc, amount, maxTimeoutSeconds: TIMEOUT_SECONDS };
    const client = new ExactStellarClientScheme(createEd25519Signer(buyer.secret(), "stellar:testnet"), { url: standin.url });
    const wire = { scheme: "exact", network: standin.network, asset: standin.usdc, amount: amount.toString(), payTo, maxTimeoutSeconds: TIMEOUT_SECONDS };
    const created = await client.createPaymentPayload(2, { ...wire, extra: { areFeesSponsored: true } });
    const transaction = (created.payload as { transaction: string }).transaction;
    return { buyer, requirement, wire, transaction, payment: chain.decode(transaction) };
  }

  it("verifies, settles and follows the official client's payment: one transfer, exact balances, only the fee paid by the service", async () => {
    const { buyer, requirement, wire, transaction, payment } = await buyerPayment(USDC(1.25));
    // The client's shape, as the offline tests build it.
    expect(payment).toMatchObject({ source: NULL_ACCOUNT, payer: buyer.publicKey(), payTo: seller, amount: USDC(1.25), contract: standin.usdc });
    expect(payment.authEntries).toEqual([expect.objectContaining({ credentials: "address", address: buyer.publicKey(), signed: true, subInvocations: 0 })]);
    // The official facilitator takes it too.
    const facilitator = new ExactStellarFacilitatorScheme([createEd25519Signer(Keypair.random().secret(), "stellar:testnet")], {
      rpcConfig: { url: standin.url },
    });
    const accepted = { ...wire, extra: { areFeesSponsored: true } };
    expect(await facilitator.verify({ x402Version: 2, accepted, payload: { transaction }, resource: { url: "https://x.test/r" } }, accepted)).toEqual({
      isValid: true,
      payer: buyer.publicKey(),
    });

    await expect(chain.verify(payment, requirement)).resolves.toMatchObject({ latestLedger: expect.any(Number) });
    const sellerBefore = standin.usdcBalance(seller);
    const xlmBefore = standin.xlmBalance(service.publicKey())!;
    const stored: { signed: SignedSettlement; status: unknown }[] = [];
    const { signed, status } = await chain.settle(payment, requirement, {
      // What the saga does here: store the signed transaction; it has not been sent.
      beforeSend: async (s) => void stored.push({ signed: s, status: await chain.status(s.xdr) }),
    });
    expect(stored).toEqual([{ signed, status: { state: "unseen", canStillLand: true } }]);
    expect(status).toEqual({ state: "success", ledger: expect.any(Number) });
    expect(await chain.status(signed.xdr)).toEqual(status);
    expect(signed).toMatchObject({ source: service.publicKey(), feeSource: service.publicKey(), hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(standin.usdcBalance(buyer.publicKey())).toBe(USDC(10) - USDC(1.25));
    expect(standin.usdcBalance(seller)).toBe(sellerBefore + USDC(1.25));
    expect(standin.transfers().filter((t) => t.hash === signed.hash)).toEqual([
      expect.objectContaining({ from: buyer.publicKey(), to: seller, amount: USDC(1.25) }),
    ]);
    // The service paid the fee (the stand-in charges all of it) and nothing else; the buyer paid no XLM.
    expect(standin.xlmBalance(service.publicKey())).toBe(xlmBefore - signed.fee);
    expect(standin.xlmBalance(buyer.publicKey())).toBe(100_000_000_000n);

    // The same bytes again (a retry after a lost answer): a duplicate, never a second transfer.
    const transfers = standin.transfers().length;
    expect(await chain.send(signed.xdr)).toBe("duplicate");
    standin.closeLedger();
    expect(standin.transfers()).toHaveLength(transfers);
    expect(standin.usdcBalance(seller)).toBe(sellerBefore + USDC(1.25));
    // The payment presented again: its authorization's nonce is spent, the simulation says so.
    await expect(chain.settle(payment, requirement)).rejects.toMatchObject({ reason: StellarRejection.simulationFailed });
  });

  it("refuses in verify what the chain would refuse: money spent since, a payee without a USDC trustline, a forged authorization", async () => {
    // Two payments of all the buyer's money, signed while it had it: once one is settled, the other cannot be.
    const { buyer, requirement, payment } = await buyerPayment(USDC(2), USDC(2));
    const client = new ExactStellarClientScheme(createEd25519Signer(buyer.secret(), "stellar:testnet"), { url: standin.url });
    const again = await client.createPaymentPayload(2, {
      scheme: "exact",
      network: standin.network,
      asset: standin.usdc,
      amount: USDC(2).toString(),
      payTo: seller,
      maxTimeoutSeconds: TIMEOUT_SECONDS,
      extra: { areFeesSponsored: true },
    });
    expect((await chain.settle(payment, requirement)).status.state).toBe("success");
    const spent = chain.decode((again.payload as { transaction: string }).transaction);
    await expect(chain.verify(spent, requirement)).rejects.toMatchObject({ reason: StellarRejection.simulationFailed });

    // The official client will not build a payment to a payee without a trustline (its simulation fails); by hand, in its shape.
    const withoutTrustline = Keypair.random().publicKey();
    standin.fundAccount(withoutTrustline);
    const rich = Keypair.random();
    standin.fundAccount(rich.publicKey());
    standin.mintUsdc(rich.publicKey(), USDC(10));
    const unready = { payTo: withoutTrustline, asset: standin.usdc, amount: USDC(1), maxTimeoutSeconds: TIMEOUT_SECONDS };
    const handBuilt = await stellarPayment(rich, unready, { expirationLedger: standin.latestLedger() + 20 });
    const refusal = await chain.verify(chain.decode(handBuilt), unready).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(StellarPaymentRejected);
    expect(refusal).toMatchObject({ reason: StellarRejection.simulationFailed, message: expect.stringMatching(/trustline|USDC/i) });

    const forged = await buyerPayment(USDC(1));
    const signature = forged.payment.authEntries[0]!.entry.credentials().address().signature().vec()![0]!.map()!;
    signature
      .find((e) => e.key().sym().toString() === "signature")!
      .val()
      .bytes()[3]! ^= 1;
    await expect(chain.verify(forged.payment, forged.requirement)).rejects.toMatchObject({ reason: StellarRejection.signatureInvalid });
  });

  it("settles concurrent payments from one service account one after another: all land, each with its own sequence number", async () => {
    const payments = await Promise.all([0.1, 0.2, 0.3, 0.4, 0.5].map((usd) => buyerPayment(USDC(usd))));
    const sellerBefore = standin.usdcBalance(seller);
    const settled = await Promise.all(payments.map(({ payment, requirement }) => chain.settle(payment, requirement)));
    expect(settled.map((s) => s.status.state)).toEqual(["success", "success", "success", "success", "success"]);
    const sequences = settled.map((s) => s.signed.sequence).sort((a, b) => (a < b ? -1 : 1));
    expect(sequences.map((s) => s - sequences[0]!)).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect(standin.usdcBalance(seller)).toBe(sellerBefore + USDC(1.5));
    expect(new Set(settled.map((s) => s.signed.hash)).size).toBe(5);
    for (const s of settled) expect(standin.transfers().filter((t) => t.hash === s.signed.hash)).toHaveLength(1);
  });

  it("with channel accounts: each settlement from a channel's sequence, every fee paid by the service's account in a fee bump", async () => {
    const channels = [Keypair.random(), Keypair.random(), Keypair.random()];
    for (const c of channels) standin.fundAccount(c.publicKey());
    const channelled = new StellarChain(options({ channelSecrets: channels.map((c) => c.secret()) }));
    expect(channelled.serviceAccounts).toEqual([service.publicKey(), ...channels.map((c) => c.publicKey())]);
    const payments = await Promise.all([0.01, 0.02, 0.03, 0.04, 0.05, 0.06].map((usd) => buyerPayment(USDC(usd))));
    const xlmBefore = standin.xlmBalance(service.publicKey())!;
    const channelXlm = channels.map((c) => standin.xlmBalance(c.publicKey()));
    const settled = await Promise.all(payments.map(({ payment, requirement }) => channelled.settle(payment, requirement)));
    expect(settled.every((s) => s.status.state === "success")).toBe(true);
    expect(new Set(settled.map((s) => s.signed.source))).toEqual(new Set(channels.map((c) => c.publicKey())));
    expect(settled.every((s) => s.signed.feeSource === service.publicKey())).toBe(true);
    expect(standin.xlmBalance(service.publicKey())).toBe(xlmBefore - settled.reduce((sum, s) => sum + s.signed.fee, 0n));
    expect(channels.map((c) => standin.xlmBalance(c.publicKey()))).toEqual(channelXlm);
    // A payment from a channel account is the service's own money: refused like the service's account.
    const fromChannel = await buyerPayment(USDC(0.01));
    await expect(channelled.verify({ ...fromChannel.payment, payer: channels[1]!.publicKey() }, fromChannel.requirement)).rejects.toMatchObject({
      reason: StellarRejection.facilitatorIsPayer,
    });
  });

  it("rebuilds a settlement whose sequence number another process took: the first can never land, the second does", async () => {
    // Another process with the same account (which it must not have: the lanes are per process) settles in between.
    const other = new StellarChain(options());
    const first = await buyerPayment(USDC(0.07));
    await chain.settle(first.payment, first.requirement);
    const meanwhile = await buyerPayment(USDC(0.08));
    await other.settle(meanwhile.payment, meanwhile.requirement);

    const { payment, requirement } = await buyerPayment(USDC(0.09));
    const built: SignedSettlement[] = [];
    const { signed, status } = await chain.settle(payment, requirement, { beforeSend: async (s) => void built.push(s) });
    expect(status.state).toBe("success");
    expect(built).toHaveLength(2);
    expect(built[1]).toEqual(signed);
    expect(built[0]!.sequence).toBe(signed.sequence - 1n);
    expect(await chain.status(built[0]!.xdr)).toEqual({ state: "unseen", canStillLand: false, reason: expect.stringMatching(/sequence number .* used/) });
    expect(standin.transfers().filter((t) => t.hash === built[0]!.hash)).toEqual([]);
  });

  it("rebuilds a channel's settlement whose inner sequence number was taken (the fee bump refused for its inner transaction)", async () => {
    const channel = Keypair.random();
    standin.fundAccount(channel.publicKey());
    const [mine, other] = [
      new StellarChain(options({ channelSecrets: [channel.secret()] })),
      new StellarChain(options({ channelSecrets: [channel.secret()] })),
    ];
    const first = await buyerPayment(USDC(0.02));
    await mine.settle(first.payment, first.requirement);
    const meanwhile = await buyerPayment(USDC(0.03));
    await other.settle(meanwhile.payment, meanwhile.requirement);
    const { payment, requirement } = await buyerPayment(USDC(0.04));
    const built: SignedSettlement[] = [];
    const { status } = await mine.settle(payment, requirement, { beforeSend: async (s) => void built.push(s) });
    expect(status.state).toBe("success");
    expect(built.map((s) => s.source)).toEqual([channel.publicKey(), channel.publicKey()]);
    expect(built[1]!.sequence).toBe(built[0]!.sequence + 1n);
  });

  describe("a settlement stored and never sent (the process died before sending)", () => {
    /** A settlement signed and handed to beforeSend, which refuses to go on: nothing is sent. */
    async function storedOnly(changes: Partial<StellarChainOptions> = {}) {
      const { payment, requirement, buyer } = await buyerPayment(USDC(0.5));
      let stored: SignedSettlement | undefined;
      const died = new Error("killed before sending");
      const from = Object.keys(changes).length > 0 ? new StellarChain(options(changes)) : chain;
      await expect(
        from.settle(payment, requirement, {
          beforeSend: async (s) => {
            stored = s;
            throw died;
          },
        }),
      ).rejects.toBe(died);
      return { stored: stored!, payment, requirement, buyer };
    }

    it("can still land, and resume sends it and follows it to success", async () => {
      const { stored, buyer } = await storedOnly();
      standin.closeLedger();
      expect(await chain.status(stored.xdr)).toEqual({ state: "unseen", canStillLand: true });
      expect(await chain.resume(stored.xdr, 10_000)).toEqual({ state: "success", ledger: expect.any(Number) });
      expect(standin.usdcBalance(buyer.publicKey())).toBe(USDC(10) - USDC(0.5));
      expect(standin.transfers().filter((t) => t.hash === stored.hash)).toHaveLength(1);
    });

    it("can never land once its sequence number is used by another settlement (the payer's money stays)", async () => {
      const { stored, buyer } = await storedOnly();
      const next = await buyerPayment(USDC(0.01));
      const { signed } = await chain.settle(next.payment, next.requirement);
      expect(signed.sequence).toBe(stored.sequence);
      expect(await chain.status(stored.xdr)).toEqual({ state: "unseen", canStillLand: false, reason: expect.stringMatching(/used by another transaction/) });
      await expect(chain.send(stored.xdr)).rejects.toMatchObject({ reason: StellarSendRefusal.badSequence, resultCode: "txBadSeq" });
      expect(standin.usdcBalance(buyer.publicKey())).toBe(USDC(10));
    });

    it("can never land once its last ledger is closed: the payer's authorization has expired", async () => {
      const { stored, buyer } = await storedOnly();
      while (standin.latestLedger() < stored.maxLedger - 1) standin.closeLedger();
      expect(await chain.status(stored.xdr)).toEqual({ state: "unseen", canStillLand: false, reason: expect.stringMatching(/last ledger .* is closed/) });
      const refusal = await chain.send(stored.xdr).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(StellarSendRefused);
      expect(refusal).toMatchObject({ reason: StellarSendRefusal.expired, resultCode: "txTooLate" });
      expect(await chain.resume(stored.xdr, 1_000)).toMatchObject({ state: "unseen", canStillLand: false });
      expect(standin.usdcBalance(buyer.publicKey())).toBe(USDC(10));
    });
  });

  it("a settlement whose first ledger is still to come is not queued yet (busy), and can still land", async () => {
    const { payment } = await buyerPayment(USDC(0.01));
    const early = buildSettlementTransaction({
      payment,
      source: service,
      sequence: await chain.sequenceOf(service.publicKey()),
      sorobanData: new SorobanDataBuilder().setResourceFee(MIN_RESOURCE_FEE).build(),
      inclusionFee: 100n,
      // As if built from an RPC fifty ledgers ahead of this one.
      latestLedger: standin.latestLedger() + 50,
      serviceAccounts: chain.serviceAccounts,
      maxFee: 50_000n,
      networkPassphrase: standin.networkPassphrase,
    });
    expect(await chain.send(early.xdr)).toBe("busy");
    expect(await chain.status(early.xdr)).toEqual({ state: "unseen", canStillLand: true });
  });

  it("a payment whose money moved away after verify lands and fails: the fee is taken, nothing moves", async () => {
    // One buyer, two payments of all its money, verified together; the second lands after the first emptied the account.
    const buyer = Keypair.random();
    standin.fundAccount(buyer.publicKey());
    standin.mintUsdc(buyer.publicKey(), USDC(1));
    const client = new ExactStellarClientScheme(createEd25519Signer(buyer.secret(), "stellar:testnet"), { url: standin.url });
    const requirement: ExactStellarRequirement = { payTo: seller, asset: standin.usdc, amount: USDC(1), maxTimeoutSeconds: TIMEOUT_SECONDS };
    const wire = {
      scheme: "exact",
      network: standin.network,
      asset: standin.usdc,
      amount: USDC(1).toString(),
      payTo: seller,
      maxTimeoutSeconds: TIMEOUT_SECONDS,
    };
    const payments = await Promise.all(
      [1, 2].map(async () =>
        chain.decode(((await client.createPaymentPayload(2, { ...wire, extra: { areFeesSponsored: true } })).payload as { transaction: string }).transaction),
      ),
    );
    const xlmBefore = standin.xlmBalance(service.publicKey())!;
    // Both are verified before either is sent (verify runs before a settlement waits for the account's lane).
    const pause = { beforeSend: () => new Promise<void>((resolve) => setTimeout(resolve, 200)) };
    const [a, b] = await Promise.all(payments.map((payment) => chain.settle(payment, requirement, pause)));
    const outcomes = [a!, b!].map((s) => s.status.state).sort();
    expect(outcomes).toEqual(["failed", "success"]);
    const failed = [a!, b!].find((s) => s.status.state === "failed")!;
    expect(failed.status).toMatchObject({ state: "failed", error: expect.stringMatching(/txFailed/) });
    expect(standin.usdcBalance(buyer.publicKey())).toBe(0n);
    expect(standin.xlmBalance(service.publicKey())).toBe(xlmBefore - a!.signed.fee - b!.signed.fee);
  });

  describe("when the RPC does not answer", () => {
    let silent: net.Server;
    let silentUrl: string;
    const sockets = new Set<net.Socket>();
    beforeAll(async () => {
      // Accepts connections and never says a word (not even a TLS hello).
      silent = net.createServer((socket) => void sockets.add(socket));
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      silentUrl = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/rpc/secret-key`;
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });

    it("every call is bounded by rpcTimeoutMs and fails as a plain error naming the RPC by its origin, never a refusal", async () => {
      const stuck = new StellarChain(options({ rpcUrl: silentUrl, rpcTimeoutMs: 200 }));
      const started = Date.now();
      await expect(stuck.ping()).rejects.toThrow(/127\.0\.0\.1:\d+ failed getLatestLedger/);
      const { payment, requirement } = await buyerPayment(USDC(0.01));
      let stored: SignedSettlement | undefined;
      await chain
        .settle(payment, requirement, {
          beforeSend: async (s) => {
            stored = s;
            throw new Error("stop");
          },
        })
        .catch(() => undefined);
      const sendFailure = await stuck.send(stored!.xdr).catch((err: unknown) => err);
      expect(sendFailure).toBeInstanceOf(Error);
      expect(sendFailure).not.toBeInstanceOf(StellarSendRefused);
      expect((sendFailure as Error).message).not.toMatch(/secret-key/);
      await expect(stuck.status(stored!.xdr)).rejects.toThrow(/failed getAccount/);
      await expect(stuck.waitFor(stored!.xdr, 300)).rejects.toThrow();
      await expect(stuck.verify(payment, requirement)).rejects.not.toBeInstanceOf(StellarPaymentRejected);
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  });

  it("reads its keys as Stellar secret seeds and never repeats one in an error", () => {
    expect(new StellarChain(options()).account).toBe(service.publicKey());
    const mistyped = `${service.secret().slice(0, -1)}${service.secret().endsWith("A") ? "B" : "A"}`;
    const errorOf = (make: () => unknown) => {
      try {
        make();
      } catch (err) {
        return (err as Error).message;
      }
      return "accepted";
    };
    expect(errorOf(() => new StellarChain(options({ accountSecret: mistyped })))).toMatch(/^the account secret is not a Stellar secret seed/);
    const channelError = errorOf(() => new StellarChain(options({ channelSecrets: [mistyped] })));
    expect(channelError).toMatch(/^the channel secret #1 is not a Stellar secret seed/);
    expect(channelError).not.toContain(mistyped.slice(1, 20));
    expect(() => new StellarChain(options({ accountSecret: service.publicKey() }))).toThrow(/secret seed/);
    expect(() => new StellarChain(options({ channelSecrets: [service.secret()] }))).toThrow(/must all differ/);
    expect(() => new StellarChain(options({ rpcUrl: standin.url.replace("https:", "http:") }))).toThrow(/insecure/);
  });
});
