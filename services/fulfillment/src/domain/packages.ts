import { createHash } from "node:crypto";
import { ORIGIN_TIMEOUT_MAX_MS } from "@c402/contracts";
import { failpoint } from "@c402/failpoints";
import { isId, newId, randomBase62 } from "@c402/ids";
import { notChargedProblem, packageKeyRefusedProblem, ProblemError, rehearsalCapProblem } from "@c402/problems";
import type { FulfillmentDb } from "../store/origin-keys-store";
import * as store from "../store/packages-store";
import type { CallFault, PackageCallRow, PackageRow } from "../store/packages-store";
import { countFailedDeliveries, findDelivery } from "../store/relay-store";
import type { RelayOutcome } from "./relay-call";
import { DELIVERY_GRACE_MS, secondsToNextUtcDay, type RelayDeliveries } from "./relay-deliveries";
import { callerStillWaits, originTimeFor } from "./caller-deadline";

/**
 * Packages of calls (docs/decisions.md "Packages"): one payment buys
 * `calls_included` calls of a relay or mcp checkout, the purchase's own call
 * the first of them. The key is shown once, when the package is recorded;
 * only its SHA-256 is kept, so it cannot be shown again. Each call takes one
 * from the allowance before the origin is called and gives it back when the
 * origin failed on the seller's side; a call cut off by a crash is given
 * back by the sweep.
 */

/** `pk_test_…` or `pk_live_…` and 32 base62 characters (~190 bits): a SHA-256 is all the storing it needs. */
const PACKAGE_KEY = /^pk_(test|live)_[0-9A-Za-z]{32}$/;
const DAY_MS = 86_400_000;
/** Burn is projected from the last 7 days of use (or since purchase), once there are this many counted calls over at least an hour. */
export const BURN_RULES = { windowDays: 7, minCalls: 3, minWindowMs: 3_600_000 } as const;

export function hashPackageKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** How a package's calls reach the origin (fixed when it is bought: a checkout's origin never changes). */
export interface CallTarget {
  originUrl: string;
  method: string;
  originKeyId?: string;
  oneOffCredential: boolean;
  mcp?: { fixedTool?: string };
  testDeliveryDailyCap: number;
}

export interface IssueRequest {
  paymentId: string;
  checkoutId: string;
  accountId: string;
  testMode: boolean;
  callsIncluded: number;
  ttlDays: number;
  settledAt: Date;
  priceAtomic: bigint;
  target: CallTarget;
}

/** A spent call that was charged: the origin's answer and the package after it. */
export interface SpentCall {
  outcome: Extract<RelayOutcome, { charged: true }>;
  pkg: PackageRow;
  seq: number;
  testDeliveriesLeft?: number;
  testDeliveriesResetSeconds?: number;
}

export interface Burn {
  basis: "trailing_7_days" | "since_purchase" | "insufficient_usage";
  callsPerDay?: number;
  projectedDaysRemaining?: number;
  runsOutFirst?: "calls" | "expiry";
}

export interface Usage {
  pkg: PackageRow;
  calls: PackageCallRow[];
  hasMore: boolean;
  burn: Burn;
}

export const callsRemaining = (pkg: Pick<PackageRow, "calls_included" | "calls_used">): number => Math.max(0, pkg.calls_included - pkg.calls_used);

/** A package's facts that never change once it is recorded (everything but its allowance): what a call needs before it spends. */
type PackageFacts = Omit<PackageRow, "calls_used" | "last_seq">;

/** How many packages' fixed facts one process keeps, so a call reads its package with no query. */
const FACTS_CACHE_MAX = 10_000;

export class Packages {
  /** Key hash → the package's fixed facts (insertion order: the oldest goes first when full). */
  private readonly facts = new Map<string, PackageFacts>();

