import { ORIGIN_TIMEOUT_MAX_MS, type OriginAuthTypeName } from "@c402/contracts";
import { isCheckoutId, isId } from "@c402/ids";
import { NOT_CALLED_REASON, type GuardedFetch } from "@c402/outbound-http";
import { invalid, notChargedProblem, ProblemError, rehearsalCapProblem, type FieldError } from "@c402/problems";
import { callMcpTool, mcpRequestErrors } from "./mcp-call";
import type { SecretSealer } from "@c402/sealed-secrets";
import type { FulfillmentDb } from "../store/origin-keys-store";
import * as store from "../store/relay-store";
import type { DeliveryResult, DeliveryRow } from "../store/relay-store";
import { assertValid } from "./origin-key-rules";
import { resolveOriginAuth, type OriginAuthRequest } from "./origin-auth";
import type { OriginCredential, OriginKeys } from "./origin-keys";
import { originUrlErrors } from "./origin-url";
import { originTimeFor } from "./caller-deadline";
import { callOrigin, RELAY_METHODS, relayRequestErrors, type RelayOutcome } from "./relay-call";

/** What decides the one call a delivery makes: the origin, how it is called, and the buyer's parameters. */
type CallSpec = Pick<DeliverRequest, "originUrl" | "method" | "params" | "mcp">;

/** A delivery as recorded; a rehearsal one that was counted just now also says what the day's cap has left. */
export type CountedDelivery = DeliveryRow & { testDeliveriesLeft?: number; testDeliveriesResetSeconds?: number };

