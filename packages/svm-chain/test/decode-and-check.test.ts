import {
  AccountRole,
  address,
  compressTransactionMessageUsingAddressLookupTables,
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from "@solana/kit";
import { findAssociatedTokenPda, getCloseAccountInstruction, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import {
  associatedTokenAddress,
  checkExactSvmPayment,
  decodeExactSvmPayment,
  preparedTransfersTransaction,
  SvmChain,
  SvmPaymentRejected,
  SvmRejection,
  verifySignerSignatures,
  SOLANA_DEVNET,
  type ExactSvmPayment,
  type ExactSvmRequirement,
  type SvmRejectionReason,
} from "../src";
import { LIGHTHOUSE_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS } from "../src/programs";
import {
  DEVNET_USDC,
  handBuiltPayment,
  memoInstruction,
  newFeePayer,
  officialPayment,
  payerSigned,
  paymentInstructions,
  randomAddress,
  SOME_BLOCKHASH,
  startMintOnlyNode,
} from "./exact-svm-payments";

const SYSTEM_PROGRAM = address("11111111111111111111111111111111");

describe("exact SVM payments: decode and static checks", () => {
  let node: Awaited<ReturnType<typeof startMintOnlyNode>>;
  let chain: SvmChain;
  let payer: KeyPairSigner;
  let requirement: ExactSvmRequirement;

  beforeAll(async () => {
    node = await startMintOnlyNode();
    const feePayer = await newFeePayer();
    // No RPC call is made by these tests: the URL is never dialled.
    chain = await SvmChain.create({ network: SOLANA_DEVNET, rpcUrl: "http://127.0.0.1:9", usdcMint: DEVNET_USDC, feePayerSecret: feePayer.secret });
    payer = await generateKeyPairSigner();
    requirement = { payTo: await randomAddress(), asset: DEVNET_USDC, amount: 1_000n, feePayer: chain.feePayer };
  });
  afterAll(() => node?.stop());

  function rejectionOf(act: () => unknown): SvmRejectionReason | "accepted" {
    try {
      act();
      return "accepted";
    } catch (err) {
      if (err instanceof SvmPaymentRejected) return err.reason;
      throw err;
    }
  }
  const checked = (base64: string, req: ExactSvmRequirement = requirement) => rejectionOf(() => chain.check(decodeExactSvmPayment(base64), req));

  /** The official client's payment for `requirement` with `changes`, checked against `requirement`. */
  async function officialTampered(changes: Partial<ExactSvmRequirement>) {
    return checked(await officialPayment(node.url, payer, { ...requirement, ...changes }));
  }

  async function handBuilt(build: (parts: Awaited<ReturnType<typeof paymentInstructions>>) => Instruction[], signers: KeyPairSigner[] = [payer]) {
    const parts = await paymentInstructions(payer, requirement);
    return handBuiltPayment(chain.feePayer, build(parts), signers);
  }

  it("accepts the official 2.27 client's payment unmodified, and decodes what it says", async () => {
    const base64 = await officialPayment(node.url, payer, requirement);
    const payment = decodeExactSvmPayment(base64);
    expect(checked(base64)).toBe("accepted");
    await expect(verifySignerSignatures(payment)).resolves.toBeUndefined();
    const [source] = await findAssociatedTokenPda({ owner: payer.address, mint: DEVNET_USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const [destination] = await findAssociatedTokenPda({ owner: requirement.payTo as Address, mint: DEVNET_USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    expect(payment).toMatchObject({
      transaction: base64,
      payer: payer.address,
      source,
      destination,
      mint: DEVNET_USDC,
      amount: 1_000n,
      decimals: 6,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
      blockhash: SOME_BLOCKHASH,
      feePayer: chain.feePayer,
      version: 0,
      signers: [chain.feePayer, payer.address],
    });
    expect(payment.signatures[0]).toBeNull();
    expect(payment.memos).toHaveLength(1);
    expect(payment.memos[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(payment.messageHash).toMatch(/^[0-9a-f]{64}$/);
  });

  describe("a payment the service prepared for several recipients (requirement.transfers)", () => {
    async function split() {
      const platform = await randomAddress();
      const transfers = [
        { payTo: requirement.payTo, amount: 900n },
        { payTo: platform, amount: 100n },
      ];
      const prepare = (t: typeof transfers) =>
        preparedTransfersTransaction({
          feePayer: chain.feePayer,
          payer: payer.address,
          mint: DEVNET_USDC,
          decimals: 6,
          transfers: t,
          blockhash: { blockhash: SOME_BLOCKHASH, lastValidBlockHeight: 1_000n },
          memo: "c402 0123456789abcdef",
        });
      return { transfers, prepare, splitRequirement: { ...requirement, amount: 1_000n, transfers } };
    }

    it("accepts the prepared transaction once the payer signs it: one transfer per recipient, in order, from the payer", async () => {
      const { prepare, transfers, splitRequirement } = await split();
      const prepared = prepare(transfers);
      expect(decodeExactSvmPayment(prepared).signatures).toEqual([null, null]);
      // Unsigned by the payer: refused.
      expect(checked(prepared, splitRequirement)).toBe(SvmRejection.signatureInvalid);
      const signed = await payerSigned(prepared, payer);
      expect(checked(signed, splitRequirement)).toBe("accepted");
      await expect(verifySignerSignatures(decodeExactSvmPayment(signed))).resolves.toBeUndefined();
      // Two preparations never share a message (the memo's nonce is the caller's): here the same memo, the same message.
      expect(decodeExactSvmPayment(signed).messageHash).toBe(decodeExactSvmPayment(await payerSigned(prepare(transfers), payer)).messageHash);
    });

    it("refuses the amounts or the recipients swapped, a recipient missing, and a split checked as one transfer", async () => {
      const { prepare, transfers, splitRequirement } = await split();
      const [seller, platform] = transfers as [{ payTo: string; amount: bigint }, { payTo: string; amount: bigint }];
      const sign = (t: typeof transfers) => payerSigned(prepare(t), payer);
      expect(
        checked(
          await sign([
            { ...seller, amount: 100n },
            { ...platform, amount: 900n },
          ]),
          splitRequirement,
        ),
      ).toBe(SvmRejection.amountMismatch);
      expect(checked(await sign([platform, seller]), splitRequirement)).toBe(SvmRejection.recipientMismatch);
      expect(checked(await sign([seller]), splitRequirement)).toBe(SvmRejection.noTransferInstruction);
      // Against the one-transfer requirement, the platform's transfer sits where only Memo and Lighthouse may.
      expect(checked(await sign([{ ...seller, amount: 1_000n }, platform]), requirement)).toBe(SvmRejection.unknownFourthInstruction);
    });
  });

  it("accepts the official client's payment carrying the requirement's memo", async () => {
    const withMemo = { ...requirement, memo: "order 42" };
    const base64 = await officialPayment(node.url, payer, withMemo);
    expect(decodeExactSvmPayment(base64).memos).toEqual(["order 42"]);
    expect(checked(base64, withMemo)).toBe("accepted");
  });

  it("accepts legacy messages, Token-2022 transfers, Lighthouse assertions and no memo at all", async () => {
    const parts = await paymentInstructions(payer, requirement);
    expect(checked(await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer, parts.memo], [payer], "legacy"))).toBe("accepted");
    expect(checked(await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer], [payer]))).toBe("accepted");
    const lighthouse: Instruction = {
      programAddress: LIGHTHOUSE_PROGRAM_ADDRESS as Address,
      accounts: [{ address: parts.source, role: AccountRole.READONLY }],
      data: Uint8Array.of(1, 2, 3),
    };
    expect(checked(await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer, parts.memo, lighthouse], [payer]))).toBe("accepted");

    const [source2022] = await findAssociatedTokenPda({ owner: payer.address, mint: DEVNET_USDC, tokenProgram: TOKEN_2022_PROGRAM_ADDRESS as Address });
    const [destination2022] = await findAssociatedTokenPda({
      owner: requirement.payTo as Address,
      mint: DEVNET_USDC,
      tokenProgram: TOKEN_2022_PROGRAM_ADDRESS as Address,
    });
    const transfer2022 = getTransferCheckedInstruction(
      { source: source2022, mint: DEVNET_USDC, destination: destination2022, authority: payer, amount: requirement.amount, decimals: 6 },
      { programAddress: TOKEN_2022_PROGRAM_ADDRESS as Address },
    );
    const payment = decodeExactSvmPayment(await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, transfer2022], [payer]));
    expect(payment.tokenProgram).toBe(TOKEN_2022_PROGRAM_ADDRESS);
    expect(rejectionOf(() => chain.check(payment, requirement))).toBe("accepted");
  });

  it("keys a payment on its message: whatever sits in the fee payer's slot, the hash is the same", async () => {
    const base64 = await officialPayment(node.url, payer, requirement);
    const bytes = Buffer.from(base64, "base64");
    bytes.fill(7, 1, 65); // the first signature: the fee payer's slot
    const scribbled = bytes.toString("base64");
    expect(scribbled).not.toBe(base64);
    expect(decodeExactSvmPayment(scribbled).messageHash).toBe(decodeExactSvmPayment(base64).messageHash);
    expect(checked(scribbled)).toBe("accepted");
  });

  describe("refuses each tamper with its reason", () => {
    it("amount", async () => {
      expect(await officialTampered({ amount: 999n })).toBe(SvmRejection.amountMismatch);
      expect(await officialTampered({ amount: 1_001n })).toBe(SvmRejection.amountMismatch);
    });

    it("mint", async () => {
      expect(await officialTampered({ asset: await randomAddress() })).toBe(SvmRejection.mintMismatch);
      // A requirement in another asset than this chain's USDC is not one this service issues.
      const otherMint = await randomAddress();
      expect(checked(await officialPayment(node.url, payer, { ...requirement, asset: otherMint }), { ...requirement, asset: otherMint })).toBe(
        SvmRejection.mintMismatch,
      );
    });

    it("destination (payTo)", async () => {
      expect(await officialTampered({ payTo: await randomAddress() })).toBe(SvmRejection.recipientMismatch);
      // The payTo wallet itself rather than its token account.
      const direct = await handBuilt((p) => [
        p.limit,
        p.price,
        getTransferCheckedInstruction({
          source: p.source,
          mint: DEVNET_USDC,
          destination: requirement.payTo as Address,
          authority: payer,
          amount: 1_000n,
          decimals: 6,
        }),
      ]);
      expect(checked(direct)).toBe(SvmRejection.recipientMismatch);
    });

    it("an extra transfer", async () => {
      const extra = await handBuilt((p) => [p.limit, p.price, p.transfer, p.transfer]);
      expect(checked(extra)).toBe(SvmRejection.unknownFourthInstruction);
    });

    it("the fee payer as the transfer's authority", async () => {
      const parts = await paymentInstructions(payer, requirement, { authority: chain.feePayer as Address });
      expect(checked(await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer], []))).toBe(SvmRejection.feePayerTransferringFunds);
    });

    it("the fee payer in another instruction, or as the transfer's source", async () => {
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer, memoInstruction("hi", [chain.feePayer as Address])]))).toBe(
        SvmRejection.feePayerNotIsolated,
      );
      const lighthouse: Instruction = {
        programAddress: LIGHTHOUSE_PROGRAM_ADDRESS as Address,
        accounts: [{ address: chain.feePayer as Address, role: AccountRole.WRITABLE }],
        data: Uint8Array.of(1),
      };
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer, lighthouse]))).toBe(SvmRejection.feePayerNotIsolated);
      const parts = await paymentInstructions(payer, requirement, { source: chain.feePayer as Address });
      expect(checked(await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer], [payer]))).toBe(SvmRejection.feePayerNotIsolated);
    });

    it("a memo other than the requirement's, or not exactly one", async () => {
      const withMemo = { ...requirement, memo: "order 42" };
      expect(checked(await officialPayment(node.url, payer, { ...withMemo, memo: "order 43" }), withMemo)).toBe(SvmRejection.memoMismatch);
      expect(checked(await officialPayment(node.url, payer, requirement), withMemo)).toBe(SvmRejection.memoMismatch);
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer]), withMemo)).toBe(SvmRejection.memoCount);
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer, memoInstruction("order 42"), memoInstruction("order 42")]), withMemo)).toBe(
        SvmRejection.memoCount,
      );
    });

    it("a fee payer that is not this service's", async () => {
      const stranger = await randomAddress();
      // Built for another facilitator's fee payer.
      expect(checked(await officialPayment(node.url, payer, { ...requirement, feePayer: stranger }))).toBe(SvmRejection.feePayerMismatch);
      // A requirement naming a fee payer this chain does not hold.
      const foreign = { ...requirement, feePayer: stranger };
      expect(checked(await officialPayment(node.url, payer, foreign), foreign)).toBe(SvmRejection.feePayerNotManaged);
    });

    it("a payer signature that does not verify, or is missing", async () => {
      const bytes = Buffer.from(await officialPayment(node.url, payer, requirement), "base64");
      bytes[65 + 10]! ^= 1; // a bit of the second signature: the payer's
      const forged = decodeExactSvmPayment(bytes.toString("base64"));
      expect(rejectionOf(() => chain.check(forged, requirement))).toBe("accepted"); // present: the static checks cannot tell
      await expect(verifySignerSignatures(forged)).rejects.toMatchObject({ reason: SvmRejection.signatureInvalid });

      bytes.fill(0, 65, 129);
      expect(checked(bytes.toString("base64"))).toBe(SvmRejection.signatureInvalid);
      // Payer not a signer at all: the transfer's authority is another account, which signs nothing.
      const parts = await paymentInstructions(payer, requirement, { authority: await randomAddress() });
      expect(checked(await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer, memoInstruction("x", [payer.address])], [payer]))).toBe(
        SvmRejection.signatureInvalid,
      );
    });

    it("signers beyond the fee payer and the payer", async () => {
      const cosigner = await generateKeyPairSigner();
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer, memoInstruction("x", [cosigner.address])], [payer, cosigner]))).toBe(
        SvmRejection.excessiveSigners,
      );
    });

    it("compute budget: missing, out of order, or above the caps", async () => {
      expect(checked(await handBuilt((p) => [p.price, p.limit, p.transfer]))).toBe(SvmRejection.computeLimitInstruction);
      expect(checked(await handBuilt((p) => [p.limit, p.memo, p.transfer]))).toBe(SvmRejection.computePriceInstruction);
      const greedy = await paymentInstructions(payer, requirement, { units: 200_001, microLamports: 5_000_001n });
      expect(checked(await handBuiltPayment(chain.feePayer, [greedy.limit, greedy.price, greedy.transfer], [payer]))).toBe(SvmRejection.computeLimitTooHigh);
      const pricey = await paymentInstructions(payer, requirement, { microLamports: 5_000_001n });
      expect(checked(await handBuiltPayment(chain.feePayer, [pricey.limit, pricey.price, pricey.transfer], [payer]))).toBe(SvmRejection.computePriceTooHigh);
      const atCaps = await paymentInstructions(payer, requirement, { units: 200_000, microLamports: 5_000_000n });
      expect(checked(await handBuiltPayment(chain.feePayer, [atCaps.limit, atCaps.price, atCaps.transfer], [payer]))).toBe("accepted");
    });

    it("no transfer, or the transfer not third", async () => {
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.memo], []))).toBe(SvmRejection.noTransferInstruction);
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.memo, p.transfer]))).toBe(SvmRejection.noTransferInstruction);
    });

    it("too many instructions, or too few", async () => {
      const memos = Array.from({ length: 5 }, (_, i) => memoInstruction(`m${i}`));
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer, ...memos]))).toBe(SvmRejection.instructionsLength);
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer, ...memos.slice(1)]))).toBe("accepted");
      expect(checked(await handBuilt((p) => [p.limit, p.transfer]))).toBe(SvmRejection.instructionsLength);
    });

    it("malformed base64, trailing bytes, garbage, oversize", async () => {
      const couldNot = SvmRejection.couldNotBeDecoded;
      const valid = await officialPayment(node.url, payer, requirement);
      expect(rejectionOf(() => decodeExactSvmPayment(""))).toBe(couldNot);
      expect(rejectionOf(() => decodeExactSvmPayment("not base64!"))).toBe(couldNot);
      const bytes = Buffer.from(valid, "base64");
      for (const cut of [1, 2, 3, 40])
        expect(rejectionOf(() => decodeExactSvmPayment(bytes.subarray(0, bytes.length - cut).toString("base64")))).toBe(couldNot);
      expect(rejectionOf(() => decodeExactSvmPayment(valid.replace(/=+$/, "")))).toBe(couldNot);
      expect(rejectionOf(() => decodeExactSvmPayment(Buffer.concat([Buffer.from(valid, "base64"), Buffer.of(0)]).toString("base64")))).toBe(couldNot);
      expect(rejectionOf(() => decodeExactSvmPayment(Buffer.from("hello, world").toString("base64")))).toBe(couldNot);
      expect(rejectionOf(() => decodeExactSvmPayment(Buffer.alloc(1233, 1).toString("base64")))).toBe(couldNot);
      expect(rejectionOf(() => decodeExactSvmPayment("A".repeat(1_000_000)))).toBe(couldNot);
      expect(rejectionOf(() => decodeExactSvmPayment(undefined as unknown as string))).toBe(couldNot);
      // A transaction padded with memos past the packet limit.
      const big = await handBuilt((p) => [p.limit, p.price, p.transfer, memoInstruction("x".repeat(1_000))]);
      expect(Buffer.from(big, "base64").length).toBeGreaterThan(1232);
      expect(rejectionOf(() => decodeExactSvmPayment(big))).toBe(couldNot);
    });

    it("address lookup tables", async () => {
      const parts = await paymentInstructions(payer, requirement);
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayer(chain.feePayer as Address, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: SOME_BLOCKHASH, lastValidBlockHeight: 1000n }, m),
        (m) => appendTransactionMessageInstructions([parts.limit, parts.price, parts.transfer], m),
      );
      const compressed = compressTransactionMessageUsingAddressLookupTables(message, { [await randomAddress()]: [parts.destination] });
      const base64 = getBase64EncodedWireTransaction(await partiallySignTransaction([payer.keyPair], compileTransaction(compressed)));
      expect(rejectionOf(() => decodeExactSvmPayment(base64))).toBe(SvmRejection.addressLookupTables);
    });
  });

  describe("refuses every way to spend the fee payer's lamports before signing", () => {
    it("a System transfer from the fee payer", async () => {
      const drain: Instruction = {
        programAddress: SYSTEM_PROGRAM,
        accounts: [
          { address: chain.feePayer as Address, role: AccountRole.WRITABLE_SIGNER },
          { address: await randomAddress(), role: AccountRole.WRITABLE },
        ],
        data: Uint8Array.from([2, 0, 0, 0, 0, 0xe1, 0xf5, 0x05, 0, 0, 0, 0]),
      };
      const base64 = await handBuilt((p) => [p.limit, p.price, p.transfer, drain]);
      expect(checked(base64)).toBe(SvmRejection.unknownFourthInstruction);
      await expect(chain.cosign(decodeExactSvmPayment(base64))).rejects.toMatchObject({ reason: SvmRejection.feePayerNotIsolated });
    });

    it("the fee payer as token authority", async () => {
      const parts = await paymentInstructions(payer, requirement, { authority: chain.feePayer as Address });
      const base64 = await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer], []);
      expect(checked(base64)).toBe(SvmRejection.feePayerTransferringFunds);
      await expect(chain.cosign(decodeExactSvmPayment(base64))).rejects.toMatchObject({ reason: SvmRejection.feePayerNotIsolated });
    });

    it("the fee payer as a CloseAccount's destination or owner", async () => {
      const parts = await paymentInstructions(payer, requirement);
      const toFeePayer = getCloseAccountInstruction({ account: parts.source, destination: chain.feePayer as Address, owner: payer });
      expect(checked(await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer, toFeePayer], [payer]))).toBe(
        SvmRejection.unknownFourthInstruction,
      );
      const [feePayerAta] = await findAssociatedTokenPda({ owner: chain.feePayer as Address, mint: DEVNET_USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
      const byFeePayer = getCloseAccountInstruction({ account: feePayerAta, destination: payer.address, owner: chain.feePayer as Address });
      const base64 = await handBuiltPayment(chain.feePayer, [parts.limit, parts.price, parts.transfer, byFeePayer], [payer]);
      expect(checked(base64)).toBe(SvmRejection.unknownFourthInstruction);
      await expect(chain.cosign(decodeExactSvmPayment(base64))).rejects.toMatchObject({ reason: SvmRejection.feePayerNotIsolated });
    });

    it("an unknown program", async () => {
      const unknown: Instruction = {
        programAddress: await randomAddress(),
        accounts: [{ address: payer.address, role: AccountRole.READONLY }],
        data: Uint8Array.of(0),
      };
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer, unknown]))).toBe(SvmRejection.unknownFourthInstruction);
      expect(checked(await handBuilt((p) => [p.limit, p.price, p.transfer, p.memo, p.memo, p.memo, unknown]))).toBe(SvmRejection.unknownSeventhInstruction);
    });
  });

  it("derives associated token accounts as @solana-program/token does", async () => {
    for (const tokenProgram of [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS as Address]) {
      for (let i = 0; i < 20; i++) {
        const owner = await randomAddress();
        const [expected] = await findAssociatedTokenPda({ owner, mint: DEVNET_USDC, tokenProgram });
        expect(associatedTokenAddress(owner, DEVNET_USDC, tokenProgram)).toBe(expected);
      }
    }
  });

  it("checks against an explicit policy without a chain", async () => {
    const payment: ExactSvmPayment = decodeExactSvmPayment(await officialPayment(node.url, payer, requirement));
    const policy = { feePayer: chain.feePayer, usdcMint: DEVNET_USDC, maxComputeUnits: 10_000, maxComputeUnitPrice: 5_000_000n };
    expect(rejectionOf(() => checkExactSvmPayment(payment, requirement, policy))).toBe(SvmRejection.computeLimitTooHigh);
  });
});
