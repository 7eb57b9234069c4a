import { isId, newId } from "@c402/ids";
import { ProblemError, invalid } from "@c402/problems";
import {
  catalogStore as store,
  checkoutFromSnapshot,
  type CatalogDb,
  type CheckoutPage,
  type CheckoutRow,
  type CheckoutSummaryRow,
  type IdempotencyScope,
} from "../store/catalog-store";
import { validateCreate, type CreateCheckoutInput } from "./checkout-rules";

/** Where the standing payout wallets of an account come from (identity, over gRPC). */
export type PayoutWalletSource = (accountId: string) => Promise<{ chainFamily: string; address: string; isDefault: boolean }[]>;

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The most checkouts one list call answers, whoever asks (the gateway asks at most 201). */
export const LIST_PAGE_SIZE_MAX = 1000;

export interface CreateRequest extends CreateCheckoutInput {
  accountId: string;
  idempotencyKey?: string;
  fingerprint: string;
}

/** Checkout lifecycle: create (idempotent per account, key mode and key), read, list, go live. */
export class Catalog {
  constructor(
    private readonly db: CatalogDb,
    private readonly payoutWallets: PayoutWalletSource,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(req: CreateRequest): Promise<{ checkout: CheckoutRow; replayed: boolean }> {
    if (req.idempotencyKey === undefined) return { checkout: await this.createOnce(req), replayed: false };
    // A test key and a live key of one account never share an idempotency key.
    const scope: IdempotencyScope = { accountId: req.accountId, mode: req.createdWithLiveKey ? "live" : "test", key: req.idempotencyKey };

    await store.expireKey(this.db, scope, new Date(this.now().getTime() - IDEMPOTENCY_RETENTION_MS));
    const claimed = await store.claimKey(this.db, scope, { fingerprint: req.fingerprint, createdAt: this.now() });
    if (!claimed) {
      const existing = await store.findKey(this.db, scope);
      if (!existing) throw new ProblemError("conflict", "The idempotency key changed state; retry.");
      if (existing.fingerprint !== req.fingerprint) {
        throw invalid(
          [{ field: "Idempotency-Key", reason: "was already used with a different request body" }],
          "Idempotency-Key reused with a different body.",
        );
      }
      if (existing.state === "in_flight" || !existing.snapshot) {
        throw new ProblemError("conflict", {
          message: "A request with this Idempotency-Key is still in flight.",
          help: { retry_is_safe: true, fix: "Retry after it finishes." },
        });
      }
      // The original checkout, as first returned (not its state now).
      return { checkout: checkoutFromSnapshot(existing.snapshot), replayed: true };
    }
    try {
      return { checkout: await this.createOnce(req, scope), replayed: false };
    } catch (err) {
      // A create that fails releases the key so it can be reused.
      await store.releaseKey(this.db, scope);
      throw err;
    }
  }

  private async createOnce(req: CreateRequest, idempotency?: IdempotencyScope): Promise<CheckoutRow> {
    const valid = validateCreate(req);
    // Never call another service inside a transaction: resolve the payout wallet first.
    const payTo = valid.payTo ?? (await this.defaultPayTo(req.accountId));
    const now = this.now();
    const row: CheckoutRow = {
      id: newId("checkout"),
      account_id: req.accountId,
      title: valid.title,
      description: valid.description,
      price_atomic: valid.priceAtomic,
      pay_to: payTo,
      fulfillment: "inline",
      payload_json: valid.payloadJson,
      reusable: valid.reusable,
      armed: valid.armed,
      armed_at: valid.armed ? now : null,
      status: "open",
      offer: valid.offer,
      created_at: now,
      expires_at: new Date(now.getTime() + valid.lifetimeMinutes * 60_000),
    };
    await this.db.transaction().execute(async (trx) => {
      await store.insertCheckout(trx, row);
      if (idempotency) await store.completeKey(trx, idempotency, row);
    });
    return row;
  }

  private async defaultPayTo(accountId: string): Promise<string> {
    const wallets = (await this.payoutWallets(accountId)).filter((w) => w.chainFamily === "eip155");
    const wallet = wallets.find((w) => w.isDefault) ?? wallets[0];
    if (!wallet) throw invalid([{ field: "pay_to", reason: "is required: this account has no standing EVM payout wallet" }]);
    return wallet.address;
  }

  async get(checkoutId: string, accountId?: string): Promise<CheckoutRow> {
    // An id that cannot be one (a NUL, a wrong prefix) is not looked up: PostgreSQL refuses some such text.
    const checkout = isId("checkout", checkoutId) ? await store.findCheckout(this.db, checkoutId) : undefined;
    if (!checkout || (accountId !== undefined && checkout.account_id !== accountId)) throw new ProblemError("not-found", "No such checkout.");
    return checkout;
  }

  /** One page of the account's checkouts, newest first, as summaries (no goods, no offer card). */
  async list(accountId: string, includeVoided: boolean, page: CheckoutPage): Promise<CheckoutSummaryRow[]> {
    if (!Number.isInteger(page.size) || page.size < 1 || page.size > LIST_PAGE_SIZE_MAX) {
      throw invalid([{ field: "page_size", reason: `must be from 1 to ${LIST_PAGE_SIZE_MAX}` }]);
    }
    return store.listCheckouts(this.db, accountId, includeVoided, page);
  }

  /** Arms the checkout; a second call returns it unchanged. */
  async goLive(accountId: string, checkoutId: string): Promise<{ checkout: CheckoutRow; alreadyLive: boolean }> {
    const checkout = await this.get(checkoutId, accountId);
    if (checkout.armed) return { checkout, alreadyLive: true };
    if (checkout.status === "void") throw new ProblemError("conflict", "A voided checkout cannot go live; restore it first.");
    const armed = await store.arm(this.db, checkoutId, this.now());
    return armed ? { checkout: armed, alreadyLive: false } : { checkout: await this.get(checkoutId, accountId), alreadyLive: true };
  }
}
