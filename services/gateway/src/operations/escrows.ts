import { isId } from "@c402/ids";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { pageOf, pageRequestOf, type PageAfter, type PageRequest } from "../http/pagination";
import { validateBody } from "../http/validate";
import {
  ESCROW_ACTIONS,
  ESCROW_LIST_STATES,
  escrowActionView,
  escrowRulingView,
  escrowStatusView,
  escrowSubmitView,
  escrowSummaryView,
  escrowView,
  type EscrowActionName,
} from "../views/escrows";
import { timestampDate } from "@bufbuild/protobuf/wkt";

/**
 * The escrows after their deposit (the escrow service's): the seller's list,
 * one escrow, the arbiter's unsigned ruling; and the buyer-side actions of
 * /e/{id}/actions (no credential: the contract authorizes the signing wallet,
 * and the escrow service relays only a signature that recovers to the party
 * the action needs). Shared by the REST routes and the MCP escrow tools.
 */
export class EscrowOperations {
  constructor(private readonly deps: Pick<GatewayDeps, "clients" | "settings">) {}

  /** GET /v1/escrows: the account's escrows, newest first, paged; `status` filters by an open state. */
  async list(cred: Credential, query: Record<string, unknown>) {
    ensureScope(cred, "read_only");
    const errors: FieldError[] = [];
    const status = query.status;
    if (status !== undefined && (typeof status !== "string" || !(status in ESCROW_LIST_STATES))) {
      errors.push({ field: "status", reason: `must be one of ${Object.keys(ESCROW_LIST_STATES).join(", ")}` });
    }
    const { status: _status, ...paging } = query;
    let page: PageRequest | undefined;
    try {
      page = pageRequestOf(paging);
    } catch (err) {
      if (!(err instanceof ProblemError) || !err.errors) throw err;
      errors.push(...err.errors);
    }
    if (errors.length || !page) throw invalid(errors, "Invalid escrow list parameters.");
    const r = await this.deps.clients.escrow.listEscrows({
      accountId: cred.accountId,
      state: status === undefined ? 0 : ESCROW_LIST_STATES[status as keyof typeof ESCROW_LIST_STATES],
      pageSize: page.limit + 1,
      ...(page.after ? { startingAfter: page.after.id } : {}),
    });
    const { items, ...more } = pageOf(r.escrows, page.limit, escrowKey);
    return { escrows: items.map((e) => escrowSummaryView(e, this.deps.settings.baseUrl)), ...more };
  }

  /** GET /v1/escrows/{payment_id}: one of the account's escrows (404 for another account's). */
  async get(cred: Credential, paymentId: string) {
    ensureScope(cred, "read_only");
    const r = await this.deps.clients.escrow.getEscrow({ paymentId: paymentIdOf(paymentId), accountId: cred.accountId });
    return escrowView(answered(r.escrow, "escrow"), this.deps.settings.baseUrl);
  }

  /** POST /v1/escrows/{payment_id}/resolve?to_seller=: the unsigned ruling the arbiter's wallet signs and broadcasts. */
  async resolve(cred: Credential, paymentId: string, toSellerText: unknown) {
    ensureScope(cred, "payments");
    const toSeller = await this.toSellerFor(cred, paymentIdOf(paymentId), toSellerText);
    const r = await this.deps.clients.escrow.prepareRuling({ paymentId: paymentIdOf(paymentId), accountId: cred.accountId, toSeller });
    return escrowRulingView(toSeller, r, this.deps.settings.baseUrl);
  }

  /**
   * POST /v1/escrows/{payment_id}/resolve/submit: Solana only (the seller
   * sends the arbiter-signed transaction and the service broadcasts it). No
   * Solana escrow rail runs here (ADR 19), so no escrow can take it.
   */
  async resolveSubmit(cred: Credential, paymentId: string, toSellerText: unknown): Promise<never> {
    ensureScope(cred, "payments");
    await this.toSellerFor(cred, paymentIdOf(paymentId), toSellerText);
    const r = await this.deps.clients.escrow.getEscrow({ paymentId: paymentIdOf(paymentId), accountId: cred.accountId });
    const escrow = answered(r.escrow, "escrow");
    throw new ProblemError("conflict", {
      message: `Escrow ${escrow.paymentId} is on ${escrow.network}: its arbiter signs and broadcasts the ruling from its own wallet. Relayed rulings are for Solana escrows, which this deployment does not offer.`,
      help: { fix: `POST /v1/escrows/${escrow.paymentId}/resolve?to_seller=true|false answers the unsigned transaction for the arbiter's wallet.` },
    });
  }