/** Seconds until the next UTC day, when rehearsal caps start afresh (at least 1). */
export function secondsToNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** How long past its deadline a delivery still counts as running (the call's own bookkeeping). */
export const DELIVERY_GRACE_MS = 5_000;

export interface DeliverRequest {
  paymentId: string;
  checkoutId: string;
  accountId: string;
  originUrl: string;
  method: string;
  /** A stored origin key's id; else `oneOffCredential` sends the checkout's sealed copy; neither: no credential. */
  originKeyId?: string;
  oneOffCredential: boolean;
  params: Record<string, string>;
  deadlineMs: number;
  /** A rehearsal delivery: counted against `testDeliveryDailyCap` for the checkout's UTC day. */
  testMode: boolean;
  testDeliveryDailyCap: number;
  /** An mcp checkout: originUrl is its MCP server; the call is one tools/call (of `fixedTool`, when the checkout sells one tool). */
  mcp?: { fixedTool?: string };
}

/**
 * Relay checkouts' origins: binding a new checkout's credential (RegisterOrigin)
 * and delivering for payments (Deliver), at most once per payment: the
 * delivery is recorded under the payment's id before the origin is called and
 * its outcome after, so the purchase saga can resume from the record and a
 * payment asked about again gets what was recorded, never a second call.
 */
export class RelayDeliveries {
  constructor(
    private readonly deps: {
      db: FulfillmentDb;
      sealer: SecretSealer;
      originKeys: OriginKeys;
      fetch: GuardedFetch;
      now?: () => Date;
    },
  ) {}

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  /** Checks a new checkout's origin and binds its credential to it (a one-off one sealed for it alone). */
  async register(req: { accountId: string; checkoutId: string; originUrl: string; auth: OriginAuthRequest }): Promise<string> {
    if (!isCheckoutId(req.checkoutId)) throw invalid([{ field: "checkout_id", reason: "is not a checkout id" }]);
    assertValid(originUrlErrors(req.originUrl, "origin_url"));
    if (this.deps.fetch.refusalOf(new URL(req.originUrl))) {
      assertValid([{ field: "origin_url", reason: NOT_CALLED_REASON }]);
    }
    const credential = await resolveOriginAuth(req.auth, req.accountId, this.deps.originKeys);
    await store.forgetCheckout(this.deps.db, req.checkoutId);
    if (req.auth.kind === "origin_key") await store.recordOriginKeyUse(this.deps.db, req.checkoutId, req.auth.originKeyId);
    else if (credential) {
      await store.upsertCheckoutCredential(this.deps.db, {
        checkout_id: req.checkoutId,
        account_id: req.accountId,
        auth_type: credential.authType,
        header_name: credential.headerName,
        sealed_value: this.deps.sealer.seal(credential.value, req.checkoutId),
        created_at: this.now(),
      });
    }
    return new URL(req.originUrl).toString();
  }

  async forget(checkoutId: string): Promise<void> {
    await store.forgetCheckout(this.deps.db, checkoutId);
  }

  /**
   * Calls the origin for a payment, once: the buyer's parameters are checked
   * first (422 naming them, nothing recorded); a payment that already has a
   * delivery gets it as recorded (waiting while another request runs it).
   */
  async deliver(req: DeliverRequest): Promise<CountedDelivery> {
    const call = this.callOf(req);

    const startedAt = this.now();
    const started = await store.startDelivery(
      this.deps.db,
      {
        payment_id: req.paymentId,
        checkout_id: req.checkoutId,
        account_id: req.accountId,
        test_mode: req.testMode,
        started_at: startedAt,
        deadline_at: new Date(startedAt.getTime() + req.deadlineMs),
      },
      req.testMode ? { day: startedAt.toISOString().slice(0, 10), cap: req.testDeliveryDailyCap } : undefined,
    );
    const budget = req.testMode ? { testDeliveriesResetSeconds: secondsToNextUtcDay(startedAt) } : {};
    if (started === false || started === "cap")
      return { ...(await this.recorded(req.paymentId)), ...budget, ...(started === "cap" ? { testDeliveriesLeft: 0 } : {}) };

    let outcome: RelayOutcome;
    try {
      outcome = await call(await this.credentialFor(req));
    } catch (err) {
      // An error of ours (not the origin's): the call is not recorded as delivered; the saga releases the payment.
      await store.finishDelivery(this.deps.db, req.paymentId, failedResult("platform_error", 0, 0), this.now());
      throw err;
    }
    const row = await store.finishDelivery(this.deps.db, req.paymentId, resultOf(outcome), this.now());
    if (!row) throw new ProblemError("internal", "The delivery record disappeared.");
    return started.left === undefined ? row : { ...row, ...budget, testDeliveriesLeft: started.left };
  }

  /**
   * One call to a checkout's origin outside a purchase (a package's): its
   * parameters are checked now (422 naming them), and running it sends the
   * checkout's credential as a delivery would. Nothing is recorded here.
   */
  callFor(req: CallSpec & Pick<DeliverRequest, "deadlineMs" | "accountId" | "checkoutId" | "originKeyId" | "oneOffCredential">): () => Promise<RelayOutcome> {
    const call = this.callOf(req);
    return async () => call(await this.credentialFor(req));
  }

  /**
   * One read of a relay article by a pass holder (the gateway checked the
   * pass): a call as a delivery makes it, nothing recorded, nothing charged.
   * A failure on the seller's side is a 502 upstream-failed.
   */
  async readArticle(
    req: Pick<CallSpec, "originUrl" | "method" | "params"> & Pick<DeliverRequest, "accountId" | "checkoutId" | "originKeyId" | "oneOffCredential">,
    answerBy?: Date,
  ): Promise<Extract<RelayOutcome, { charged: true }>> {
    if (!isId("contentCheckout", req.checkoutId)) throw invalid([{ field: "checkout_id", reason: "is not a gated article" }]);
    const outcome = await this.callFor({ ...req, deadlineMs: originTimeFor(answerBy, ORIGIN_TIMEOUT_MAX_MS) })();
    if (!outcome.charged) {
      throw notChargedProblem(
        { reason: outcome.reason, status: outcome.status ?? 0 },
        { retry: "reading again with your pass costs nothing.", fix: "Read again later, or report the problem to the seller." },
      );
    }
    return outcome;
  }

  /**
   * Counts one rehearsal delivery of a gated article (a purchase's answer or a
   * pass read on a rehearsal face) against its checkout's daily cap, in the
   * same count as relay and mcp rehearsal deliveries: 429 once it is reached
   * (nothing counted). Answers what the day's cap has left.
   */
  async countRehearsalDelivery(checkoutId: string, cap: number): Promise<{ left: number; resetSeconds: number }> {
    if (!isId("contentCheckout", checkoutId)) throw invalid([{ field: "checkout_id", reason: "is not a gated article" }]);
    const now = this.now();
    const resetSeconds = secondsToNextUtcDay(now);
    const left = await store.countTestDelivery(this.deps.db, checkoutId, { day: now.toISOString().slice(0, 10), cap });
    if (left === undefined) throw rehearsalCapProblem(resetSeconds);
    return { left, resetSeconds };
  }

  /** Checks a buyer's call parameters as a delivery would (422 naming one); calls and records nothing. */
  check(req: CallSpec): void {
    this.callOf({ ...req, deadlineMs: 1 });
  }

  /** The one call a delivery makes (a relay request, or an mcp tools/call), its parameters checked first: 422 naming them. */
  private callOf(req: CallSpec & Pick<DeliverRequest, "deadlineMs">): (credential: OriginCredential | undefined) => Promise<RelayOutcome> {
    const refused = (errors: FieldError[]) => invalid(errors, "The call parameters cannot be sent to the seller's origin.");
    if (req.mcp) {
      const target = { originUrl: req.originUrl, ...(req.mcp.fixedTool !== undefined ? { fixedTool: req.mcp.fixedTool } : {}) };
      const errors = mcpRequestErrors(target, req.params);
      if (errors.length) throw refused(errors);
      return (credential) => callMcpTool(this.deps.fetch, { ...target, ...(credential ? { credential } : {}) }, req.params, req.deadlineMs);
    }
    const method = RELAY_METHODS.find((m) => m === req.method);
    if (!method) throw invalid([{ field: "origin_method", reason: `must be one of ${RELAY_METHODS.join(", ")}` }]);
    const target = { originUrl: req.originUrl, method };
    const errors = relayRequestErrors(target, req.params);
    if (errors.length) throw refused(errors);
    return (credential) => callOrigin(this.deps.fetch, { ...target, ...(credential ? { credential } : {}) }, req.params, req.deadlineMs);
  }

  /**
   * The payment's delivery as recorded, for a saga that resumes: a delivery
   * still running inside its deadline answers undefined; one never started, or
   * cut off past its deadline, is recorded abandoned (so it cannot start any
   * more) and answered so.
   */
  async conclude(paymentId: string): Promise<DeliveryRow | undefined> {
    const now = this.now();
    const row = await store.findDelivery(this.deps.db, paymentId);
    if (row && row.state !== "calling") return row;
    if (row && row.deadline_at.getTime() + DELIVERY_GRACE_MS > now.getTime()) return undefined;
    return store.abandonDelivery(this.deps.db, paymentId, now, new Date(now.getTime() - DELIVERY_GRACE_MS));
  }

  /** A delivery another request runs: waited for until it finishes or its deadline (plus the grace) passes. */
  private async recorded(paymentId: string): Promise<DeliveryRow> {
    for (;;) {
      const row = await store.findDelivery(this.deps.db, paymentId);
      if (!row) throw new ProblemError("internal", "The delivery record disappeared.");
      if (row.state !== "calling") return row;
      if (row.deadline_at.getTime() + DELIVERY_GRACE_MS <= this.now().getTime()) {
        const concluded = await this.conclude(paymentId);
        if (concluded) return concluded;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The credential the call sends: the stored key's current value (none once revoked), or the checkout's sealed copy. */
  private async credentialFor(
    req: Pick<DeliverRequest, "accountId" | "checkoutId" | "originKeyId" | "oneOffCredential">,
  ): Promise<OriginCredential | undefined> {
    if (req.originKeyId !== undefined) return this.deps.originKeys.usableCredential(req.accountId, req.originKeyId);
    if (!req.oneOffCredential) return undefined;
    const row = await store.findCheckoutCredential(this.deps.db, req.checkoutId);
    if (!row || row.account_id !== req.accountId) return undefined;
    return { authType: row.auth_type as OriginAuthTypeName, headerName: row.header_name, value: this.deps.sealer.open(row.sealed_value, req.checkoutId) };
  }
}

function failedResult(reason: string, status: number, latencyMs: number): DeliveryResult {
  return { outcome: "origin_failed", charged: false, status, content_type: null, body: null, latency_ms: latencyMs, bytes: 0, reason };
}

function resultOf(outcome: RelayOutcome): DeliveryResult {
  if (!outcome.charged) return failedResult(outcome.reason, outcome.status ?? 0, outcome.latencyMs);
  return {
    outcome: outcome.kind,
    charged: true,
    status: outcome.status,
    content_type: outcome.contentType,
    body: outcome.body,
    latency_ms: outcome.latencyMs,
    bytes: outcome.bytes,
    reason: "",
  };
}