  constructor(
    private readonly deps: {
      db: FulfillmentDb;
      relay: Pick<RelayDeliveries, "callFor">;
      now?: () => Date;
    },
  ) {}

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  /**
   * Records the package a settled payment bought, its purchase's delivery as
   * call 1, and answers the key, once: asked again (a redelivery, a retry
   * after a lost answer) it answers the package without a key.
   */
  async issue(req: IssueRequest): Promise<{ key?: string; pkg: PackageRow }> {
    if (!isId("payment", req.paymentId) || !isId("checkout", req.checkoutId)) throw new ProblemError("invalid-request", "Not a payment of a checkout.");
    const existing = await store.findPackageByPayment(this.deps.db, req.paymentId);
    if (existing) return { pkg: existing };
    const delivery = await findDelivery(this.deps.db, req.paymentId);
    if (!delivery?.charged) throw new ProblemError("internal", "A package was asked for a payment with no charged delivery.");
    const key = `pk_${req.testMode ? "test" : "live"}_${randomBase62(32)}`;
    const row: PackageRow = {
      id: newId("package"),
      key_hash: hashPackageKey(key),
      payment_id: req.paymentId,
      checkout_id: req.checkoutId,
      account_id: req.accountId,
      test_mode: req.testMode,
      calls_included: req.callsIncluded,
      calls_used: 1,
      last_seq: 1,
      price_atomic: req.priceAtomic,
      origin_url: req.target.originUrl,
      origin_method: req.target.method,
      origin_key_id: req.target.originKeyId ?? null,
      one_off_credential: req.target.oneOffCredential,
      mcp: req.target.mcp !== undefined,
      mcp_tool: req.target.mcp?.fixedTool ?? null,
      test_delivery_daily_cap: req.target.testDeliveryDailyCap,
      created_at: this.now(),
      expires_at: new Date(req.settledAt.getTime() + req.ttlDays * DAY_MS),
    };
    const at = delivery.finished_at ?? delivery.started_at;
    const created = await store.insertPackage(this.deps.db, row, {
      at,
      state: "done",
      counted: true,
      status: delivery.status,
      fault: delivery.outcome === "buyer_error" ? "buyer" : null,
      latency_ms: delivery.latency_ms,
      bytes: delivery.bytes,
      deadline_at: at,
    });
    if (created) return { key, pkg: row };
    // Another request recorded it first: its answer carried the key.
    return { pkg: (await store.findPackageByPayment(this.deps.db, req.paymentId)) as PackageRow };
  }

  /**
   * Spends one call: 401 for a key that is not this checkout's (or this
   * face's), 410 once expired, 402 when none is left, 422 for parameters the
   * origin cannot be sent (nothing spent); otherwise the origin is called and
   * a seller-side failure gives the call back (502, not charged). The origin
   * gets what the caller's deadline (`answerBy`) leaves, and an answer that
   * comes after the caller stopped waiting is given back too: a call counts
   * only when its answer can reach the buyer (ADR 9).
   */
  async spend(req: { checkoutId: string; key: string; params: Record<string, string>; answerBy?: Date }): Promise<SpentCall> {
    const pkg = await this.factsFor(req.checkoutId, req.key);
    const now = this.now();
    const deadlineMs = originTimeFor(req.answerBy, ORIGIN_TIMEOUT_MAX_MS, now.getTime());
    const call = this.deps.relay.callFor({
      originUrl: pkg.origin_url,
      method: pkg.origin_method,
      params: req.params,
      ...(pkg.mcp ? { mcp: pkg.mcp_tool !== null ? { fixedTool: pkg.mcp_tool } : {} } : {}),
      deadlineMs,
      accountId: pkg.account_id,
      checkoutId: pkg.checkout_id,
      ...(pkg.origin_key_id !== null ? { originKeyId: pkg.origin_key_id } : {}),
      oneOffCredential: pkg.one_off_credential,
    });
    const started = await this.start(pkg, now, new Date(now.getTime() + deadlineMs));
    failpoint("package-call-started");

    let outcome: RelayOutcome;
    try {
      outcome = await call();
    } catch (err) {
      // An error of ours, not the origin's: the call is given back.
      await store.finishCall(this.deps.db, pkg.id, started.seq, uncounted("platform", 0, 0));
      throw err;
    }
    if (!outcome.charged) {
      const after = await store.finishCall(this.deps.db, pkg.id, started.seq, uncounted("seller", outcome.status ?? 0, outcome.latencyMs));
      const problem = notChargedProblem(
        { reason: outcome.reason, status: outcome.status ?? 0 },
        { retry: "the call was given back to your package.", fix: "Call again later, or report the problem to the seller." },
      );
      problem.extensions.calls_remaining = after ? callsRemaining(after) : null;
      throw problem;
    }
    if (!callerStillWaits(req.answerBy, this.now().getTime())) {
      // The buyer's request stopped waiting: this answer can no longer reach it, so the call is given back.
      await store.finishCall(this.deps.db, pkg.id, started.seq, uncounted("platform", outcome.status, outcome.latencyMs));
      throw new ProblemError("unavailable", {
        message: "The seller's origin answered after this request stopped waiting. The call was given back to your package.",
        help: { fix: "Call again.", retry_is_safe: true },
        retryAfterSeconds: 1,
      });
    }
    await store.finishCountedCall(this.deps.db, pkg.id, started.seq, {
      status: outcome.status,
      fault: outcome.kind === "buyer_error" ? "buyer" : null,
      latency_ms: outcome.latencyMs,
      bytes: outcome.bytes,
    });
    return {
      outcome,
      // As this call left it (a call beside it may have spent one since).
      pkg: started.pkg,
      seq: started.seq,
      ...(started.testDeliveriesLeft !== undefined
        ? { testDeliveriesLeft: started.testDeliveriesLeft, testDeliveriesResetSeconds: secondsToNextUtcDay(now) }
        : {}),
    };
  }

