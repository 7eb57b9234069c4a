import { createHash, randomBytes } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";
import { MAX_PROCESSING_AGE } from "./network";

/** The blockhash a block was issued with, that block's height and slot, and when it was produced. */
export interface IssuedBlockhash {
  blockhash: string;
  blockHeight: bigint;
  slot: bigint;
  /** Unix seconds. */
  blockTime: number;
}

/**
 * Recent blockhashes and the heights of the blocks that issued them, as a
 * validator's bank keeps them: a blockhash is valid while the chain is at most
 * MAX_PROCESSING_AGE blocks past the block that issued it. litesvm only ever
 * knows one blockhash, so the devnet keeps its own queue and turns litesvm's
 * check off.
 */
export class BlockhashQueue {
  private readonly heightOf = new Map<string, bigint>();
  /** The blocks whose blockhashes are still valid, by slot (getBlock answers them). */
  private readonly bySlot = new Map<bigint, IssuedBlockhash>();
  private latestIssued: IssuedBlockhash;

  constructor(firstBlockHeight: bigint, firstSlot: bigint) {
    // A random seed: two devnets never share blockhashes (nor, then, transaction signatures).
    this.latestIssued = { blockhash: getBase58Decoder().decode(randomBytes(32)), blockHeight: firstBlockHeight, slot: firstSlot, blockTime: unixNow() };
    this.heightOf.set(this.latestIssued.blockhash, firstBlockHeight);
    this.bySlot.set(firstSlot, this.latestIssued);
  }

  get latest(): IssuedBlockhash {
    return this.latestIssued;
  }

  /** Issues the blockhash of the next block, in the next slot (a hash chain of the previous one). */
  issueNext(): IssuedBlockhash {
    const blockHeight = this.latestIssued.blockHeight + 1n;
    const hash = createHash("sha256").update(this.latestIssued.blockhash).update(blockHeight.toString()).digest();
    this.latestIssued = { blockhash: getBase58Decoder().decode(hash), blockHeight, slot: this.latestIssued.slot + 1n, blockTime: unixNow() };
    this.heightOf.set(this.latestIssued.blockhash, blockHeight);
    this.bySlot.set(this.latestIssued.slot, this.latestIssued);
    // Forget what can never be valid again (the maps keep insertion order: oldest first).
    for (const [blockhash, height] of this.heightOf) {
      if (height + MAX_PROCESSING_AGE >= blockHeight) break;
      this.heightOf.delete(blockhash);
    }
    for (const [slot, block] of this.bySlot) {
      if (block.blockHeight + MAX_PROCESSING_AGE >= blockHeight) break;
      this.bySlot.delete(slot);
    }
    return this.latestIssued;
  }

  /** The block produced in `slot`, while its blockhash is still valid; undefined before or after. */
  blockAt(slot: bigint): { block: IssuedBlockhash; previous: IssuedBlockhash | undefined } | undefined {
    const block = this.bySlot.get(slot);
    return block && { block, previous: this.bySlot.get(slot - 1n) };
  }

  /** The last block height at which a transaction with this blockhash may land. */
  lastValidBlockHeight(issued: IssuedBlockhash): bigint {
    return issued.blockHeight + MAX_PROCESSING_AGE;
  }

  isValid(blockhash: string, currentBlockHeight: bigint): boolean {
    const issuedAt = this.heightOf.get(blockhash);
    return issuedAt !== undefined && currentBlockHeight <= issuedAt + MAX_PROCESSING_AGE;
  }
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
