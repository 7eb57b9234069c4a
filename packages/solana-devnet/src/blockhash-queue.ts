import { createHash, randomBytes } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";
import { MAX_PROCESSING_AGE } from "./network";

/** The blockhash a block was issued with, and that block's height. */
export interface IssuedBlockhash {
  blockhash: string;
  blockHeight: bigint;
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
  private latestIssued: IssuedBlockhash;

  constructor(firstBlockHeight: bigint) {
    // A random seed: two devnets never share blockhashes (nor, then, transaction signatures).
    this.latestIssued = { blockhash: getBase58Decoder().decode(randomBytes(32)), blockHeight: firstBlockHeight };
    this.heightOf.set(this.latestIssued.blockhash, firstBlockHeight);
  }

  get latest(): IssuedBlockhash {
    return this.latestIssued;
  }

  /** Issues the blockhash of the next block (a hash chain of the previous one). */
  issueNext(): IssuedBlockhash {
    const blockHeight = this.latestIssued.blockHeight + 1n;
    const hash = createHash("sha256").update(this.latestIssued.blockhash).update(blockHeight.toString()).digest();
    this.latestIssued = { blockhash: getBase58Decoder().decode(hash), blockHeight };
    this.heightOf.set(this.latestIssued.blockhash, blockHeight);
    // Forget what can never be valid again (the map keeps insertion order: oldest first).
    for (const [blockhash, height] of this.heightOf) {
      if (height + MAX_PROCESSING_AGE >= blockHeight) break;
      this.heightOf.delete(blockhash);
    }
    return this.latestIssued;
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
