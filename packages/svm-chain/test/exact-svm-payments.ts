import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createKeyPairFromPrivateKeyBytes,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressFromPublicKey,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
} from "@solana/kit";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { findAssociatedTokenPda, getMintEncoder, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { SOLANA_DEVNET, type ExactSvmRequirement } from "../src";
import { MEMO_PROGRAM_ADDRESS } from "../src/programs";

/**
 * Exact SVM payments for the tests: built by the official @x402/svm 2.27
 * client unmodified, or by hand with @solana/kit to tamper with one thing.
 */

export const DEVNET_USDC = address("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU");
/** Any 32 bytes in base58: the static checks never ask a node whether a blockhash is recent. */
export const SOME_BLOCKHASH = "4vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi" as Blockhash;

/** A fresh fee payer: its secret key as SvmChain reads it (base58 of 64 bytes), and its address. */
export async function newFeePayer(): Promise<{ secret: string; address: string; secretBytes: Uint8Array }> {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const keyPair = await createKeyPairFromPrivateKeyBytes(seed, true);
  const publicKey = new Uint8Array(await crypto.subtle.exportKey("raw", keyPair.publicKey));
  const secretBytes = Uint8Array.from([...seed, ...publicKey]);
  return { secret: getBase58Decoder().decode(secretBytes), address: await getAddressFromPublicKey(keyPair.publicKey), secretBytes };
}

export async function randomAddress(): Promise<Address> {
  return (await generateKeyPairSigner()).address;
}

/**
 * A loopback JSON-RPC node that knows one thing: every address is a 6-decimal
 * SPL Token mint. Enough for the official client, which reads only the mint.
 */
export async function startMintOnlyNode(): Promise<{ url: string; stop: () => Promise<void> }> {
  const mint = Buffer.from(getMintEncoder().encode({ mintAuthority: null, supply: 10n ** 12n, decimals: 6, isInitialized: true, freezeAuthority: null }));
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const request = JSON.parse(body) as { id: number; method: string };
      const result =
        request.method === "getAccountInfo"
          ? {
              context: { slot: 1 },
              value: {
                data: [mint.toString("base64"), "base64"],
                executable: false,
                lamports: 1_461_600,
                owner: TOKEN_PROGRAM_ADDRESS,
                rentEpoch: 0,
                space: 82,
              },
            }
          : null;
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify(
          result ? { jsonrpc: "2.0", id: request.id, result } : { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "Method not found" } },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The payload.transaction the official 2.27 client builds for this requirement (extra.recentBlockhash given, so it fetches only the mint). */
export async function officialPayment(
  rpcUrl: string,
  payer: KeyPairSigner,
  requirement: ExactSvmRequirement,
  blockhash: { blockhash: string; lastValidBlockHeight: bigint } = { blockhash: SOME_BLOCKHASH, lastValidBlockHeight: 1000n },
  network = SOLANA_DEVNET,
): Promise<string> {
  const client = new ExactSvmScheme(payer, { rpcUrl });
  const extra: Record<string, string> = {
    feePayer: requirement.feePayer,
    recentBlockhash: blockhash.blockhash,
    lastValidBlockHeight: blockhash.lastValidBlockHeight.toString(),
  };
  if (requirement.memo) extra.memo = requirement.memo;
  const payload = await client.createPaymentPayload(2, {
    scheme: "exact",
    network: network as `${string}:${string}`,
    asset: requirement.asset,
    amount: requirement.amount.toString(),
    payTo: requirement.payTo,
    maxTimeoutSeconds: 60,
    extra,
  });
  return (payload.payload as { transaction: string }).transaction;
}

/** The parts of an exact payment, each replaceable by a test. */
export async function paymentInstructions(
  payer: KeyPairSigner,
  requirement: ExactSvmRequirement,
  change: { units?: number; microLamports?: bigint; amount?: bigint; authority?: Address | KeyPairSigner; source?: Address; memo?: string } = {},
) {
  const mint = requirement.asset as Address;
  const [source] = await findAssociatedTokenPda({ owner: payer.address, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [destination] = await findAssociatedTokenPda({ owner: requirement.payTo as Address, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return {
    limit: getSetComputeUnitLimitInstruction({ units: change.units ?? 20_000 }),
    price: getSetComputeUnitPriceInstruction({ microLamports: change.microLamports ?? 1n }),
    transfer: getTransferCheckedInstruction({
      source: change.source ?? source,
      mint,
      destination,
      authority: change.authority ?? payer,
      amount: change.amount ?? requirement.amount,
      decimals: 6,
    }),
    memo: memoInstruction(change.memo ?? "c402 test"),
    source,
    destination,
  };
}

export function memoInstruction(text: string, signers: Address[] = []): Instruction {
  return {
    programAddress: address(MEMO_PROGRAM_ADDRESS),
    accounts: signers.map((signer) => ({ address: signer, role: AccountRole.READONLY_SIGNER })),
    data: new TextEncoder().encode(text),
  };
}

/** A transaction of these instructions, fee payer `feePayer`, signed by `signers` (the fee payer's slot left empty unless it is among them). */
export async function handBuiltPayment(
  feePayer: string,
  instructions: Instruction[],
  signers: KeyPairSigner[],
  version: 0 | "legacy" = 0,
  blockhash: { blockhash: string; lastValidBlockHeight: bigint } = { blockhash: SOME_BLOCKHASH, lastValidBlockHeight: 1000n },
): Promise<string> {
  const message = pipe(
    createTransactionMessage({ version }),
    (m) => setTransactionMessageFeePayer(feePayer as Address, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash.blockhash as Blockhash, lastValidBlockHeight: blockhash.lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const signed = await partiallySignTransaction(
    signers.map((signer) => signer.keyPair),
    compileTransaction(message),
  );
  return getBase64EncodedWireTransaction(signed);
}

/** A prepared transaction (base64, signatures empty) signed by the payer, as a buyer's wallet signs what the service prepared. */
export async function payerSigned(prepared: string, payer: KeyPairSigner): Promise<string> {
  const { getBase64Encoder, getTransactionDecoder } = await import("@solana/kit");
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(prepared));
  return getBase64EncodedWireTransaction(await partiallySignTransaction([payer.keyPair], transaction as Parameters<typeof partiallySignTransaction>[1]));
}
