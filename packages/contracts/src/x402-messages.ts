import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { requirementTransfers, type ExactEvmAuthorization, type PaymentRequirements, type SettleResponse, type VerifyResponse } from "@c402/x402";
import {
  AuthorizationSchema,
  FacilitatorSupportedResponseSchema,
  PaymentRequirementSchema,
  RequirementEscrowSchema,
  RequirementScheduleSchema,
  SettleResponseSchema,
  VerifyResponseSchema,
  type Authorization,
  type FacilitatorSupportedResponse,
  type PaymentRequirement,
  type RequirementEscrow,
  type RequirementSchedule,
  type SettleResponse as SettleResponseMessage,
  type VerifyResponse as VerifyResponseMessage,
} from "./gen/payments/v1/payments_pb";

/**
 * The x402 wire objects as payments.v1 messages and back, in one place: the
 * payments service writes them, the gateway reads them and renders the x402
 * JSON, and a round trip gives back the same object (same keys, same order).
 */

/** What the facilitator's `supported` answers (x402 GET /supported). */
export interface SupportedKinds {
  kinds: { x402Version: number; scheme: string; network: string; extra?: { feePayer?: string; areFeesSponsored?: boolean } }[];
  extensions: string[];
  signers: Record<string, string[]>;
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

export function requirementMessage(r: PaymentRequirements): PaymentRequirement {
  return create(PaymentRequirementSchema, {
    scheme: r.scheme,
    network: r.network,
    asset: r.asset,
    amount: r.amount,
    payTo: r.payTo,
    maxTimeoutSeconds: r.maxTimeoutSeconds,
    extra: {
      name: text(r.extra.name) ?? "",
      version: text(r.extra.version) ?? "",
      checkoutId: text(r.extra.checkoutId) ?? "",
      rehearsal: r.extra.rehearsal === true,
      ...(text(r.extra.feePayer) !== undefined ? { feePayer: text(r.extra.feePayer) } : {}),
      ...(r.extra.areFeesSponsored === true ? { areFeesSponsored: true } : {}),
      transfers: requirementTransfers(r.extra).map((t) => ({ payTo: t.payTo, amount: t.amount })),
      ...escrowExtraMessage(r.extra.escrow),
      ...(text(r.extra.escrowAvailable) !== undefined ? { escrowAvailable: text(r.extra.escrowAvailable) } : {}),
      ...scheduleExtraMessage(r.extra.schedule),
    },
  });
}

/** A series requirement's `extra.schedule` (ADR 20; snake_case keys, as `extra.escrow`), as the message's fields. */
function scheduleExtraMessage(value: unknown): { schedule?: MessageInitShape<typeof RequirementScheduleSchema> } {
  if (typeof value !== "object" || value === null) return {};
  const s = value as Record<string, unknown>;
  // Whole seconds and counts only: anything else (a buyer's requirement JSON included) reads as 0, never a throw.
  const count = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  const windows = Array.isArray(s.windows)
    ? (s.windows as unknown[]).map((w) => (typeof w === "object" && w !== null ? w : {}) as Record<string, unknown>)
    : [];
  return {
    schedule: {
      intervalDays: count(s.interval_days),
      periods: count(s.periods),
      windows: windows.map((w) => ({
        period: count(w.period),
        opensAfterSeconds: BigInt(count(w.opens_after_seconds)),
        closesAfterSeconds: BigInt(count(w.closes_after_seconds)),
      })),
    },
  };
}

/** `extra.schedule` from the message (keys in the order payments writes them). */
function scheduleExtraOf(s: RequirementSchedule) {
  return {
    interval_days: s.intervalDays,
    periods: s.periods,
    windows: s.windows.map((w) => ({ period: w.period, opens_after_seconds: Number(w.opensAfterSeconds), closes_after_seconds: Number(w.closesAfterSeconds) })),
  };
}

/** An escrow requirement's `extra.escrow` (the escrow face's terms), as the message's fields. */
function escrowExtraMessage(value: unknown): { escrow?: MessageInitShape<typeof RequirementEscrowSchema> } {
  if (typeof value !== "object" || value === null) return {};
  const e = value as Record<string, unknown>;
  const exits = (typeof e.exits === "object" && e.exits !== null ? e.exits : {}) as Record<string, unknown>;
  const seconds = (v: unknown) => (typeof v === "number" ? v : 0);
  return {
    escrow: {
      preset: text(e.preset) ?? "",
      settleSeconds: seconds(e.settle_seconds),
      holdSeconds: seconds(e.hold_seconds),
      backstopSeconds: seconds(e.backstop_seconds),
      arbiter: text(e.arbiter) ?? "",
      sellerPaid: text(exits.seller_paid) ?? "",
      buyerRefunded: text(exits.buyer_refunded) ?? "",
      ifNobodyActs: text(e.if_nobody_acts) ?? "",
    },
  };
}

/** `extra.escrow` from the message (keys in the order payments writes them). */
function escrowExtraOf(e: RequirementEscrow) {
  return {
    preset: e.preset,
    settle_seconds: e.settleSeconds,
    hold_seconds: e.holdSeconds,
    backstop_seconds: e.backstopSeconds,
    arbiter: e.arbiter,
    exits: { seller_paid: e.sellerPaid, buyer_refunded: e.buyerRefunded },
    if_nobody_acts: e.ifNobodyActs,
  };
}

export function requirementFromMessage(m: PaymentRequirement): PaymentRequirements {
  const extra = m.extra;
  return {
    scheme: m.scheme,
    network: m.network,
    asset: m.asset,
    amount: m.amount,
    payTo: m.payTo,
    maxTimeoutSeconds: m.maxTimeoutSeconds,
    // Solana's extra names the fee payer and no EIP-712 domain, Stellar's that the fee is sponsored; EVM's the domain
    // (keys in the order payments wrote them).
    extra:
      extra?.areFeesSponsored === true
        ? {
            areFeesSponsored: true,
            ...(extra.rehearsal ? { rehearsal: true } : {}),
            checkoutId: extra.checkoutId,
          }
        : extra?.feePayer !== undefined
          ? {
              feePayer: extra.feePayer,
              checkoutId: extra.checkoutId,
              ...(extra.rehearsal ? { rehearsal: true } : {}),
              ...(extra.transfers.length > 0 ? { transfers: extra.transfers.map((t) => ({ payTo: t.payTo, amount: t.amount })) } : {}),
            }
          : {
              name: extra?.name ?? "",
              version: extra?.version ?? "",
              ...(extra?.escrow ? { escrow: escrowExtraOf(extra.escrow) } : {}),
              ...(extra?.escrowAvailable !== undefined ? { escrowAvailable: extra.escrowAvailable } : {}),
              ...(extra?.schedule ? { schedule: scheduleExtraOf(extra.schedule) } : {}),
              checkoutId: extra?.checkoutId ?? "",
              ...(extra?.rehearsal ? { rehearsal: true } : {}),
            },
  };
}

export function authorizationMessage(a: ExactEvmAuthorization): Authorization {
  return create(AuthorizationSchema, { ...a });
}

export function authorizationFromMessage(m: Authorization): ExactEvmAuthorization {
  return { from: m.from, to: m.to, value: m.value, validAfter: m.validAfter, validBefore: m.validBefore, nonce: m.nonce };
}

export function settleResponseMessage(r: SettleResponse): SettleResponseMessage {
  return create(SettleResponseSchema, r);
}

export function settleResponseFromMessage(m: MessageInitShape<typeof SettleResponseSchema> | undefined): SettleResponse {
  return {
    success: m?.success ?? false,
    ...(m?.errorReason !== undefined ? { errorReason: m.errorReason } : {}),
    ...(m?.errorMessage !== undefined ? { errorMessage: m.errorMessage } : {}),
    transaction: m?.transaction ?? "",
    network: m?.network ?? "",
    ...(m?.payer !== undefined ? { payer: m.payer } : {}),
  };
}

export function verifyResponseMessage(r: VerifyResponse): VerifyResponseMessage {
  return create(VerifyResponseSchema, r);
}

export function verifyResponseFromMessage(m: MessageInitShape<typeof VerifyResponseSchema> | undefined): VerifyResponse {
  return {
    isValid: m?.isValid ?? false,
    ...(m?.invalidReason !== undefined ? { invalidReason: m.invalidReason } : {}),
    ...(m?.invalidMessage !== undefined ? { invalidMessage: m.invalidMessage } : {}),
    ...(m?.payer !== undefined ? { payer: m.payer } : {}),
  };
}

export function supportedMessage(s: SupportedKinds): FacilitatorSupportedResponse {
  return create(FacilitatorSupportedResponseSchema, {
    kinds: s.kinds.map((k) => ({
      x402Version: k.x402Version,
      scheme: k.scheme,
      network: k.network,
      ...(k.extra?.feePayer !== undefined ? { feePayer: k.extra.feePayer } : {}),
      ...(k.extra?.areFeesSponsored === true ? { areFeesSponsored: true } : {}),
    })),
    signers: Object.fromEntries(Object.entries(s.signers).map(([family, addresses]) => [family, { addresses }])),
  });
}

export function supportedFromMessage(m: FacilitatorSupportedResponse): SupportedKinds {
  return {
    kinds: m.kinds.map((k) => ({
      x402Version: k.x402Version,
      scheme: k.scheme,
      network: k.network,
      ...(k.feePayer !== undefined ? { extra: { feePayer: k.feePayer } } : {}),
      ...(k.areFeesSponsored === true ? { extra: { areFeesSponsored: true } } : {}),
    })),
    extensions: [],
    signers: Object.fromEntries(Object.entries(m.signers).map(([family, s]) => [family, [...s.addresses]])),
  };
}
