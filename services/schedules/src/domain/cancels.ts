import type { paymentsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { getAddress, isAddress, verifyMessage, type Hex } from "viem";
import { schedulesStore } from "../store/schedules-store";
import { CANCEL_NOTES, cancelMessage } from "./cancel-message";
import type { PaymentsForSchedules } from "./charge-scheduler";
import type { SeriesBook } from "./series-book";
import type { SeriesView } from "./series-view";
import { isEnded } from "./statuses";

/** The result of a cancel: the series after it, whether it had ended before, and (on chain) each submitted cancel's outcome. */
export interface CancelResult {
  series: SeriesView;
  alreadyEnded: boolean;
  onchain: paymentsV1.CancelledAuthorization[];
  note: string;
}

/** The buyer's way of cancelling (CancelByBuyerRequest.method). */
export type BuyerCancel =
  | { case: "signature"; value: string }
  | { case: "authorizations"; value: { items: { nonce: string; v: number; r: string; s: string }[] } }
  | { case: "payer"; value: string };

/** The held periods whose authorizations the payer can still cancel on chain: not settled or lapsed, not cancelled on chain yet. */
export const cancellablePeriods = (s: SeriesView) =>
  s.periodsDetail.filter((p) => p.period > 0 && p.status !== "settled" && p.status !== "lapsed" && !p.cancelled_onchain);

/** The text the payer signs to cancel, while the series runs. */
export const cancelMessageOf = (s: SeriesView) => (isEnded(s.status) ? undefined : cancelMessage(s));

/** The seller's cancel (POST /v1/schedules/{id}/cancel): the account's series only. */
export async function cancelBySeller(book: SeriesBook, accountId: string, scheduleId: string, reason?: string): Promise<CancelResult> {
  await book.view(scheduleId, accountId);
  const cancelled = await book.cancel(book.db, scheduleId, { by: "seller", ...(reason ? { reason } : {}), onchain: false });
  return { series: await book.view(scheduleId), alreadyEnded: !cancelled, onchain: [], note: cancelled ? "" : CANCEL_NOTES.alreadyEnded };
}

/**
 * The buyer's cancel (POST /schedule/{id}/cancel, no auth): proof that the
 * caller is the payer decides. An EIP-191 signature of cancel_message stops
 * this service's charging; signed USDC cancelAuthorizations are submitted
 * through payments (each nonce checked to be one of this series' held periods
 * first) so nobody can charge them; the payer's address cancels a test-mode
 * series only.
 */
export async function cancelByBuyer(book: SeriesBook, payments: PaymentsForSchedules, scheduleId: string, method: BuyerCancel): Promise<CancelResult> {
  const series = await book.view(scheduleId);
  switch (method.case) {
    case "signature": {
      if (isEnded(series.status)) return ended(series);
      await assertPayerSigned(series, method.value);
      return finish(book, scheduleId, { by: "buyer", onchain: false }, CANCEL_NOTES.signature);
    }
    case "payer": {
      if (!series.testMode) {
        throw new ProblemError("forbidden", {
          message: "A live series is cancelled by the payer's signature (or on chain), not by naming the payer.",
          extensions: { reason: "live_series" },
          help: { fix: "Sign cancel_message from GET /schedule/{id} with the payer's wallet and send {signature}." },
        });
      }
      if (!isAddress(method.value) || getAddress(method.value) !== getAddress(series.payer)) {
        throw new ProblemError("forbidden", { message: "That address is not this series' payer.", extensions: { reason: "not_the_payer" } });
      }
      if (isEnded(series.status)) return ended(series);
      return finish(book, scheduleId, { by: "buyer", onchain: false }, CANCEL_NOTES.payer);
    }
    case "authorizations":
      return cancelOnChain(book, payments, series, method.value.items);
  }
}

async function assertPayerSigned(series: SeriesView, signature: string): Promise<void> {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) {
    throw new ProblemError("invalid-request", {
      message: "The signature is not 0x and 130 hex digits.",
      errors: [{ field: "signature", reason: "malformed" }],
    });
  }
  const valid = await verifyMessage({ address: getAddress(series.payer), message: cancelMessage(series), signature: signature as Hex }).catch(() => false);
  if (!valid) {
    throw new ProblemError("forbidden", {
      message: "The signature is not the payer's signature of this series' cancel message.",
      extensions: { reason: "not_the_payer" },
      help: { fix: "Sign cancel_message from GET /schedule/{id}, exactly as given, with the payer's wallet (personal_sign)." },
    });
  }
}

async function cancelOnChain(
  book: SeriesBook,
  payments: PaymentsForSchedules,
  series: SeriesView,
  items: { nonce: string; v: number; r: string; s: string }[],
): Promise<CancelResult> {
  const held = new Map(series.periodsDetail.filter((p) => p.period > 0 && p.nonce).map((p) => [(p.nonce as string).toLowerCase(), p]));
  const errors = items.flatMap((item, i) =>
    held.has(item.nonce.toLowerCase()) ? [] : [{ field: `authorizations.items[${i}].nonce`, reason: `${item.nonce} is not a held period of this series` }],
  );
  if (errors.length > 0) throw new ProblemError("invalid-request", { message: "A nonce is not one of this series' held periods.", errors });
  const answer = await payments.cancelHeldAuthorizations({
    scheduleId: series.id,
    cancels: items.map((c) => ({ nonce: c.nonce.toLowerCase(), v: c.v, r: c.r, s: c.s })),
  });
  const cancelledNow = answer.results.filter((r) => r.status === "cancelled").map((r) => r.nonce.toLowerCase());
  const alreadyEnded = isEnded(series.status);
  await book.db.transaction().execute(async (trx) => {
    for (const nonce of cancelledNow) {
      const p = held.get(nonce);
      if (p) await schedulesStore.updatePeriod(trx, series.id, p.period, { cancelled_onchain: true });
    }
  });
  const after = await book.view(series.id);
  const everyUnsettledOnChain = after.periodsDetail.filter((p) => p.period > 0 && p.status !== "settled").every((p) => p.cancelled_onchain);
  if (!alreadyEnded && cancelledNow.length > 0) {
    await book.cancel(book.db, series.id, { by: "buyer", onchain: everyUnsettledOnChain });
  }
  const note = everyUnsettledOnChain ? CANCEL_NOTES.onchain : alreadyEnded ? CANCEL_NOTES.alreadyEnded : CANCEL_NOTES.onchainPartly;
  return { series: await book.view(series.id), alreadyEnded, onchain: answer.results, note };
}

async function finish(book: SeriesBook, scheduleId: string, c: { by: "buyer"; onchain: boolean }, note: string): Promise<CancelResult> {
  const cancelled = await book.cancel(book.db, scheduleId, c);
  const series = await book.view(scheduleId);
  return cancelled ? { series, alreadyEnded: false, onchain: [], note } : ended(series);
}

const ended = (series: SeriesView): CancelResult => ({ series, alreadyEnded: true, onchain: [], note: CANCEL_NOTES.alreadyEnded });
