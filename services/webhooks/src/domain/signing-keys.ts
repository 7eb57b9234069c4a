import { createPrivateKey } from "node:crypto";
import { newId } from "@c402/ids";
import type { SecretSealer } from "@c402/sealed-secrets";
import { signingKeysStore } from "../store/signing-keys-store";
import type { SigningKeyRow, WebhooksDb } from "../store/webhooks-store";
import { newSigningKeyPair, type ServiceSigningKey } from "./signatures";

/** How long a key's successor signs beside it by default: a receiver that cached the old key keeps verifying for a day. */
export const DEFAULT_OVERLAP_MS = 24 * 3_600_000;
/** How long the keys in memory are trusted before the table is read again (a rotation by another replica). */
const CACHE_MS = 30_000;

/**
 * The service's Ed25519 keys that sign deliveries. A rotation adds a key of
 * the next generation and gives the ones before it an end (`retires_at`):
 * until then every delivery is signed by both, and both are published, so a
 * receiver holding either verifies without a gap. Private halves are sealed
 * with the key id as associated data. Replicas agree through the table (the
 * generation is unique, so two rotating at once make one key).
 */
export class SigningKeys {
  private cached: { at: number; keys: ServiceSigningKey[] } | undefined;

  constructor(
    private readonly deps: {
      db: WebhooksDb;
      sealer: SecretSealer;
      clock: () => Date;
      /** A key older than this is rotated when the service starts or rotates on schedule. */
      rotateAfterMs: number;
    },
  ) {}

  /** Makes sure a key signs: the first one on a new database, a successor when the newest is past its age. */
  async ensure(): Promise<void> {
    const newest = await signingKeysStore.newest(this.deps.db);
    if (!newest) await this.insertGeneration(1, undefined);
    else if (this.deps.clock().getTime() - newest.created_at.getTime() >= this.deps.rotateAfterMs) await this.rotate(DEFAULT_OVERLAP_MS);
  }

  /** Starts signing with a new key; the ones signing now go on beside it for `overlapMs`. Answers the published keys. */
  async rotate(overlapMs: number): Promise<SigningKeyRow[]> {
    const newest = await signingKeysStore.newest(this.deps.db);
    await this.insertGeneration((newest?.generation ?? 0) + 1, overlapMs);
    return this.published();
  }

  /** The keys that sign now, newest first: what GET /v1/webhooks/verification-key publishes. */
  published(): Promise<SigningKeyRow[]> {
    return signingKeysStore.signing(this.deps.db, this.deps.clock());
  }

  /** The keys to sign an attempt with, newest first (opened once, re-read every 30 s). */
  async signing(): Promise<ServiceSigningKey[]> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < CACHE_MS) return this.cached.keys;
    const rows = await this.published();
    if (rows.length === 0) throw new Error("webhooks: no signing key (ensure() runs at start)");
    const keys = rows.map((r) => ({
      id: r.id,
      privateKey: createPrivateKey({ key: Buffer.from(this.deps.sealer.open(r.sealed_private_key, r.id), "base64"), format: "der", type: "pkcs8" }),
    }));
    this.cached = { at: now, keys };
    return keys;
  }

  private async insertGeneration(generation: number, overlapMs: number | undefined): Promise<void> {
    const id = newId("signingKey");
    const pair = newSigningKeyPair();
    const at = this.deps.clock();
    await this.deps.db.transaction().execute(async (trx) => {
      const inserted = await signingKeysStore.insert(trx, {
        id,
        generation,
        public_key: pair.publicKey,
        sealed_private_key: this.deps.sealer.seal(pair.privateKeyDer.toString("base64"), id),
        created_at: at,
        retires_at: null,
      });
      // Another replica made this generation first: its key is the new one.
      if (inserted && overlapMs !== undefined) await signingKeysStore.retireOthers(trx, id, new Date(at.getTime() + overlapMs));
    });
    this.cached = undefined;
  }
}
