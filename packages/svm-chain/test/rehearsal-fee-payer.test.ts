import { address, generateKeyPairSigner, getProgramDerivedAddress, isOffCurveAddress, type KeyPairSigner } from "@solana/kit";
import {
  decodeExactSvmPayment,
  programDerivedAddress,
  REHEARSAL_FEE_PAYER,
  rehearsalPolicy,
  SvmPaymentRejected,
  SvmRejection,
  verifyExactSvmPaymentOffline,
  type ExactSvmRequirement,
  type SvmRejectionReason,
} from "../src";
import { MEMO_PROGRAM_ADDRESS } from "../src/programs";
import { DEVNET_USDC, newFeePayer, officialPayment, randomAddress, startMintOnlyNode } from "./exact-svm-payments";

/**
 * The rehearsal fee payer: an address no key exists for, which the official
 * client accepts as fee payer, and the offline verification a rehearsal
 * payment gets (the live checks and signatures, no chain).
 */
describe("the rehearsal fee payer and offline verification", () => {
  let node: Awaited<ReturnType<typeof startMintOnlyNode>>;
  let payer: KeyPairSigner;
  let requirement: ExactSvmRequirement;
  const policy = rehearsalPolicy(DEVNET_USDC);

  beforeAll(async () => {
    node = await startMintOnlyNode();
    payer = await generateKeyPairSigner();
    requirement = { payTo: await randomAddress(), asset: DEVNET_USDC, amount: 1_000n, feePayer: REHEARSAL_FEE_PAYER };
  });
  afterAll(() => node?.stop());

  async function verdict(base64: string, req: ExactSvmRequirement = requirement): Promise<SvmRejectionReason | "accepted"> {
    try {
      await verifyExactSvmPaymentOffline(decodeExactSvmPayment(base64), req, policy);
      return "accepted";
    } catch (err) {
      if (err instanceof SvmPaymentRejected) return err.reason;
      throw err;
    }
  }

  it("is a program-derived address (off the curve: no private key exists for it), the one kit derives", async () => {
    expect(isOffCurveAddress(address(REHEARSAL_FEE_PAYER))).toBe(true);
    const seeds = ["c402 rehearsal fee payer", "no funds move"];
    const [derived] = await getProgramDerivedAddress({ programAddress: address(MEMO_PROGRAM_ADDRESS), seeds });
    expect(REHEARSAL_FEE_PAYER).toBe(derived);
    expect(programDerivedAddress([new TextEncoder().encode("x")], MEMO_PROGRAM_ADDRESS)).not.toBe(REHEARSAL_FEE_PAYER);
    expect(() => programDerivedAddress([new Uint8Array(33)], MEMO_PROGRAM_ADDRESS)).toThrow(/longer than 32/);
  });

  it("the official client pays a requirement naming it unmodified; the payment verifies offline with its slot empty", async () => {
    const base64 = await officialPayment(node.url, payer, requirement);
    const payment = decodeExactSvmPayment(base64);
    expect(payment.feePayer).toBe(REHEARSAL_FEE_PAYER);
    expect(payment.signatures[0]).toBeNull();
    expect(await verdict(base64)).toBe("accepted");
  });

  it("refuses what the live checks refuse: another fee payer, amount, mint, destination; a forged signature", async () => {
    const realFeePayer = (await newFeePayer()).address;
    expect(await verdict(await officialPayment(node.url, payer, { ...requirement, feePayer: realFeePayer }))).toBe(SvmRejection.feePayerMismatch);
    expect(await verdict(await officialPayment(node.url, payer, requirement), { ...requirement, feePayer: realFeePayer })).toBe(
      SvmRejection.feePayerNotManaged,
    );
    expect(await verdict(await officialPayment(node.url, payer, { ...requirement, amount: 1n }))).toBe(SvmRejection.amountMismatch);
    expect(await verdict(await officialPayment(node.url, payer, { ...requirement, payTo: await randomAddress() }))).toBe(SvmRejection.recipientMismatch);
    const otherMint = await randomAddress();
    expect(await verdict(await officialPayment(node.url, payer, requirement), { ...requirement, asset: otherMint })).toBe(SvmRejection.mintMismatch);

    const bytes = Buffer.from(await officialPayment(node.url, payer, requirement), "base64");
    // The payer's signature is the second of the two slots (after the count byte and the empty fee-payer slot).
    bytes[1 + 64 + 10] = bytes[1 + 64 + 10]! ^ 0xff;
    expect(await verdict(bytes.toString("base64"))).toBe(SvmRejection.signatureInvalid);
  });
});
