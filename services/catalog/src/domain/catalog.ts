import { randomUUID } from "node:crypto";
import type { Actor } from "@c402/account-events";
import { enqueueOutboxRow } from "@c402/bus";
import { failpoint } from "@c402/failpoints";
import { isCheckoutId, newId } from "@c402/ids";
import { formatUsd } from "@c402/money";
import { ProblemError, invalid } from "@c402/problems";
import {
  catalogStore as store,
  checkoutFromSnapshot,
  type CatalogDb,
  type CheckoutPage,
  type CheckoutRow,
  type CheckoutSummaryRow,
  type IdempotencyScope,
  type SellingRow,
} from "../store/catalog-store";
import { checkoutActivity } from "../events/checkout-activity";
import { IDEMPOTENCY_CLAIM_LEASE_MS, IDEMPOTENCY_RETENTION_MS, retryAfterSecondsForClaim } from "./idempotency";
import { payoutsAtCreate, platformFeeRailsAtCreate, withAddedRail, type AccountWallet } from "./payout-rails";
import {
  accountTermsOf,
  CHECKOUT_LIMITS,
  effectiveStatus,
  NOT_A_PLATFORM,
  validateCreate,
  validatePatch,
  type AccountPlatform,
  type CreateCheckoutInput,
  type OfferPatchInput,
  type AccountTerms,
  type ValidCheckout,
} from "./checkout-rules";
import { ensureArbiterIsNotSeller } from "./escrow-rules";
import type { RelayOrigin } from "./relay-rules";

/** Where an account's platform mode comes from (identity, over gRPC). */
export type PlatformSource = (accountId: string) => Promise<AccountPlatform>;

/** Where the standing payout wallets of an account come from (identity, over gRPC). */
export type PayoutWalletSource = (accountId: string) => Promise<AccountWallet[]>;

/** A checkout as a caller holding one of its revisions needs it (Catalog.getRevised). */
export interface RevisedCheckout {
  revision: string;
  /** What the checkout's status now depends on (effectiveStatus). */
  state: Pick<CheckoutRow, "status" | "voided_at" | "expires_at">;
  /** The whole record; absent when the caller's revision is current. */
  checkout?: CheckoutRow;
}

const noSuchCheckout = () => new ProblemError("not-found", "No such checkout.");

/** Whether a checkout row was found and, when the lookup is restricted to an account, is that account's. */
function visibleTo<R extends { account_id: string }>(row: R | undefined, accountId: string | undefined): row is R {
  return row !== undefined && (accountId === undefined || row.account_id === accountId);
}

/**
 * Where a relay checkout's origin is checked and its credential bound
 * (fulfillment, over gRPC): registered before the checkout is written, with
 * the id it will have, and forgotten again when the write fails.
 */
export interface OriginRegistry {
  /** Answers the URL as it will be called; 422 naming the field for an origin or key that cannot be used. */
  register(req: { accountId: string; checkoutId: string; origin: RelayOrigin }): Promise<string>;
  forget(checkoutId: string): Promise<void>;
  /** What a package checkout's live packages still owe (fulfillment keeps them). */
  liabilities(checkoutId: string): Promise<Liabilities>;
}

/** What buyers still hold against a checkout: live package keys, their unspent calls, and the part of the price those stand for. */
export interface Liabilities {
  liveKeys: number;
  callsUnspent: bigint;
  unearnedAtomic: bigint;
}

const NO_LIABILITIES: Liabilities = { liveKeys: 0, callsUnspent: 0n, unearnedAtomic: 0n };

const NO_ORIGINS: OriginRegistry = {
  liabilities: async () => NO_LIABILITIES,
  register: async () => {
    throw new ProblemError("unavailable", "Relay checkouts cannot be created here: no fulfillment service is configured.");
  },
  forget: async () => {},
};

/** The most checkouts one list call answers, whoever asks (the gateway asks at most 201). */
export const LIST_PAGE_SIZE_MAX = 1000;

function checkPageSize(page: CheckoutPage): void {
  if (!Number.isInteger(page.size) || page.size < 1 || page.size > LIST_PAGE_SIZE_MAX) {
    throw invalid([{ field: "page_size", reason: `must be from 1 to ${LIST_PAGE_SIZE_MAX}` }]);
  }
}

export interface CreateRequest extends CreateCheckoutInput {
  accountId: string;
  actor: Actor;
  idempotencyKey?: string;
  fingerprint: string;
}

