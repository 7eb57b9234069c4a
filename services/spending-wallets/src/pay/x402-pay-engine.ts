import type { Logger } from "@c402/logging";
import { OutboundRefused, type GuardedFetch } from "@c402/outbound-http";
import { ProblemError } from "@c402/problems";
import { x402HTTPClient } from "@x402/core/client";
import type { PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import type {
  BalanceReader,
  KeyVault,
  PaidReceipt,
  PayEngine,
  PayingWallet,
  PayOutcome,
  PayRequest,
  PreviousSpend,
  Reservation,
  SpendBudget,
  WalletEvents,
} from "../domain/ports";
import { MAX_GOODS_BYTES, readGoods, receiptUrlOf } from "./goods";
import * as refusal from "./refusals";
import { amountOf, caip2Of, payableRequirement } from "./requirements";
import { walletClient } from "./signers";

/** What the engine pays in, per CAIP-2 network a wallet may live on. */
export interface PayNetwork {
  /** The USDC token (EVM address or SPL mint): the only asset paid. */
  usdc: string;
  /** Solana only: the RPC the official SVM scheme reads the mint and the latest blockhash from. */
  rpcUrl?: string;
}

export interface X402PayEngineOptions {
  /** The outbound guard's fetch (createGuardedFetch(outboundPolicyOf(settings, {...}))): every request to the seller goes through it. */
  fetch: GuardedFetch;
  budget: SpendBudget;
  vault: KeyVault;
  balances: BalanceReader;
  events: WalletEvents;
  /** By CAIP-2 id, e.g. { "eip155:8453": { usdc }, "solana:5eykt4...": { usdc, rpcUrl } }. */
  networks: Record<string, PayNetwork>;
  logger: Logger;
  /** Largest seller answer kept, in bytes (default 1 MiB; longer answers are cut off). */
  maxGoodsBytes?: number;
}

/** Why the payment did not go on, set by the hooks the official client runs (it rewraps what they throw). */
type Stop = { problem: ProblemError } | { previous: PreviousSpend; reservation: Reservation } | { failure: unknown };

/** The requirement the wallet will pay and its atomic amount. */
interface Chosen {
  requirement: PaymentRequirements;
  amount: bigint;
}

/** The requirement chosen (the hooks run in order: onPaymentRequired chose before anything else ran). */
function chosenOf(attempt: Attempt): Chosen {
  if (!attempt.chosen) throw new Error("pay engine: no requirement chosen");
  return attempt.chosen;
}

/** The reservation made before signing (a paid answer exists only after one). */
function reservationOf(attempt: Attempt): Reservation {
  if (!attempt.reservation) throw new Error("pay engine: no reservation");
  return attempt.reservation;
}

/** One pay's progress, shared by the hooks and the flow: what was chosen, reserved, and whether the signed payment left. */
interface Attempt {
  chosen?: Chosen;
  reservation?: Reservation;
  /** The request carrying the signed payment was handed to the network: from here on nothing can be released on a mere error. */
  paymentSent: boolean;
  stop?: Stop;
}

/** The guard's refusals that mean "this URL is never called", as opposed to a seller that is down. */
const URL_REFUSALS = new Set(["blocked-address", "bad-url"]);

/** A settle failure that does not mean "nothing moved" (x402 2.27: the facilitator still waits on the chain). */
const PENDING_SETTLE_REASONS = new Set(["settlement_pending"]);

/**
 * Pays one x402 URL from a spending wallet with the official client
 * (`@x402/fetch` wrapFetchWithPayment over `@x402/core`'s x402Client and the
 * official EVM/SVM exact schemes), unmodified: the engine plugs in where the
 * client lets it: an onPaymentRequired hook chooses the requirement (exact,
 * USDC, the wallet's network), a before-payment-creation hook reserves the
 * budget and reads the balance, and the signers open the key only when the
 * scheme signs (after both). The fetch it wraps is the outbound guard's.
 */
export class X402PayEngine implements PayEngine {
  private readonly maxGoodsBytes: number;

  constructor(private readonly o: X402PayEngineOptions) {
    this.maxGoodsBytes = o.maxGoodsBytes ?? MAX_GOODS_BYTES;
  }

  async pay(wallet: PayingWallet, request: PayRequest): Promise<PayOutcome> {
    const url = await this.payableUrl(wallet, request);
    const network = this.o.networks[wallet.network];
    if (!network) throw await this.refuse(wallet, request, "network_not_configured", refusal.networkNotConfigured(wallet.network));
    const attempt: Attempt = { paymentSent: false };
    const paying = wrapFetchWithPayment(this.trackedFetch(attempt), this.httpClient(wallet, request, network, attempt));

    let res: Response;
    try {
      res = await paying(url, { method: "GET", headers: { accept: "application/json, */*;q=0.5" } });
    } catch (err) {
      return this.afterFailure(wallet, request, url, attempt, err);
    }
    if (!attempt.paymentSent) {
      // Not a 402 (the client returns any other answer untouched): the goods, nothing paid.
      const { goods, truncated } = await readGoods(res, this.maxGoodsBytes);
      this.o.logger.info({ wallet: wallet.id, origin: new URL(url).origin, status: goods.status, truncated }, "pay: no payment asked");
      return { paid: false, url, goods };
    }
    return this.afterPaidAnswer(wallet, request, url, attempt, res);
  }

  /** The URL with the params added, if it is http(s) and the guard would call it (else a recorded refusal). */
  private async payableUrl(wallet: PayingWallet, request: PayRequest): Promise<string> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw await this.refuse(wallet, request, "url_refused", refusal.urlRefused());
    }
    for (const [name, value] of Object.entries(request.params)) url.searchParams.append(name, value);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || this.o.fetch.refusalOf(url)) {
      throw await this.refuse(wallet, request, "url_refused", refusal.urlRefused());
    }
    return url.toString();
  }

  /** The guard's fetch, noting when the request carrying the signed payment leaves. */
  private trackedFetch(attempt: Attempt): typeof fetch {
    return ((input: Request) => {
      if (input.headers.has("PAYMENT-SIGNATURE") || input.headers.has("X-PAYMENT")) attempt.paymentSent = true;
      return this.o.fetch(input);
    }) as typeof fetch;
  }

  /** The official HTTP client for this wallet, with the engine's choice and admission plugged in. */
  private httpClient(wallet: PayingWallet, request: PayRequest, network: PayNetwork, attempt: Attempt): x402HTTPClient {
    const client = walletClient(this.o.vault, wallet, network.rpcUrl);
    // The wallet's own budget (SpendBudget) is the spend control: the client's default $1 cap and asset table would contradict the owner's limits.
    client.setSpendControls(false);
    // Only the requirement chosen in onPaymentRequired may be signed.
    client.registerPolicy((_version, accepts) => accepts.filter((r) => r === attempt.chosen?.requirement));
    client.onBeforePaymentCreation(async () => {
      await this.stoppingOn(attempt, () => this.admit(wallet, request, attempt));
    });
    return new x402HTTPClient(client).onPaymentRequired(async ({ paymentRequired }) => {
      await this.stoppingOn(attempt, () => this.choose(wallet, request, network, paymentRequired, attempt));
    });
  }

  /** Runs a hook step, keeping why it stopped: the official client rethrows hook errors as plain messages. */
  private async stoppingOn(attempt: Attempt, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (err) {
      attempt.stop ??= err instanceof ProblemError ? { problem: err } : { failure: err };
      throw err;
    }
  }

  /** Step 3: the exact USDC requirement on the wallet's network, or a recorded refusal. */
  private async choose(wallet: PayingWallet, request: PayRequest, network: PayNetwork, required: PaymentRequired, attempt: Attempt): Promise<void> {
    const requirement = payableRequirement(required.accepts ?? [], wallet.network, network.usdc);
    if (!requirement) {
      const reason = `no_requirement_for_${wallet.chain}`;
      throw await this.refuse(wallet, request, reason, refusal.noRequirement(reason, wallet.chain));
    }
    // payableRequirement keeps only requirements whose amount parses.
    attempt.chosen = { requirement, amount: amountOf(requirement) ?? 0n };
  }

  /** Step 4, before anything is signed: reserve the budget, then read the balance. */
  private async admit(wallet: PayingWallet, request: PayRequest, attempt: Attempt): Promise<void> {
    const { requirement, amount } = chosenOf(attempt);
    const answer = await this.o.budget.reserve(wallet, {
      amount,
      maxAtomic: request.maxAtomic,
      url: request.url,
      network: wallet.network,
      payTo: requirement.payTo,
      actor: request.actor,
      idempotencyKey: request.idempotencyKey,
    });
    if ("reserved" in answer && answer.previous) {
      attempt.stop = { previous: answer.previous, reservation: answer.reserved };
      throw new Error("idempotency key already used");
    }
    if ("refused" in answer) {
      throw await this.refuse(wallet, request, answer.refused, refusal.budgetRefused(answer.refused, answer.ceiling, amount), amount);
    }
    attempt.reservation = answer.reserved;
    const balance = await this.o.balances.usdcOf(wallet);
    if (balance < amount) {
      attempt.reservation = undefined;
      await this.o.budget.release(answer.reserved.spendId, "insufficient_balance");
      throw await this.refuse(wallet, request, "insufficient_balance", refusal.insufficientBalance(balance, amount), amount);
    }
    this.o.logger.info({ wallet: wallet.id, spend: answer.reserved.spendId, amount: String(amount), network: wallet.network }, "pay: reserved, signing");
  }

  /** The client threw: a refusal, an earlier spend with this key, a failure before the payment left, or an unknown outcome after. */
  private async afterFailure(wallet: PayingWallet, request: PayRequest, url: string, attempt: Attempt, err: unknown): Promise<PayOutcome> {
    const stop = attempt.stop;
    if (stop && "previous" in stop) return this.previousOutcome(wallet, url, stop.previous, stop.reservation);
    if (attempt.paymentSent && attempt.reservation) return this.unknownOutcome(wallet, attempt.reservation, "paid request failed");
    if (attempt.reservation) {
      // Signing or building the payment failed: nothing left the machine.
      await this.o.budget.release(attempt.reservation.spendId, "not_sent");
    }
    if (stop && "problem" in stop) throw stop.problem;
    if (stop && "failure" in stop) throw stop.failure;
    if (err instanceof OutboundRefused) {
      if (URL_REFUSALS.has(err.reason)) throw await this.refuse(wallet, request, "url_refused", refusal.urlRefused());
      throw await this.refuse(wallet, request, "seller_unreachable", refusal.sellerUnreachable());
    }
    if (!attempt.chosen) {
      // The client could not read the 402 (no PAYMENT-REQUIRED header and no v1 body).
      const reason = `no_requirement_for_${wallet.chain}`;
      throw await this.refuse(wallet, request, reason, refusal.noRequirement("unreadable_payment_required", wallet.chain));
    }
    this.o.logger.error({ wallet: wallet.id, err: err instanceof Error ? err.message : String(err) }, "pay: the payment could not be built");
    throw await this.refuse(
      wallet,
      request,
      "signing_failed",
      new ProblemError("unavailable", { message: "The payment could not be signed; nothing was paid.", extensions: { reason: "signing_failed" } }),
      attempt.chosen.amount,
    );
  }

  /** Step 6: the seller's answer to the signed payment. */
  private async afterPaidAnswer(wallet: PayingWallet, request: PayRequest, url: string, attempt: Attempt, res: Response): Promise<PayOutcome> {
    const reservation = reservationOf(attempt);
    const settle = settleResponseOf(res);
    if (settle?.success && settle.transaction) return this.confirmed(wallet, url, attempt, res, settle);
    if (settle && !settle.success && !PENDING_SETTLE_REASONS.has(settle.errorReason ?? "")) {
      return this.rejected(wallet, request, attempt, settle.errorMessage ?? settle.errorReason);
    }
    if (!settle && res.status === 402) return this.rejected(wallet, request, attempt, await paymentRequiredError(res, this.maxGoodsBytes));
    // A 2xx without a settlement, a 5xx, a pending settlement: the money may or may not have moved.
    await res.body?.cancel().catch(() => undefined);
    return this.unknownOutcome(wallet, reservation, `seller answered ${res.status} without a settlement`);
  }

  private async confirmed(wallet: PayingWallet, url: string, attempt: Attempt, res: Response, settle: SettleResponse): Promise<PayOutcome> {
    const { spendId } = reservationOf(attempt);
    const { requirement, amount } = chosenOf(attempt);
    let read: Awaited<ReturnType<typeof readGoods>>;
    try {
      read = await readGoods(res, this.maxGoodsBytes);
    } catch {
      // The settlement header proves the payment: confirm it, then say the goods were lost.
      await this.o.budget.confirm(spendId, { transaction: settle.transaction });
      throw refusal.goodsUnreadable(spendId);
    }
    const receiptUrl = receiptUrlOf(read.goods);
    await this.o.budget.confirm(spendId, { transaction: settle.transaction, ...(receiptUrl ? { receiptUrl } : {}) });
    const receipt: PaidReceipt = {
      spendId,
      network: caip2Of(settle.network || wallet.network),
      transaction: settle.transaction,
      payer: settle.payer ?? wallet.address,
      payTo: requirement.payTo,
      amount,
      ...(receiptUrl ? { receiptUrl } : {}),
      paidAt: new Date(),
    };
    this.o.logger.info({ wallet: wallet.id, spend: spendId, transaction: settle.transaction, status: res.status, truncated: read.truncated }, "pay: paid");
    return { paid: true, url, receipt, goods: read.goods };
  }

  /** The seller refused the signed payment before anything settled: nothing moved, the reservation is freed. */
  private async rejected(wallet: PayingWallet, request: PayRequest, attempt: Attempt, sellerReason: string | undefined): Promise<never> {
    await this.o.budget.release(reservationOf(attempt).spendId, "rejected_by_seller");
    throw await this.refuse(wallet, request, "rejected_by_seller", refusal.rejectedBySeller(sellerReason?.slice(0, 200)), chosenOf(attempt).amount);
  }

  /** The signed payment left and nothing proves or disproves it: the reservation stays and keeps counting. */
  private async unknownOutcome(wallet: PayingWallet, reservation: Reservation, why: string): Promise<never> {
    await this.o.budget.leaveReserved(reservation.spendId, "outcome_unknown");
    this.o.logger.warn({ wallet: wallet.id, spend: reservation.spendId, why }, "pay: outcome unknown, left reserved");
    throw refusal.outcomeUnknown(reservation.spendId);
  }

  /** The first attempt under this idempotency key, answered again (goods are not kept: a paid one answers 204 with its receipt). */
  private previousOutcome(wallet: PayingWallet, url: string, previous: PreviousSpend, first: Reservation): PayOutcome {
    this.o.logger.info({ wallet: wallet.id, spend: first.spendId, status: previous.status }, "pay: idempotency key already used");
    if (previous.status === "reserved" || previous.status === "unknown") throw refusal.outcomeUnknown(first.spendId);
    if (previous.status === "released" || !previous.transaction) throw refusal.previousNotPaid(first.spendId);
    const receipt: PaidReceipt = {
      spendId: first.spendId,
      network: previous.network,
      transaction: previous.transaction,
      payer: wallet.address,
      payTo: previous.payTo,
      amount: first.amount,
      ...(previous.receiptUrl ? { receiptUrl: previous.receiptUrl } : {}),
      paidAt: previous.reservedAt,
    };
    return { paid: true, url: previous.url || url, receipt, goods: { status: 204, contentType: "", body: new Uint8Array() } };
  }

  /** Records a refusal (every refusal of a pay is a `refused` event), logs it, and returns the problem to throw. */
  private async refuse(wallet: PayingWallet, request: PayRequest, reason: string, problem: ProblemError, amount?: bigint): Promise<ProblemError> {
    await this.o.events.refused(wallet, { actor: request.actor, reason, url: request.url, ...(amount !== undefined ? { amount } : {}) });
    this.o.logger.info({ wallet: wallet.id, reason, status: problem.status }, "pay: refused");
    return problem;
  }
}

/** The seller's settlement, decoded with the official helper (v2 PAYMENT-RESPONSE, else v1 X-PAYMENT-RESPONSE; undefined when absent or unreadable). */
function settleResponseOf(res: Response): SettleResponse | undefined {
  const header = res.headers.get("PAYMENT-RESPONSE") ?? res.headers.get("X-PAYMENT-RESPONSE");
  if (!header) return undefined;
  try {
    return decodePaymentResponseHeader(header);
  } catch {
    return undefined;
  }
}

/** The reason a 402 to the signed payment gives (v2: PAYMENT-REQUIRED's `error`; v1: the JSON body's). */
async function paymentRequiredError(res: Response, limit: number): Promise<string | undefined> {
  const header = res.headers.get("PAYMENT-REQUIRED");
  let error: unknown;
  try {
    if (header) error = decodePaymentRequiredHeader(header).error;
    else error = (JSON.parse(new TextDecoder().decode((await readGoods(res, limit)).goods.body)) as { error?: unknown }).error;
  } catch {
    return undefined;
  }
  return typeof error === "string" && error ? error.slice(0, 200) : undefined;
}
