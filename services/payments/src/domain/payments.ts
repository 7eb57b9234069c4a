import { HANDOFF_NONCE, isId } from "@c402/ids";
import type { Breakdown } from "@c402/money";
import { ProblemError, invalid } from "@c402/problems";
import {
  syntheticTxHash,
  transferWithAuthorizationTypedData,
  randomNonce,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
} from "@c402/x402";
import { getAddress, isAddress } from "viem";
import { paymentSettledEvent } from "../events/payment-settled";
import { paymentsStore as store, type PaymentRow, type PaymentsDb } from "../store/payments-store";
import {
  assertSelling,
  isRehearsalRequirement,
  sellingRefusal,
  priceOf,
  requirementsFor,
  settlementFor,
  type CheckoutForPayment,
  type Face,
  type Settlement,
} from "./requirements";
import type { LiveSettlement } from "./live-settlement";
import { assertRedeliverable, authorizationKey, newPaymentRow } from "./payment-row";
import { decodePayment, matchRequirement, paymentRejected, verifyPayment } from "./verify-payment";

export type CheckoutSource = (checkoutId: string) => Promise<CheckoutForPayment>;

export interface PaymentsSettings {
  subjectSecret: string;
}

export interface SubmitResult {
  status: "settled" | "pending";
  /** The payment row; a receipt once settled. */
  receipt: PaymentRow;
  redelivered: boolean;
  settleResponse: SettleResponse;
}

/**
 * The purchase flow of the payments service: quote, prepare, verify and
 * settle. Rehearsals settle simulated in one transaction (payment row,
 * receipt and outbox event together); live on-chain settlement arrives with
 * the chain adapter.
 */
export class Payments {
  constructor(
    private readonly db: PaymentsDb,
    private readonly checkouts: CheckoutSource,
    private readonly settings: PaymentsSettings,
    private readonly onCommitted: () => void = () => {},
    private readonly now: () => Date = () => new Date(),
    /** Live on-chain settlement; absent when no network is configured (the live face answers 503). */
    private readonly live?: LiveSettlement,
  ) {}

  private liveSettlement(): LiveSettlement {
    if (!this.live) throw new ProblemError("unavailable", "No settleable network is available on this deployment right now.");
    return this.live;
  }

  private rails() {
    return this.live?.rails() ?? [];
  }

  async quote(checkoutId: string, face: Face): Promise<{ accepts: PaymentRequirements[]; price: Breakdown; settlement: Settlement }> {
    const checkout = await this.checkouts(checkoutId);
    assertSelling(face, checkout);
    return { accepts: requirementsFor(face, checkout, this.rails()), price: priceOf(checkout), settlement: settlementFor(face, checkout) };
  }

  async prepare(checkoutId: string, face: Face, input: { payer: string; network?: string; resourceUrl: string }) {
    if (!isAddress(input.payer, { strict: false })) throw invalid([{ field: "payer", reason: "must be a 0x-prefixed EVM address" }]);
    const { accepts } = await this.quote(checkoutId, face);
    const requirement = input.network === undefined ? accepts[0] : accepts.find((r) => r.network === input.network);
    if (!requirement) throw invalid([{ field: "network", reason: `must be one of ${accepts.map((r) => r.network).join(", ")}` }]);
    const authorization = {
      from: getAddress(input.payer),
      to: getAddress(requirement.payTo),
      value: requirement.amount,
      validAfter: "0",
      validBefore: String(Math.floor(this.now().getTime() / 1000) + requirement.maxTimeoutSeconds),
      nonce: randomNonce(),
    };
    const typed = transferWithAuthorizationTypedData(requirement, authorization);
    const typedData = {
      types: {
        EIP712Domain: [
          { name: "name", type: "string" },
          { name: "version", type: "string" },
          { name: "chainId", type: "uint256" },
          { name: "verifyingContract", type: "address" },
        ],
        ...TRANSFER_WITH_AUTHORIZATION_TYPES,
      },
      primaryType: typed.primaryType,
      domain: typed.domain,
      message: typed.message,
    };
    const payloadStub = { x402Version: 2, resource: { url: input.resourceUrl }, accepted: requirement, payload: { signature: "", authorization } };
    return { network: requirement.network, requirement, typedData, payloadStub };
  }