  /**
   * Takes one call from the allowance and records it under way: a live
   * package in one statement (the hot path), a rehearsal one in a transaction
   * that also counts it against its checkout's daily cap. Refused, it says
   * why: 410 expired, 402 exhausted, 429 the cap.
   */
  private async start(pkg: PackageFacts, now: Date, deadline: Date): Promise<{ pkg: PackageRow; seq: number; testDeliveriesLeft?: number }> {
    if (!pkg.test_mode) {
      const started = await store.startLiveCall(this.deps.db, pkg.id, now, deadline);
      if (started) return started;
      const current = (await store.findPackageByHash(this.deps.db, pkg.key_hash)) as PackageRow;
      throw current.expires_at && current.expires_at <= now ? expired(current) : exhausted(current);
    }
    const started = await store.startCall(this.deps.db, pkg.id, now, deadline, { day: now.toISOString().slice(0, 10), cap: pkg.test_delivery_daily_cap });
    if (started === "expired") throw expired(pkg);
    if (started === "exhausted") throw exhausted((await store.findPackageByHash(this.deps.db, pkg.key_hash)) as PackageRow);
    if (started === "cap") throw rehearsalCapProblem(secondsToNextUtcDay(now));
    return started;
  }

  /** The usage record (free): the package, one page of its calls newest first, and its burn. */
  async usage(req: { checkoutId: string; key: string; pageSize: number; beforeSeq?: number }): Promise<Usage> {
    const pkg = await this.packageFor(req.checkoutId, req.key);
    const rows = await store.listCalls(this.deps.db, pkg.id, req.pageSize + 1, req.beforeSeq);
    const now = this.now();
    const windowStart = new Date(Math.max(pkg.created_at.getTime(), now.getTime() - BURN_RULES.windowDays * DAY_MS));
    const counted = await store.countedCallsSince(this.deps.db, pkg.id, windowStart);
    return {
      pkg,
      calls: rows.slice(0, req.pageSize),
      hasMore: rows.length > req.pageSize,
      burn: burnOf({
        counted,
        windowStart,
        now,
        remaining: callsRemaining(pkg),
        expiresAt: pkg.expires_at,
        fullWindow: windowStart.getTime() > pkg.created_at.getTime(),
      }),
    };
  }

  /** What a checkout's live packages still owe: keys, unspent calls, and the part of their price those stand for. */
  liabilities(checkoutId: string): Promise<store.Liabilities> {
    return store.liabilities(this.deps.db, { checkoutId }, this.now());
  }

  /**
   * What an account's buyers were not served since `since` (purchases whose
   * origin failed on the seller's side, package calls given back for it) and
   * what its live packages still owe, per checkout (most unearned first, at
   * most 100) and in total.
   */
  async accountFulfillment(accountId: string, since: Date, testMode: boolean) {
    const now = this.now();
    const [failedDeliveries, failedPackageCalls, offers, totals] = await Promise.all([
      countFailedDeliveries(this.deps.db, accountId, since, testMode),
      store.countSellerFailedCalls(this.deps.db, accountId, since, testMode),
      store.liabilitiesPerCheckout(this.deps.db, accountId, now, 100),
      store.liabilities(this.deps.db, { accountId }, now),
    ]);
    return { failedDeliveries, failedPackageCalls, offers, totals };
  }

