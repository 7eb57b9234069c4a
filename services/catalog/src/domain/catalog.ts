import { newId } from "@c402/ids";
import { ProblemError, invalid } from "@c402/problems";
import { catalogStore as store, checkoutFromSnapshot, type CatalogDb, type CheckoutRow } from "../store/catalog-store";
import { validateCreate, type CreateCheckoutInput } from "./checkout-rules";

/** Where the standing payout wallets of an account come from (identity, over gRPC). */
export type PayoutWalletSource = (accountId: string) => Promise<{ chainFamily: string; address: string; isDefault: boolean }[]>;

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface CreateRequest extends CreateCheckoutInput {
  accountId: string;
  idempotencyKey?: string;
  fingerprint: string;
}

/** Checkout lifecycle: create (idempotent per account and key), read, list, go live. */
export class Catalog {
  constructor(
    private readonly db: CatalogDb,
    private readonly payoutWallets: PayoutWalletSource,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(req: CreateRequest): Promise<{ checkout: CheckoutRow; replayed: boolean }> {
    const key = req.idempotencyKey;
    if (key === undefined) return { checkout: await this.createOnce(req), replayed: false };

    await store.expireKey(this.db, req.accountId, key, new Date(this.now().getTime() - IDEMPOTENCY_RETENTION_MS));
    const claimed = await store.claimKey(this.db, { account_id: req.accountId, key, fingerprint: req.fingerprint, created_at: this.now() });
    if (!claimed) {
      const existing = await store.findKey(this.db, req.accountId, key);
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
      return { checkout: await this.createOnce(req, key), replayed: false };
    } catch (err) {
      // A create that fails releases the key so it can be reused.
      await store.releaseKey(this.db, req.accountId, key);
      throw err;
    }
  }

  private async createOnce(req: CreateRequest, idempotencyKey?: string): Promise<CheckoutRow> {
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
      if (idempotencyKey !== undefined) await store.completeKey(trx, req.accountId, idempotencyKey, row);
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
    const checkout = await store.findCheckout(this.db, checkoutId);
    if (!checkout || (accountId !== undefined && checkout.account_id !== accountId)) throw new ProblemError("not-found", "No such checkout.");
    return checkout;
  }

  list(accountId: string, includeVoided: boolean): Promise<CheckoutRow[]> {
    return store.listCheckouts(this.db, accountId, includeVoided);
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
