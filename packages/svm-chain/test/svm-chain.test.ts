import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Encoder,
  type Address,
  type Base64EncodedWireTransaction,
  type TransactionMessageBytesBase64,
} from "@solana/kit";
import { startSolanaDevnet, type SolanaDevnet } from "@c402/solana-devnet";
import { decodeExactSvmPayment, SvmChain, SvmPaymentRejected, SvmRejection, SvmSendRefusal, SvmSendRefused, type ExactSvmRequirement } from "../src";
import { newFeePayer, officialPayment, randomAddress } from "./exact-svm-payments";

const ONE_SOL = 1_000_000_000n;
const USDC = (amount: number) => BigInt(Math.round(amount * 1_000_000));

describe("SvmChain on the local devnet", () => {
  let devnet: SolanaDevnet;
  let chain: SvmChain;
  let rpc: ReturnType<typeof createSolanaRpc>;
  let seller: Address;

  beforeAll(async () => {
    // Blocks only on demand: the tests decide when blockhashes age.
    devnet = await startSolanaDevnet({ blockTimeMs: 0 });
    rpc = createSolanaRpc(devnet.url);
    const feePayer = await newFeePayer();
    chain = await SvmChain.create({
      network: devnet.network,
      rpcUrl: devnet.url,
      usdcMint: devnet.usdcMint,
      feePayerSecret: feePayer.secret,
      rpcTimeoutMs: 5_000,
    });
    await devnet.airdrop(chain.feePayer as Address, ONE_SOL);
    seller = await randomAddress();
    await devnet.setTokenBalance(seller, 0n);
  });
  afterAll(() => devnet?.close());

  /** A buyer holding `balance` USDC, and the official client's payment of `amount` from it to the seller. */
  async function buyerPayment(amount: bigint, balance = USDC(10), changes: Partial<ExactSvmRequirement> = {}) {
    const buyer = await generateKeyPairSigner();
    await devnet.setTokenBalance(buyer.address, balance);
    const requirement: ExactSvmRequirement = { payTo: seller, asset: devnet.usdcMint, amount, feePayer: chain.feePayer, ...changes };
    const base64 = await officialPayment(devnet.url, buyer, requirement, await chain.latestBlockhash(), devnet.network);
    return { buyer, requirement, payment: decodeExactSvmPayment(base64) };
  }

  async function lamports(owner: string): Promise<bigint> {
    return (await rpc.getBalance(owner as Address).send()).value;
  }

  it("verifies, co-signs, sends and confirms a payment; the money moves exactly and the fee payer pays only the fee", async () => {
    const { buyer, requirement, payment } = await buyerPayment(USDC(1.5));
    const sellerBefore = await chain.tokenBalance(seller);
    const feePayerBefore = await lamports(chain.feePayer);

    await chain.verify(payment, requirement);
    const { wire, signature } = await chain.cosign(payment);
    expect(await chain.statusOf(signature)).toEqual({ state: "unseen" });
    const fee = (await rpc.getFeeForMessage(Buffer.from(payment.messageBytes).toString("base64") as TransactionMessageBytesBase64).send()).value;
    await chain.send(wire);

    expect(await chain.waitFor(signature, 5_000)).toEqual({ state: "confirmed" });
    expect(await chain.statusOf(signature)).toEqual({ state: "confirmed" });
    expect(await chain.tokenBalance(buyer.address)).toBe(USDC(10) - USDC(1.5));
    expect(await chain.tokenBalance(seller)).toBe(sellerBefore + USDC(1.5));
    expect(fee).not.toBeNull();
    expect(await lamports(chain.feePayer)).toBe(feePayerBefore - fee!);

    // Sent again (a retry after a lost answer): "already processed" is success, and nothing moves twice.
    await expect(chain.send(wire)).resolves.toBeUndefined();
    expect(await chain.tokenBalance(seller)).toBe(sellerBefore + USDC(1.5));
    expect(await lamports(chain.feePayer)).toBe(feePayerBefore - fee!);
  });

  it("co-signs deterministically: one message, one signature, one transaction id", async () => {
    const { payment } = await buyerPayment(USDC(0.01));
    const first = await chain.cosign(payment);
    // The same message presented with garbage in the fee payer's slot.
    const scribbled = Buffer.from(payment.transaction, "base64");
    scribbled.fill(9, 1, 65);
    const second = await chain.cosign(decodeExactSvmPayment(scribbled.toString("base64")));
    expect(second).toEqual(first);
    const wire = Buffer.from(first.wire, "base64");
    expect(Buffer.from(wire.subarray(1, 65)).equals(Buffer.from(getBase58Encoder().encode(first.signature)))).toBe(true);
    // Only the fee payer's slot changed.
    expect(wire.subarray(65).equals(Buffer.from(payment.transaction, "base64").subarray(65))).toBe(true);
  });

  it("refuses in verify what the chain would refuse: a forged payer signature, too little money, no token account to pay", async () => {
    const forged = await buyerPayment(USDC(1));
    const bytes = Buffer.from(forged.payment.transaction, "base64");
    bytes[70]! ^= 1;
    await expect(chain.verify(decodeExactSvmPayment(bytes.toString("base64")), forged.requirement)).rejects.toMatchObject({
      reason: SvmRejection.signatureInvalid,
    });

    const poor = await buyerPayment(USDC(2), USDC(1));
    await expect(chain.verify(poor.payment, poor.requirement)).rejects.toMatchObject({ reason: SvmRejection.simulationFailed });

    const unready = await buyerPayment(USDC(1), USDC(10), { payTo: await randomAddress() });
    const refusal = await chain.verify(unready.payment, unready.requirement).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(SvmPaymentRejected);
    expect((refusal as SvmPaymentRejected).reason).toBe(SvmRejection.simulationFailed);
  });

  it("a payment refused by preflight never lands (SvmSendRefused) and stays unseen", async () => {
    const poor = await buyerPayment(USDC(2), USDC(1));
    const { wire, signature } = await chain.cosign(poor.payment);
    const refusal = await chain.send(wire).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(SvmSendRefused);
    expect((refusal as SvmSendRefused).reason).toBe(SvmSendRefusal.simulationFailed);
    expect(await chain.statusOf(signature)).toEqual({ state: "unseen" });
  });

  it("a transaction that landed and failed reads as failed", async () => {
    const poor = await buyerPayment(USDC(2), USDC(1));
    const { wire, signature } = await chain.cosign(poor.payment);
    // Sent past preflight (as another sender might): it lands, fails, and its fee is taken.
    await rpc.sendTransaction(wire as Base64EncodedWireTransaction, { encoding: "base64", skipPreflight: true }).send();
    const status = await chain.waitFor(signature, 5_000);
    expect(status.state).toBe("failed");
    expect((status as { error: string }).error).toMatch(/InstructionError|Custom|insufficient/i);
  });

  it("an expired blockhash: blockhashValid false, send refused as settle_exact_svm_block_height_exceeded, verify refuses", async () => {
    const { payment, requirement } = await buyerPayment(USDC(1));
    expect(await chain.blockhashValid(payment.blockhash)).toBe(true);
    devnet.advanceBlocks(151);
    expect(await chain.blockhashValid(payment.blockhash)).toBe(false);
    const { wire, signature } = await chain.cosign(payment);
    const refusal = await chain.send(wire).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(SvmSendRefused);
    expect((refusal as SvmSendRefused).reason).toBe(SvmSendRefusal.blockhashNotFound);
    await expect(chain.verify(payment, requirement)).rejects.toMatchObject({ reason: SvmRejection.simulationFailed });
    expect(await chain.waitFor(signature, 300)).toEqual({ state: "unseen" });
  });

  it("reads how many blocks a blockhash has left from the block that issued it, and nothing for one too old or never issued", async () => {
    const { blockhash, lastValidBlockHeight } = await chain.latestBlockhash();
    expect(await chain.blocksLeft(blockhash)).toBe(lastValidBlockHeight - devnet.blockHeight());
    devnet.advanceBlocks(40);
    expect(await chain.blocksLeft(blockhash)).toBe(lastValidBlockHeight - devnet.blockHeight());
    expect(await chain.blocksLeft(blockhash)).toBe(110n);
    // Past the slots it reads (100), or never issued: unknown, which a caller treats as no time left.
    devnet.advanceBlocks(70);
    expect(await chain.blocksLeft(blockhash)).toBeUndefined();
    expect(await chain.blocksLeft((await randomAddress()) as string)).toBeUndefined();
  });

  it("knows which wallets can be paid, and their balances", async () => {
    expect(await chain.tokenAccountExists(seller)).toBe(true);
    const stranger = await randomAddress();
    expect(await chain.tokenAccountExists(stranger)).toBe(false);
    expect(await chain.tokenBalance(stranger)).toBe(0n);
    await devnet.setTokenBalance(stranger, USDC(3.25));
    expect(await chain.tokenAccountExists(stranger)).toBe(true);
    expect(await chain.tokenBalance(stranger)).toBe(USDC(3.25));
    // A wallet's token account for another mint is not a USDC account.
    const other = await randomAddress();
    const otherMint = await randomAddress();
    await devnet.setTokenBalance(other, 5n, otherMint).catch(() => undefined);
    expect(await chain.tokenAccountExists(other)).toBe(false);
  });

  it("answers ping and the latest blockhash", async () => {
    await expect(chain.ping()).resolves.toBeUndefined();
    const latest = await chain.latestBlockhash();
    expect(await chain.blockhashValid(latest.blockhash)).toBe(true);
    expect(latest.lastValidBlockHeight).toBeGreaterThan(devnet.blockHeight());
  });

  describe("when the node does not answer", () => {
    let silent: http.Server;
    let silentUrl: string;
    beforeAll(async () => {
      // Accepts the request and never answers.
      silent = http.createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    });

    it("every call is bounded by rpcTimeoutMs and fails as a plain error (outcome unknown), never a refusal", async () => {
      const stuck = await SvmChain.create({
        network: devnet.network,
        rpcUrl: silentUrl,
        usdcMint: devnet.usdcMint,
        feePayerSecret: (await newFeePayer()).secret,
        rpcTimeoutMs: 200,
      });
      const started = Date.now();
      await expect(stuck.ping()).rejects.toThrow();
      const { payment } = await buyerPayment(USDC(1));
      const { wire, signature } = await chain.cosign(payment);
      const sendFailure = await stuck.send(wire).catch((err: unknown) => err);
      expect(sendFailure).toBeInstanceOf(Error);
      expect(sendFailure).not.toBeInstanceOf(SvmSendRefused);
      await expect(stuck.statusOf(signature)).rejects.toThrow();
      // A wait whose every question failed throws: "could not ask" is never "unseen".
      await expect(stuck.waitFor(signature, 300)).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  });

  it("reads a transaction in a block not yet confirmed as processed, and waits on through it", async () => {
    // A node that has the transaction at "processed" commitment only, landed or failed.
    const node = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const { id } = JSON.parse(body) as { id: number };
        const status = { slot: 7, confirmations: 0, err: { InstructionError: [2, { Custom: 1 }] }, confirmationStatus: "processed" };
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ jsonrpc: "2.0", id, result: { context: { slot: 7 }, value: [status] } }));
      });
    });
    await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
      const watcher = await SvmChain.create({ network: devnet.network, rpcUrl: url, usdcMint: devnet.usdcMint, feePayerSecret: (await newFeePayer()).secret });
      const { payment } = await buyerPayment(USDC(1));
      const { signature } = await chain.cosign(payment);
      expect(await watcher.statusOf(signature)).toEqual({ state: "processed" });
      expect(await watcher.waitFor(signature, 300)).toEqual({ state: "processed" });
    } finally {
      node.closeAllConnections();
      await new Promise((resolve) => node.close(resolve));
    }
  });

  it("reads the fee payer secret as base58 or as solana-keygen's JSON array, and refuses anything else", async () => {
    const { secret, secretBytes, address } = await newFeePayer();
    const options = { network: devnet.network, rpcUrl: devnet.url, usdcMint: devnet.usdcMint };
    expect((await SvmChain.create({ ...options, feePayerSecret: secret })).feePayer).toBe(address);
    expect((await SvmChain.create({ ...options, feePayerSecret: JSON.stringify([...secretBytes]) })).feePayer).toBe(address);
    await expect(SvmChain.create({ ...options, feePayerSecret: "not a key" })).rejects.toThrow(/base58|bytes/);
    const mismatched = Uint8Array.from(secretBytes);
    mismatched[40]! ^= 1;
    await expect(SvmChain.create({ ...options, feePayerSecret: JSON.stringify([...mismatched]) })).rejects.toThrow(/does not match/);
    await expect(SvmChain.create({ ...options, feePayerSecret: JSON.stringify([...secretBytes.subarray(0, 32)]) })).rejects.toThrow(/32 bytes/);
  });
});
