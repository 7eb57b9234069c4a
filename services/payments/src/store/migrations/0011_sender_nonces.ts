import type { Migration } from "@c402/db";
import { senderNoncesMigration } from "@c402/sender-nonces";

/**
 * The next nonce of each key that signs transactions here, per chain. Every
 * replica of payments signs with the same facilitator key, so the count lives
 * in the database: a signature takes the row's lock, and the nonce it used is
 * counted in the same commit that records the signed transaction (ADR 11).
 */
export const senderNonces: Migration = senderNoncesMigration;