  /** Gives back the calls a crash cut off (still under way past their deadline and a grace); answers how many. */
  async sweep(limit = 200): Promise<number> {
    const cutoff = new Date(this.now().getTime() - DELIVERY_GRACE_MS);
    const overdue = await store.overdueCalls(this.deps.db, cutoff, limit);
    for (const c of overdue) await store.finishCall(this.deps.db, c.package_id, c.seq, uncounted("platform", 0, 0));
    return overdue.length;
  }

  /**
   * The package a key names for this checkout: an unknown key and another
   * checkout's answer 401 alike, so a key's existence elsewhere never shows.
   * A key is scoped to its checkout, not to a face: a rehearsal package's
   * calls are rehearsal deliveries (metered by the daily cap) wherever used.
   */
  private async packageFor(checkoutId: string, key: string): Promise<PackageRow> {
    const pkg = PACKAGE_KEY.test(key) ? await store.findPackageByHash(this.deps.db, hashPackageKey(key)) : undefined;
    if (!pkg || pkg.checkout_id !== checkoutId) throw packageKeyRefusedProblem();
    return pkg;
  }

  /** packageFor's fixed facts, from this process's cache when it has them (a package's facts never change). */
  private async factsFor(checkoutId: string, key: string): Promise<PackageFacts> {
    const cached = PACKAGE_KEY.test(key) ? this.facts.get(hashPackageKey(key)) : undefined;
    if (cached) {
      if (cached.checkout_id !== checkoutId) throw packageKeyRefusedProblem();
      return cached;
    }
    const { calls_used: _used, last_seq: _seq, ...facts } = await this.packageFor(checkoutId, key);
    if (this.facts.size >= FACTS_CACHE_MAX) this.facts.delete(this.facts.keys().next().value as string);
    this.facts.set(facts.key_hash, facts);
    return facts;
  }
}

function uncounted(fault: CallFault, status: number, latencyMs: number): store.CallResult {
  return { counted: false, status, fault, latency_ms: latencyMs, bytes: 0 };
}

function expired(pkg: Pick<PackageRow, "expires_at">): ProblemError {
  return new ProblemError("gone", {
    message: `This package expired at ${pkg.expires_at?.toISOString() ?? "its end"}; its unspent calls can no longer be used.`,
    help: { fix: "Buy a new package: request the checkout without the key for its payment requirements.", retry_is_safe: false },
    extensions: { expires_at: pkg.expires_at?.toISOString() ?? null },
  });
}

function exhausted(pkg: PackageRow): ProblemError {
  return new ProblemError("payment-required", {
    message: `This package's ${pkg.calls_included} calls are used up.`,
    help: {
      fix: "Buy a new package: request the checkout without the key for its payment requirements.",
      retry_is_safe: false,
      calls_used: pkg.calls_used,
      calls_included: pkg.calls_included,
    },
  });
}

/**
 * The burn projection (docs/decisions.md "Packages"): counted calls per day
 * over the last 7 days, or since purchase when younger; figures only once
 * there are at least 3 counted calls over at least an hour.
 */
export function burnOf(u: { counted: number; windowStart: Date; now: Date; remaining: number; expiresAt: Date | null; fullWindow: boolean }): Burn {
  const windowMs = u.now.getTime() - u.windowStart.getTime();
  if (u.counted < BURN_RULES.minCalls || windowMs < BURN_RULES.minWindowMs) return { basis: "insufficient_usage" };
  const callsPerDay = (u.counted * DAY_MS) / windowMs;
  const projectedDaysRemaining = u.remaining / callsPerDay;
  const runsOut = u.now.getTime() + projectedDaysRemaining * DAY_MS;
  return {
    basis: u.fullWindow ? "trailing_7_days" : "since_purchase",
    callsPerDay: Math.round(callsPerDay * 100) / 100,
    projectedDaysRemaining: Math.round(projectedDaysRemaining * 10) / 10,
    runsOutFirst: u.expiresAt !== null && u.expiresAt.getTime() < runsOut ? "expiry" : "calls",
  };
}
