import { accountActivityRow, type AccountAction, type Actor } from "@c402/account-events";
import { enqueueOutboxRow } from "@c402/bus";
import type { OriginAuthTypeName } from "@c402/contracts";
import { isId, newId } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import type { SecretSealer } from "@c402/sealed-secrets";
import * as store from "../store/origin-keys-store";
import type { FulfillmentDb, OriginKeyPage, OriginKeyRow } from "../store/origin-keys-store";
import { assertValid, headerNameErrors, nameErrors, valueErrors } from "./origin-key-rules";

export interface OriginKeyChange {
  accountId: string;
  actor: Actor;
  /** A test key made the change: its account event is a test-mode one. */
  testMode: boolean;
}

/** What a forward to an origin sends: the key's current value, opened only for that. */
export interface OriginCredential {
  authType: OriginAuthTypeName;
  headerName: string | null;
  value: string;
}

const notFound = () => new ProblemError("not-found", "No origin key with that id on this account.");

/**
 * Sellers' origin keys: credentials for their origins, sealed at rest with
 * the key's id as associated data. The value goes in on create and rotate and
 * never comes out to a caller; only a forward opens it (originCredential).
 * Every change commits with its account event (never the value).
 */
export class OriginKeys {
  constructor(private readonly deps: { db: FulfillmentDb; sealer: SecretSealer; now?: () => Date; onCommitted?: () => void }) {}

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  async create(req: OriginKeyChange & { authType: OriginAuthTypeName; value: string; name?: string; headerName?: string }): Promise<OriginKeyRow> {
    const name = req.name === "" ? undefined : req.name;
    assertValid([...valueErrors(req.authType, req.value), ...headerNameErrors(req.authType, req.headerName), ...nameErrors(name)]);
    const id = newId("originKey");
    const at = this.now();
    await this.deps.db.transaction().execute(async (trx) => {
      await store.insertOriginKey(trx, {
        id,
        account_id: req.accountId,
        name: name ?? null,
        auth_type: req.authType,
        header_name: req.headerName ?? null,
        sealed_value: this.deps.sealer.seal(req.value, id),
        created_at: at,
        rotated_at: null,
        revoked_at: null,
      });
      await this.record(trx, req, "origin_key.created", id, at, { auth_type: req.authType, ...(req.headerName ? { header_name: req.headerName } : {}) });
    });
    this.deps.onCommitted?.();
    return this.shown(req.accountId, id);
  }

  list(accountId: string, page: OriginKeyPage): Promise<OriginKeyRow[]> {
    return store.listOriginKeys(this.deps.db, accountId, page);
  }

  /** New value; every checkout that references the key sends it from its next forward. A revoked key cannot be rotated (409). */
  async rotate(req: OriginKeyChange & { id: string; value: string }): Promise<OriginKeyRow> {
    const at = this.now();
    await this.deps.db.transaction().execute(async (trx) => {
      const key = isId("originKey", req.id) ? await store.lockOriginKey(trx, req.accountId, req.id) : undefined;
      if (!key) throw notFound();
      if (key.revoked_at) {
        throw new ProblemError("conflict", {
          message: "This origin key is revoked; create a new one.",
          help: { retry_is_safe: false, fix: "POST /v1/origin-keys" },
        });
      }
      assertValid(valueErrors(key.auth_type, req.value));
      await store.replaceSealedValue(trx, req.id, this.deps.sealer.seal(req.value, req.id), at);
      await this.record(trx, req, "origin_key.rotated", req.id, at, {});
    });
    this.deps.onCommitted?.();
    return this.shown(req.accountId, req.id);
  }

  /** Soft revoke: the row stays (lists show it revoked) and its value is never sent again. Revoking twice changes nothing. */
  async revoke(req: OriginKeyChange & { id: string }): Promise<{ key: OriginKeyRow; revoked: boolean }> {
    const at = this.now();
    const revoked = await this.deps.db.transaction().execute(async (trx) => {
      const key = isId("originKey", req.id) ? await store.lockOriginKey(trx, req.accountId, req.id) : undefined;
      if (!key) throw notFound();
      if (key.revoked_at) return false;
      await store.markRevoked(trx, req.id, at);
      await this.record(trx, req, "origin_key.revoked", req.id, at, {});
      return true;
    });
    if (revoked) this.deps.onCommitted?.();
    return { key: await this.shown(req.accountId, req.id), revoked };
  }

  /** The credential a forward sends, opened now (so a rotation applies from the next forward); 404 for an unknown key, 410 for a revoked one. */
  async originCredential(accountId: string, id: string): Promise<OriginCredential> {
    const row = isId("originKey", id) ? await store.findSealedCredential(this.deps.db, accountId, id) : undefined;
    if (!row) throw notFound();
    if (row.revoked_at) throw new ProblemError("gone", "This origin key is revoked.");
    return this.opened(id, row);
  }

  /** The credential of an origin key of the account that is not revoked; undefined otherwise (the caller names its own field). */
  async usableCredential(accountId: string, id: string): Promise<OriginCredential | undefined> {
    const row = isId("originKey", id) ? await store.findSealedCredential(this.deps.db, accountId, id) : undefined;
    return row && !row.revoked_at ? this.opened(id, row) : undefined;
  }

  private opened(id: string, row: { auth_type: OriginAuthTypeName; header_name: string | null; sealed_value: string }): OriginCredential {
    return { authType: row.auth_type, headerName: row.header_name, value: this.deps.sealer.open(row.sealed_value, id) };
  }

  private async shown(accountId: string, id: string): Promise<OriginKeyRow> {
    const row = await store.findOriginKey(this.deps.db, accountId, id);
    if (!row) throw notFound();
    return row;
  }

  private async record(trx: FulfillmentDb, change: OriginKeyChange, action: AccountAction, objectId: string, at: Date, detail: Record<string, unknown>) {
    await enqueueOutboxRow(
      trx,
      accountActivityRow({ accountId: change.accountId, action, objectId, detail, actor: change.actor, testMode: change.testMode, at }),
    );
  }
}