export interface CatalogOptions {
  db: CatalogDb;
  payoutWallets: PayoutWalletSource;
  /** Absent: every account is an ordinary seller (tests that do not concern platforms). */
  platform?: PlatformSource;
  /** Absent: relay checkouts cannot be created (tests that do not concern them). */
  origins?: OriginRegistry;
  now?: () => Date;
  /** Called after a commit that wrote an outbox event (pokes the relay). */
  onCommitted?: () => void;
}

/**
 * Checkout lifecycle: create (idempotent per account, key mode and key), read,
 * list, go live. Every change commits with its account event (outbox).
 */
export class Catalog {
  private readonly db: CatalogDb;
  private readonly payoutWallets: PayoutWalletSource;
  private readonly platform: PlatformSource;
  private readonly origins: OriginRegistry;
  private readonly now: () => Date;
  private readonly onCommitted: () => void;

  constructor(options: CatalogOptions) {
    this.db = options.db;
    this.payoutWallets = options.payoutWallets;
    this.platform = options.platform ?? (async () => NOT_A_PLATFORM);
    this.origins = options.origins ?? NO_ORIGINS;
    this.now = options.now ?? (() => new Date());
    this.onCommitted = options.onCommitted ?? (() => {});
  }

  async create(req: CreateRequest): Promise<{ checkout: CheckoutRow; replayed: boolean }> {
    if (req.idempotencyKey === undefined) return { checkout: await this.createOnce(req), replayed: false };
    // A test key and a live key of one account never share an idempotency key.
    const scope: IdempotencyScope = { accountId: req.accountId, mode: req.createdWithLiveKey ? "live" : "test", key: req.idempotencyKey };

    const now = this.now();
    await store.expireKey(this.db, scope, new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS));
    const token = randomUUID();
    const claim = { fingerprint: req.fingerprint, token, at: now, abandonedBefore: new Date(now.getTime() - IDEMPOTENCY_CLAIM_LEASE_MS) };
    if (!(await store.claimKey(this.db, scope, claim))) {
      const existing = await store.findKey(this.db, scope);
      if (!existing) throw new ProblemError("conflict", { message: "The idempotency key changed state; retry.", retryAfterSeconds: 1 });
      if (existing.fingerprint !== req.fingerprint) {
        throw invalid(
          [{ field: "Idempotency-Key", reason: "was already used with a different request body" }],
          "Idempotency-Key reused with a different body.",
        );
      }
      if (existing.state === "in_flight" || !existing.snapshot) {
        throw new ProblemError("conflict", {
          message: "A request with this Idempotency-Key is still in flight.",
          help: { retry_is_safe: true, fix: "Retry after it finishes (Retry-After says when)." },
          retryAfterSeconds: retryAfterSecondsForClaim(existing.claimed_at, now),
        });
      }
      // The original checkout, as first returned (not its state now).
      return { checkout: checkoutFromSnapshot(existing.snapshot), replayed: true };
    }
    // A crash from here until the commit leaves the key claimed: the next request takes it over after the lease.
    failpoint("create-after-key-claim");
    try {
      return { checkout: await this.createOnce(req, { scope, token }), replayed: false };
    } catch (err) {
      // A create that fails releases the key so it can be reused.
      await store.releaseKey(this.db, scope, token);
      throw err;
    }
  }

  private async createOnce(req: CreateRequest, idempotency?: { scope: IdempotencyScope; token: string }): Promise<CheckoutRow> {
    const valid = validateCreate(req);
    // Never call another service inside a transaction: resolve the account's terms and payout wallet first.
    const terms = accountTermsOf(valid, await this.platform(req.accountId));
    const wallets = await this.standingWalletsFor(req.accountId, valid.payTo, terms);
    const payouts = payoutsAtCreate(wallets, valid.payTo);
    const platformFeeRails = platformFeeRailsAtCreate(wallets, terms);
    ensureArbiterIsNotSeller(valid.escrow ?? valid.escrowTwin, payouts.payTo);
    const id = newId(valid.escrow ? "escrowCheckout" : valid.content ? "contentCheckout" : "checkout");
    const twinId = valid.escrowTwin ? newId("escrowCheckout") : null;
    const ids = twinId === null ? [id] : [id, twinId];
    const relay = "origin" in valid.fulfillment ? valid.fulfillment.origin : undefined;
    try {
      // The origin and its credential are bound before the checkout exists, under the id it will have (the twin sells the same goods).
      let originUrl: string | null = null;
      if (relay) for (const checkoutId of ids) originUrl = await this.origins.register({ accountId: req.accountId, checkoutId, origin: relay });
      return await this.insertNew(req, idempotency, valid, { ...terms, platformFeeRails }, payouts, { id, twinId, relay, originUrl });
    } catch (err) {
      // The checkout was not written: nothing may stay bound to its id (a key's checkouts_using counts bindings).
      if (relay) for (const checkoutId of ids) await this.origins.forget(checkoutId).catch(() => undefined);
      throw err;
    }
  }

  private async insertNew(
    req: CreateRequest,
    idempotency: { scope: IdempotencyScope; token: string } | undefined,
    valid: ValidCheckout,
    terms: AccountTerms & { platformFeeRails: Record<string, string> },
    payouts: { payTo: string; rails: Record<string, string> },
    origin: { id: string; twinId: string | null; relay: RelayOrigin | undefined; originUrl: string | null },
  ): Promise<CheckoutRow> {
    const { relay } = origin;
    const now = this.now();
    const row: CheckoutRow = {
      id: origin.id,
      account_id: req.accountId,
      title: valid.title,
      description: valid.description,
      price_atomic: valid.priceAtomic,
      pay_to: payouts.payTo,
      fulfillment: valid.fulfillment.mode,
      payload_json: valid.payloadJson,
      reusable: valid.reusable,
      armed: valid.armed,
      armed_at: valid.armed ? now : null,
      status: "open",
      offer: valid.offer,
      created_at: now,
      expires_at: new Date(now.getTime() + valid.lifetimeMinutes * 60_000),
      voided_at: null,
      expiry_recorded_at: null,
      parties: valid.parties,
      platform_fee_bps: terms.platformFeeBps,
      platform_fee_to: terms.platformFeeTo,
      platform_fee_rails: terms.platformFeeRails,
      sold_by: terms.soldBy,
      inherit_account_payouts: terms.inheritAccountPayouts,
      wallet_button: valid.walletButton,
      test_delivery_daily_cap: valid.testDeliveryDailyCap,
      payout_rails: payouts.rails,
      origin_url: origin.originUrl,
      origin_method: relay?.method ?? null,
      origin_auth_type: relay?.auth.kind === "one_off" ? relay.auth.authType : null,
      origin_auth_header: relay?.auth.kind === "one_off" ? (relay.auth.headerName ?? null) : null,
      origin_key_id: relay?.auth.kind === "origin_key" ? relay.auth.originKeyId : null,
      origin_one_off: relay?.auth.kind === "one_off",
      mcp_tool: relay?.mcp?.tool ?? null,
      max_deliveries: valid.package?.calls ?? null,
      package_ttl_days: valid.package?.ttlDays ?? null,
      content_json: valid.content ? JSON.stringify(valid.content) : null,
      escrow: valid.escrow,
      escrow_twin_id: origin.twinId,
      schedule: valid.schedule,
    };
    // escrow_offer optional: the escrow twin sells the same goods under escrow terms; the two name each other.
    const twin: CheckoutRow | null = origin.twinId === null ? null : { ...row, id: origin.twinId, escrow: valid.escrowTwin, escrow_twin_id: row.id };
    await this.db.transaction().execute(async (trx) => {
      for (const created of twin ? [row, twin] : [row]) {
        await store.insertCheckout(trx, created);
        await enqueueOutboxRow(
          trx,
          checkoutActivity(created, {
            action: "checkout.created",
            actor: req.actor,
            at: now,
            detail: {
              title: created.title,
              price_usd: formatUsd(created.price_atomic),
              reusable: created.reusable,
              armed: created.armed,
              expires_at: created.expires_at?.toISOString() ?? null,
              ...(created.escrow ? { escrow: created.escrow } : {}),
              ...(created.escrow_twin_id ? { escrow_twin_id: created.escrow_twin_id } : {}),
              ...(created.schedule ? { schedule: created.schedule } : {}),
            },
          }),
        );
      }
      // Commits only while this create's claim holds the key: one taken over as abandoned rolls this create back.
      if (idempotency && !(await store.completeKey(trx, idempotency.scope, idempotency.token, row))) {
        throw new ProblemError("conflict", {
          message: "This request's Idempotency-Key was taken over by a retry after it ran too long; that retry's answer stands.",
          help: { retry_is_safe: true, fix: "Retry with the same key to get that answer." },
          retryAfterSeconds: 1,
        });
      }
    });
    // A crash here leaves the checkout and its key's answer committed: a retry replays it.
    if (idempotency) failpoint("create-after-commit");
    this.onCommitted();
    return row;
  }

  /**
   * The account's standing wallets, asked of identity only when the create
   * takes any: the payout rails of a checkout without pay_to, and the
   * platform's fee wallets of one with a cut.
   */
  private async standingWalletsFor(accountId: string, payTo: string | null, terms: AccountTerms): Promise<AccountWallet[]> {
    return payTo === null || terms.platformFeeTo !== null ? this.payoutWallets(accountId) : [];
  }

  async get(checkoutId: string, accountId?: string): Promise<CheckoutRow> {
    return (await this.found(checkoutId, accountId)).checkout;
  }

  /**
   * The checkout for a caller that holds `knownRevision` of it (ADR 14): its
   * current revision and what its status depends on, and the whole record
   * only when that revision is not the caller's.
   */
  async getRevised(checkoutId: string, knownRevision: string | undefined, accountId?: string): Promise<RevisedCheckout> {
    if (knownRevision !== undefined && isCheckoutId(checkoutId)) {
      const state = await store.findCheckoutState(this.db, checkoutId);
      if (!visibleTo(state, accountId)) throw noSuchCheckout();
      if (state.revision === knownRevision) return { revision: state.revision, state };
    }
    const { revision, checkout } = await this.found(checkoutId, accountId);
    return { revision, state: checkout, checkout };
  }

  /** The checkout and its revision; 404 for an id that cannot be one, one that is not there, or another account's. */
  private async found(checkoutId: string, accountId: string | undefined): Promise<{ revision: string; checkout: CheckoutRow }> {
    // An id that cannot be one (a NUL, a wrong prefix) is not looked up: PostgreSQL refuses some such text.
    const row = isCheckoutId(checkoutId) ? await store.findCheckout(this.db, checkoutId) : undefined;
    if (!visibleTo(row, accountId)) throw noSuchCheckout();
    const { revision, ...checkout } = row;
    return { revision, checkout };
  }

  /** One page of the account's checkouts, newest first, as summaries (no goods, no offer card). */
  async list(accountId: string, includeVoided: boolean, page: CheckoutPage): Promise<CheckoutSummaryRow[]> {
    checkPageSize(page);
    return store.listCheckouts(this.db, accountId, includeVoided, page);
  }

  /**
   * One page of what the account sells now, newest first, for its public
   * catalogue: armed checkouts that are open (not void, not expired, not a
   * sold single-shot). Unarmed ones only rehearse, so they are not offered.
   */
  async listSelling(accountId: string, page: CheckoutPage): Promise<SellingRow[]> {
    checkPageSize(page);
    return store.listSelling(this.db, accountId, this.now(), page);
  }

  /** The live checkout whose rehearsal face replaced a test twin of the retired twin-row model (spec, Payment rules 6). */
  liveOfRetiredTwin(checkoutId: string): Promise<string | undefined> {
    return store.liveOfRetiredTwin(this.db, checkoutId);
  }

  /**
   * Arms the checkout; a second call returns it unchanged. A checkout and its
   * escrow twin sell the same goods, so they go live together (the plain
   * face advertises the twin: a live one must not point at a rehearsal).
   */
  async goLive(accountId: string, checkoutId: string, actor: Actor): Promise<{ checkout: CheckoutRow; alreadyLive: boolean }> {
    const checkout = await this.get(checkoutId, accountId);
    if (checkout.armed) return { checkout, alreadyLive: true };
    if (checkout.voided_at) throw new ProblemError("conflict", "A voided checkout cannot go live; restore it first.");
    const now = this.now();
    const armed = await this.db.transaction().execute(async (trx) => {
      const changed = await store.arm(trx, checkoutId, now);
      const twin = changed?.escrow_twin_id ? await store.arm(trx, changed.escrow_twin_id, now) : undefined;
      for (const live of [changed, twin]) {
        if (live) await enqueueOutboxRow(trx, checkoutActivity(live, { action: "checkout.live", actor, at: now, detail: { title: live.title } }));
      }
      return changed;
    });
    if (!armed) return { checkout: await this.get(checkoutId, accountId), alreadyLive: true };
    this.onCommitted();
    return { checkout: armed, alreadyLive: false };
  }

  /**
   * One change of one checkout of the account, with its account event, in one
   * transaction on the locked row. `change` answers the new column values and
   * the event (or nothing, when the call changes nothing: no write, no event).
   */
  private async change<T>(
    accountId: string,
    checkoutId: string,
    change: (current: CheckoutRow, now: Date) => { set: Parameters<typeof store.updateCheckout>[2]; event: ChangeEvent; result?: T } | { result: T },
  ): Promise<{ checkout: CheckoutRow; changed: boolean; result: T | undefined }> {
    if (!isCheckoutId(checkoutId)) throw new ProblemError("not-found", "No such checkout.");
    const now = this.now();
    const out = await this.db.transaction().execute(async (trx) => {
      const current = await store.lockCheckout(trx, checkoutId);
      if (!current || current.account_id !== accountId) throw new ProblemError("not-found", "No such checkout.");
      const decided = change(current, now);
      if (!("set" in decided)) return { checkout: current, changed: false, result: decided.result };
      const updated = await store.updateCheckout(trx, checkoutId, decided.set);
      await enqueueOutboxRow(trx, checkoutActivity(updated, { ...decided.event, at: now }));
      return { checkout: updated, changed: true, result: decided.result };
    });
    if (out.changed) this.onCommitted();
    return out;
  }

  /** PATCH: offer-card fields only; answers the fields whose value changed (none: no write, no event). */
  async update(accountId: string, checkoutId: string, patch: OfferPatchInput, actor: Actor): Promise<{ checkout: CheckoutRow; changed: string[] }> {
    const valid = validatePatch(patch);
    const r = await this.change(accountId, checkoutId, (current) => {
      if (current.voided_at) throw new ProblemError("conflict", "A voided checkout cannot be changed; restore it first.");
      const contentFields = [...(valid.payloadJson !== undefined ? ["payload"] : []), ...(valid.content ? ["content"] : [])];
      if (current.content_json === null && contentFields.length) {
        throw invalid(contentFields.map((field) => ({ field, reason: "can be changed on gated content (cnt_) only" })));
      }
      if (valid.payloadJson !== undefined && current.fulfillment !== "inline") {
        throw invalid([{ field: "payload", reason: "a relay article is what its origin answers: it has no payload to change" }]);
      }
      const changed: string[] = [];
      const contentJson = valid.content ? JSON.stringify(valid.content) : undefined;
      if (valid.payloadJson !== undefined && valid.payloadJson !== current.payload_json) changed.push("payload");
      if (contentJson !== undefined && contentJson !== current.content_json) changed.push("content");
      if (valid.title !== undefined && valid.title !== current.title) changed.push("title");
      if (valid.description !== undefined && valid.description !== current.description) changed.push("description");
      const offer = { ...current.offer };
      for (const [column, value] of Object.entries(valid.offer)) {
        if ((current.offer[column] ?? null) !== value) changed.push(column.replace(/_json$/, ""));
        offer[column] = value;
      }
      if (changed.length === 0) return { result: changed };
      return {
        set: {
          ...(valid.title !== undefined ? { title: valid.title } : {}),
          ...(valid.description !== undefined ? { description: valid.description } : {}),
          ...(valid.payloadJson !== undefined ? { payload_json: valid.payloadJson } : {}),
          ...(contentJson !== undefined ? { content_json: contentJson } : {}),
          offer,
        },
        event: { action: "checkout.updated", actor, detail: { fields: changed } },
        result: changed,
      };
    });
    return { checkout: r.checkout, changed: r.result ?? [] };
  }

  /**
   * DELETE: retires the checkout (its faces answer 410; receipts still
   * resolve), never blocked by what buyers still hold. Voiding a void one
   * answers it unchanged.
   */
  /**
   * Voids a checkout (never blocked by what it still owes): its package keys
   * keep working, and the answer says what they still hold.
   */
  async void(accountId: string, checkoutId: string, actor: Actor): Promise<{ checkout: CheckoutRow; alreadyVoid: boolean; liabilities: Liabilities }> {
    const r = await this.change(accountId, checkoutId, (current, now) =>
      current.voided_at
        ? { result: true }
        : { set: { voided_at: now }, event: { action: "checkout.voided", actor, detail: { title: current.title } }, result: false },
    );
    const liabilities = r.checkout.max_deliveries === null ? NO_LIABILITIES : await this.origins.liabilities(r.checkout.id);
    return { checkout: r.checkout, alreadyVoid: r.result ?? false, liabilities };
  }

  /** Undoes a void; the status is recomputed from the record (a sold single-shot comes back paid). Not void: unchanged. */
  async restore(accountId: string, checkoutId: string, actor: Actor): Promise<{ checkout: CheckoutRow; restored: boolean }> {
    const r = await this.change(accountId, checkoutId, (current, now) =>
      current.voided_at
        ? {
            set: { voided_at: null },
            event: { action: "checkout.restored", actor, detail: { status: effectiveStatus({ ...current, voided_at: null }, now) } },
          }
        : { result: undefined },
    );
    return { checkout: r.checkout, restored: r.changed };
  }

  /**
   * Moves the deadline to `minutes` from now, or clears it (null): an expired
   * checkout sells again under the same URL. Refused for a void checkout and
   * a sold single-shot: their state is not a deadline problem.
   */
  async extend(accountId: string, checkoutId: string, minutes: number | null, actor: Actor): Promise<CheckoutRow> {
    if (minutes !== null && (!Number.isInteger(minutes) || minutes < 1 || minutes > CHECKOUT_LIMITS.expiresInMinutesMax)) {
      throw invalid([{ field: "expires_in_minutes", reason: `must be from 1 to ${CHECKOUT_LIMITS.expiresInMinutesMax}, or null for no deadline` }]);
    }
    const r = await this.change(accountId, checkoutId, (current, now) => {
      const status = effectiveStatus(current, now);
      if (status === "void") throw new ProblemError("conflict", "A voided checkout cannot be extended; restore it first.");
      if (status === "paid") throw new ProblemError("conflict", "This single-shot checkout was paid; a new deadline would not sell it again.");
      const expiresAt = minutes === null ? null : new Date(now.getTime() + minutes * 60_000);
      return {
        set: { expires_at: expiresAt, expiry_recorded_at: null },
        event: {
          action: "checkout.extended",
          actor,
          detail: { expires_at: expiresAt?.toISOString() ?? null, was: current.expires_at?.toISOString() ?? null },
        },
      };
    });
    return r.checkout;
  }

  /**
   * POST /v1/checkouts/{id}/payouts: adds a payout rail for a chain the
   * checkout has none for (additive only; both faces read the same rails).
   * 409 for a chain it already pays out on, and for a void checkout.
   */
  async addPayoutRail(accountId: string, checkoutId: string, chainFamily: string, address: string, actor: Actor): Promise<CheckoutRow> {
    const r = await this.change(accountId, checkoutId, (current) => {
      const added = withAddedRail(current, chainFamily, address);
      return {
        set: { payout_rails: added.rails },
        event: {
          action: "checkout.payouts_added",
          actor,
          detail: { chain: added.chain, address: added.address },
        },
      };
    });
    return r.checkout;
  }

  /** Drops up to `limit` idempotency keys past their retention (the table would otherwise only grow); answers how many. */
  reapIdempotencyKeys(limit: number): Promise<number> {
    return store.reapKeys(this.db, new Date(this.now().getTime() - IDEMPOTENCY_RETENTION_MS), limit);
  }

  /**
   * Records the deadlines that passed: each such checkout gets its
   * `checkout.expired` event (actor `system`) once, whether or not anything
   * read it. Returns how many it recorded (at most `limit`).
   */
  async recordExpiries(limit: number): Promise<number> {
    const now = this.now();
    const expired = await this.db.transaction().execute(async (trx) => {
      const rows = await store.claimExpired(trx, now, limit);
      for (const row of rows) {
        await enqueueOutboxRow(
          trx,
          checkoutActivity(row, { action: "checkout.expired", actor: "system", at: now, detail: { expires_at: row.expires_at?.toISOString() ?? null } }),
        );
      }
      return rows.length;
    });
    if (expired > 0) this.onCommitted();
    return expired;
  }
}

/** The account event of a change, without its instant (the change's own). */
type ChangeEvent = Omit<Parameters<typeof checkoutActivity>[1], "at">;