  /**
   * The ruling's side, once the escrow is known to be the account's: another
   * account's escrow is 404 whatever the query says, as every seller route answers.
   */
  private async toSellerFor(cred: Credential, paymentId: string, value: unknown): Promise<boolean> {
    if (value === "true" || value === "false") return value === "true";
    answered((await this.deps.clients.escrow.getEscrow({ paymentId, accountId: cred.accountId })).escrow, "escrow");
    throw invalid([{ field: "to_seller", reason: "is required: true pays the seller, false refunds the buyer" }]);
  }

  /** GET /e/{id}/status?payment_id=: a buyer's escrow (its state follows the chain) and what happens next; another checkout's is 404. */
  async status(checkoutId: string, paymentId: unknown) {
    const escrow = answered((await this.deps.clients.escrow.getEscrow({ paymentId: queryPaymentIdOf(paymentId) })).escrow, "escrow");
    if (escrow.checkoutId !== checkoutId) throw new ProblemError("not-found", "No escrow of this checkout has this payment id.");
    return escrowStatusView(escrow, this.deps.settings.baseUrl);
  }

  /** POST /e/{id}/actions/{action}?payment_id=: what the buyer (or, for cancel, the seller) signs. */
  async prepareAction(checkoutId: string, actionName: string, paymentId: unknown) {
    const action = actionOf(actionName);
    const r = await this.deps.clients.escrow.prepareAction({ checkoutId, paymentId: queryPaymentIdOf(paymentId), action: ESCROW_ACTIONS[action] });
    return escrowActionView(action, r, this.deps.settings.baseUrl);
  }

  /** POST /e/{id}/actions/{action}/submit?payment_id=: relays the signed action on the service's gas. */
  async submitAction(checkoutId: string, actionName: string, paymentId: unknown, raw: unknown) {
    const action = actionOf(actionName);
    const id = queryPaymentIdOf(paymentId);
    const body = validateBody("EscrowActionSubmit", raw);
    const r = await this.deps.clients.escrow.submitAction({
      checkoutId,
      paymentId: id,
      action: ESCROW_ACTIONS[action],
      deadline: BigInt(body.deadline),
      v: body.v,
      r: body.r,
      s: body.s,
    });
    return escrowSubmitView(r, this.deps.settings.baseUrl);
  }
}

/** An escrow's place in the list order (newest first by created_at, then payment id). */
function escrowKey(e: { paymentId: string; createdAt?: Parameters<typeof timestampDate>[0] }): PageAfter {
  if (!e.createdAt) throw new Error(`listed escrow ${e.paymentId} has no created_at`);
  return { createdAt: timestampDate(e.createdAt), id: e.paymentId };
}

/** A payment id from a path: anything else names no escrow (404). */
function paymentIdOf(id: string): string {
  if (!isId("payment", id)) throw new ProblemError("not-found", "No such escrow.");
  return id;
}

/** The required `payment_id` query parameter of the /e/ action routes. */
function queryPaymentIdOf(value: unknown): string {
  if (typeof value !== "string" || !isId("payment", value)) {
    throw invalid([{ field: "payment_id", reason: "is required: the pay_ id the deposit answered (also in its status_url)" }]);
  }
  return value;
}

function actionOf(name: string): EscrowActionName {
  if (!Object.hasOwn(ESCROW_ACTIONS, name))
    throw new ProblemError("not-found", `No escrow action ${JSON.stringify(name.slice(0, 40))}: hold, approve, request-refund or cancel.`);
  return name as EscrowActionName;
}