  /** Settles a payment (or redelivers a settled one); `handoffId` is the nonce a waiting page polls with. */
  async submit(checkoutId: string, face: Face, header: string, handoffId: string | null = null): Promise<SubmitResult> {
    if (handoffId !== null && !HANDOFF_NONCE.test(handoffId)) {
      throw invalid([{ field: "h", reason: `the handoff nonce must match ${HANDOFF_NONCE.source}` }]);
    }
    const checkout = await this.checkouts(checkoutId);
    // A checkout that stopped selling still redelivers what it sold (spec: re-presenting a payment redelivers).
    const notSelling = sellingRefusal(face, checkout);
    if (notSelling && !(await this.isRecorded(face, checkout, header))) throw notSelling;
    const payload = decodePayment(header);
    const settlement = settlementFor(face, checkout);
    if (settlement === "onchain") {
      if (payload.accepted && isRehearsalRequirement(payload.accepted)) {
        throw paymentRejected(
          "rehearsal_payment_on_live_face",
          "This payment was made for the rehearsal face; this live face settles real funds. Present it at the /test face.",
        );
      }
      const requirement = matchRequirement(payload, requirementsFor(face, checkout, this.rails()));
      // requirementsFor answered 503 above when no live network is configured.
      const outcome = await this.liveSettlement().submit(checkout, payload, requirement, handoffId);
      if (outcome.kind === "pending") {
        return {
          status: "pending",
          receipt: outcome.row,
          redelivered: false,
          settleResponse: {
            success: false,
            errorReason: "settlement_pending",
            transaction: outcome.row.tx_hash ?? "",
            network: outcome.row.network,
            payer: outcome.row.payer,
          },
        };
      }
      return { status: "settled", receipt: outcome.row, redelivered: outcome.redelivered, settleResponse: settleResponseOf(outcome.row) };
    }
    const requirement = matchRequirement(payload, requirementsFor(face, checkout, this.rails()));
    const key = authorizationKey(true, requirement, payload);

    const existing = await store.findByAuthorization(this.db, key);
    if (existing) return this.redeliver(existing, checkout.id, payload);

    const verified = await verifyPayment(payload, requirement, Math.floor(this.now().getTime() / 1000), this.live?.contractSignatures(requirement.network));
    const settledAt = this.now();
    const row = newPaymentRow({
      checkout,
      requirement,
      payload,
      subjectSecret: this.settings.subjectSecret,
      now: settledAt,
      handoffId,
      saga: {
        status: "settled",
        test_mode: true,
        tx_hash: syntheticTxHash(requirement.network, verified.payer, key.nonce),
        settled_at: settledAt,
        split_address: null,
        single_shot: false,
      },
    });
    const inserted = await store.insertSettledWithEvent(this.db, row, paymentSettledEvent(row, checkout.reusable));
    if (!inserted) {
      // A concurrent duplicate settled first: redeliver what it recorded.
      const winner = await store.findByAuthorization(this.db, key);
      if (!winner) throw new ProblemError("internal", "The payment could not be recorded.");
      return this.redeliver(winner, checkout.id, payload);
    }
    this.onCommitted();
    return { status: "settled", receipt: row, redelivered: false, settleResponse: settleResponseOf(row) };
  }

  /** Whether `header` is a payment this face already recorded (false for anything that is not). */
  private async isRecorded(face: Face, checkout: CheckoutForPayment, header: string): Promise<boolean> {
    try {
      const payload = decodePayment(header);
      const requirement = matchRequirement(payload, requirementsFor(face, checkout, this.rails()));
      const key = authorizationKey(settlementFor(face, checkout) === "simulated", requirement, payload);
      return (await store.findByAuthorization(this.db, key)) !== undefined;
    } catch (err) {
      if (err instanceof ProblemError) return false;
      throw err;
    }
  }

  private redeliver(existing: PaymentRow, checkoutId: string, payload: PaymentPayload): SubmitResult {
    assertRedeliverable(existing, checkoutId, payload);
    return { status: "settled", receipt: existing, redelivered: true, settleResponse: settleResponseOf(existing) };
  }

  /** A settled payment, or one still settling (no receipt yet); failed payments have none. */
  async receipt(paymentId: string): Promise<PaymentRow> {
    const row = isId("payment", paymentId) ? await store.findById(this.db, paymentId) : undefined;
    if (!row || row.status === "failed") throw new ProblemError("not-found", "No such receipt.");
    return row;
  }

  async receiptIdByTx(txHash: string): Promise<string> {
    const row = /^0x[0-9a-fA-F]{64}$/.test(txHash) ? await store.findSettledByTx(this.db, txHash.toLowerCase()) : undefined;
    if (!row) throw new ProblemError("not-found", "No receipt for this transaction.");
    return row.id;
  }

  /** The settled payment that arrived with a handoff nonce; a wrong nonce looks exactly like no payment yet. */
  async handoff(checkoutId: string, handoffId: string): Promise<PaymentRow> {
    const row = HANDOFF_NONCE.test(handoffId) && isId("checkout", checkoutId) ? await store.findSettledByHandoff(this.db, checkoutId, handoffId) : undefined;
    if (!row) throw new ProblemError("not-found", "No settled payment carries this handoff nonce (yet).");
    return row;
  }

  /** Resumes unfinished live payments (run periodically by the service). */
  sweep(): Promise<number> {
    return this.live?.sweep() ?? Promise.resolve(0);
  }
}

function settleResponseOf(p: PaymentRow): SettleResponse {
  return { success: true, transaction: p.tx_hash ?? "", network: p.network, payer: p.payer };
}
