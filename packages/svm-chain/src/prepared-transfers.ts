import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getTransferCheckedInstruction } from "@solana-program/token";
import {
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
} from "@solana/kit";
import { associatedTokenAddress } from "./associated-token-address";
import { MEMO_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from "./programs";

/** One recipient of a payment: its wallet (paid at its associated token account) and the base units it receives. */
export interface SvmTransfer {
  payTo: string;
  amount: bigint;
}

/** What the official client asks for one transfer (20,000 units at 1 microlamport); a prepared payment asks that per transfer. */
const COMPUTE_UNITS_PER_TRANSFER = 20_000;
const COMPUTE_UNIT_PRICE_MICROLAMPORTS = 1n;

/**
 * The transaction of a payment with several recipients, as the service
 * prepares it for a buyer's wallet to sign (POST …/prepare): the layout of
 * the official client's, with one TransferChecked per recipient, in order,
 * all from the payer's USDC account — compute limit, compute price, the
 * transfers, one memo (a nonce, so two preparations never share a message) —
 * under `feePayer`, unsigned (the payer signs, the service co-signs when it
 * settles). Answers its base64 wire form, every signature slot empty.
 */
export function preparedTransfersTransaction(opts: {
  feePayer: string;
  payer: string;
  mint: string;
  decimals: number;
  transfers: readonly SvmTransfer[];
  blockhash: { blockhash: string; lastValidBlockHeight: bigint };
  memo: string;
}): string {
  const authority = createNoopSigner(address(opts.payer));
  const source = address(associatedTokenAddress(opts.payer, opts.mint, TOKEN_PROGRAM_ADDRESS));
  const transfers = opts.transfers.map((t) =>
    getTransferCheckedInstruction({
      source,
      mint: address(opts.mint),
      destination: address(associatedTokenAddress(t.payTo, opts.mint, TOKEN_PROGRAM_ADDRESS)),
      authority,
      amount: t.amount,
      decimals: opts.decimals,
    }),
  );
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(opts.feePayer), m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getSetComputeUnitLimitInstruction({ units: COMPUTE_UNITS_PER_TRANSFER * transfers.length }),
          getSetComputeUnitPriceInstruction({ microLamports: COMPUTE_UNIT_PRICE_MICROLAMPORTS }),
          ...transfers,
          { programAddress: address(MEMO_PROGRAM_ADDRESS), accounts: [], data: new TextEncoder().encode(opts.memo) },
        ],
        m,
      ),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: opts.blockhash.blockhash as Blockhash, lastValidBlockHeight: opts.blockhash.lastValidBlockHeight },
        m,
      ),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}
