import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { credentialKindToProto, keyModeToProto, scopeToProto, spendingWalletsV1 } from "@c402/contracts";
import { invalid, ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import type { Response } from "express";
import { DEFAULT_SPENDING_PAYS_PER_MINUTE } from "../config";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { pageOf, pageRequestOf } from "../http/pagination";
import { countAgainst } from "../http/rate-limit";
import { USD_DECIMAL } from "../http/spending-wallet-schemas";
import { validateBody } from "../http/validate";
import { newApiKeyView } from "../views/keys";
import {
  balanceView,
  eventAt,
  fundingView,
  limitsView,
  paidView,
  secretView,
  SPENDING_CHAINS,
  walletEventView,
  walletView,
  type SpendingChainName,
} from "../views/spending-wallets";
import type { CheckoutOperations } from "./checkouts";

const { Chain, CallerKind } = spendingWalletsV1;

/**
 * Spending wallets (ADR 21): the gateway's side. The caller rules of the
 * spec's table are the spending-wallets service's own (it records every
 * refused Pay and Reveal as a `refused` event before answering), so each
 * acting request carries the resolved credential as a Caller and the
 * service's problem (its slug, status and extensions: reason test_key,
 * insufficient balance, outcome_unknown…) reaches the client unchanged.
 *
 * The gateway refuses early only what the route table makes plain without
 * the service: an OAuth token anywhere but pay, and a key on a session-only
 * route other than reveal (reveal's refusal is the service's to record, see
 * reveal()). Shared by the REST routes and the MCP spending tools.
 */

const CHAINS: Record<SpendingChainName, spendingWalletsV1.Chain> = { base: Chain.BASE, solana: Chain.SOLANA };

/**
 * The chain a path names. Anything but base or solana is 404 not-found (not
 * 422): the path names a resource, the chain's wallet, and an unknown chain
 * has none, as an unknown checkout id is 404.
 */
export function chainOf(name: string): spendingWalletsV1.Chain {
  if (!(SPENDING_CHAINS as readonly string[]).includes(name)) {
    throw new ProblemError("not-found", {
      message: `No spending wallet chain \`${name.slice(0, 40)}\`: the chains are ${SPENDING_CHAINS.join(" and ")}.`,
      help: { fix: `Use /v1/spending-wallets/${SPENDING_CHAINS.join(" or ")}/….`, retry_is_safe: false },
    });
  }
  return CHAINS[name as SpendingChainName];
}

/**
 * The credential as the service's Caller. A session is `test` in Credential
 * (its checkouts default to rehearsal) but never a test key here; an API
 * key's test_mode is its mode; an OAuth token is never a test key.
 */
export function callerOf(cred: Credential): spendingWalletsV1.Caller {
  const kind = cred.kind === "session" ? CallerKind.SESSION : cred.kind === "oauth" ? CallerKind.OAUTH : CallerKind.API_KEY;
  return create(spendingWalletsV1.CallerSchema, {
    kind,
    testMode: cred.kind === "api_key" && cred.mode === "test",
    scope: cred.scope,
    actor: cred.actor,
  });
}

/** 403: an OAuth token reaches no wallet or key endpoint but pay (spec, Errors). */
export function refuseOAuthOnWallets(cred: Credential): void {
  if (cred.kind !== "oauth") return;
  throw new ProblemError("forbidden", {
    message: "An OAuth token cannot use spending wallets beyond paying: the wallets and their keys are for the account's own keys and sessions.",
    help: { fix: "Use an API key, or sign in to the dashboard.", retry_is_safe: false },
    extensions: { reason: "oauth_token_refused" },
  });
}

/** 403 for anything but a browser session (spec: "session only"). */
export function requireSession(cred: Credential, what: string): void {
  refuseOAuthOnWallets(cred);
  if (cred.kind === "session") return;
  throw new ProblemError("forbidden", {
    message: `Only a signed-in session can ${what}: an API key cannot.`,
    help: { fix: "Sign in to the dashboard (wallet or magic link) and do it there.", retry_is_safe: false },
    extensions: { reason: "session_only" },
  });
}

/** 403 for a test key: a test key moves no money, so every spending MCP tool refuses it (spec, MCP rules). */
export function refuseTestKey(cred: Credential): void {
  if (cred.kind !== "api_key" || cred.mode !== "test") return;
  throw new ProblemError("forbidden", {
    message: "A test key cannot use a spending wallet: spending moves real money. Use a live key.",
    help: { fix: "Mint a live agent key with POST /v1/spending-wallets/keys (signed in) and use it.", retry_is_safe: false },
    extensions: { reason: "test_key" },
  });
}

/** 422 unless `amount` is a USD decimal (funding's `?amount=`). */
function usdQueryOf(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length > 16 || !new RegExp(USD_DECIMAL).test(value)) {
    throw invalid([{ field, reason: "must be a USD amount: a decimal string with at most 6 places, e.g. 25 or 2.50" }]);
  }
  return value;
}

/** The rehearsal checkout's create, fixed: the same body under the same key makes the catalog answer the first checkout again. */
export const REHEARSAL_IDEMPOTENCY_KEY = "rehearsal-checkout/v1";
const REHEARSAL_CHECKOUT = {
  title: "Rehearsal checkout",
  price_usd: "0.01",
  description: "A rehearsal: pay its test face with any x402 client to check the agent can pay. Nothing moves.",
  payload: { rehearsal: true, message: "It worked: your agent paid an x402 checkout. This was a rehearsal, so nothing moved." },
  reusable: true,
};

export class SpendingWalletOperations {
  constructor(
    private readonly deps: Pick<GatewayDeps, "clients" | "settings" | "cache">,
    private readonly checkouts: CheckoutOperations,
  ) {}

  private get service() {
    return this.deps.clients.spendingWallets;
  }

  /** GET /v1/spending-wallets/health: no credential. */
  async health() {
    const r = await this.service.selfCheck({});
    return { ok: r.ok, problems: r.problems.map((p) => ({ component: p.component, message: p.message })), chains: [...r.chains] };
  }

  /** GET /v1/spending-wallets: addresses only; never the chain, never a secret. */
  async list(cred: Credential) {
    ensureScope(cred, "read_only");
    refuseOAuthOnWallets(cred);
    const r = await this.service.listWallets({ accountId: cred.accountId });
    return { wallets: r.wallets.map(walletView) };
  }

  /** POST /v1/spending-wallets/{chain}: the wallet and its secret, shown this once. */
  async createWallet(cred: Credential, chain: string) {
    requireSession(cred, "create a spending wallet");
    const r = await this.service.createWallet({ accountId: cred.accountId, chain: chainOf(chain), caller: callerOf(cred) });
    return {
      wallet: walletView(answered(r.wallet, "wallet")),
      secret: secretView(answered(r.secret, "secret")),
      limits: limitsView(r.limits),
      note: "Shown once. Store the phrase or the private key now: only POST …/reveal shows it again, and it is recorded.",
    };
  }

  /** GET …/{chain}/balance: reads the chain. */
  async balance(cred: Credential, chain: string) {
    ensureScope(cred, "read_only");
    refuseOAuthOnWallets(cred);
    return balanceView(await this.service.getBalance({ accountId: cred.accountId, chain: chainOf(chain) }));
  }

  /** POST …/{chain}/pay: the service checks the caller (live key, OAuth or session), the limits and the balance. */
  async pay(cred: Credential, chain: string, raw: unknown, res: Response, opts: { idempotencyKey?: string } = {}) {
    ensureScope(cred, "payments");
    const chainId = chainOf(chain);
    const body = validateBody("SpendingPay", raw);
    await this.spendPayBudget(res, cred, chain);
    const r = await this.service.pay({
      accountId: cred.accountId,
      chain: chainId,
      url: body.url,
      ...(body.max_usd !== undefined ? { maxUsd: body.max_usd } : {}),
      params: body.params ?? {},
      caller: callerOf(cred),
      ...(opts.idempotencyKey !== undefined ? { idempotencyKey: opts.idempotencyKey } : {}),
    });
    return paidView(r);
  }

  /**
   * One pay of the account's per-chain budget a minute (shared by the REST
   * route and pay_x402 through pay()): 429 with Retry-After and X-RateLimit-*
   * past it. Counted after validation, so a malformed request spends nothing.
   */
  private async spendPayBudget(res: Response, cred: Credential, chain: string): Promise<void> {
    const limit = this.deps.settings.spendingPaysPerMinute ?? DEFAULT_SPENDING_PAYS_PER_MINUTE;
    await countAgainst(this.deps.cache, res, { name: "spending-pays", limit, windowSeconds: 60 }, `${cred.accountId}:${chain}`);
  }

  /** GET …/{chain}/limits: with what is spent and left of the UTC day. */
  async limits(cred: Credential, chain: string) {
    ensureScope(cred, "read_only");
    refuseOAuthOnWallets(cred);
    const r = await this.service.getLimits({ accountId: cred.accountId, chain: chainOf(chain) });
    return limitsView(r.limits);
  }

  /** PUT …/{chain}/limits: a session replaces both limits. */
  async setLimits(cred: Credential, chain: string, raw: unknown) {
    requireSession(cred, "change spending limits");
    const chainId = chainOf(chain);
    const body = validateBody("SpendingLimitsPut", raw);
    const r = await this.service.setLimits({
      accountId: cred.accountId,
      chain: chainId,
      perPaymentUsd: body.per_payment_usd,
      perDayUsd: body.per_day_usd,
      caller: callerOf(cred),
    });
    return limitsView(r.limits);
  }

  /** GET …/{chain}/funding(.svg): the payment request that funds the wallet. */
  async funding(cred: Credential, chain: string, query: Record<string, unknown>) {
    requireSession(cred, "fund a spending wallet");
    const chainId = chainOf(chain);
    const amountUsd = usdQueryOf(query.amount, "amount");
    const r = await this.service.getFunding({
      accountId: cred.accountId,
      chain: chainId,
      ...(amountUsd !== undefined ? { amountUsd } : {}),
      caller: callerOf(cred),
    });
    return fundingView(r);
  }

  /**
   * POST …/{chain}/reveal: the withdrawal. The service refuses (and records)
   * any caller but a session; a resolved key or token is therefore sent as it
   * is. Should the service ever answer a non-session caller, the gateway still
   * refuses: the secret never leaves for a key.
   */
  async reveal(cred: Credential, chain: string) {
    const r = await this.service.reveal({ accountId: cred.accountId, chain: chainOf(chain), caller: callerOf(cred) });
    requireSession(cred, "reveal a spending wallet's key");
    return { wallet: walletView(answered(r.wallet, "wallet")), secret: secretView(answered(r.secret, "secret")) };
  }

  /** DELETE …/{chain}: archive; the funds stay where they are. */
  async archive(cred: Credential, chain: string) {
    requireSession(cred, "archive a spending wallet");
    const r = await this.service.archive({ accountId: cred.accountId, chain: chainOf(chain), caller: callerOf(cred) });
    return { wallet: walletView(answered(r.wallet, "wallet")) };
  }

  /** GET …/{chain}/events: newest first, paged like every list (limit, cursor; has_more, next_cursor). */
  async events(cred: Credential, chain: string, query: Record<string, unknown>) {
    ensureScope(cred, "read_only");
    refuseOAuthOnWallets(cred);
    const chainId = chainOf(chain);
    const page = pageRequestOf(query);
    const r = await this.service.listEvents({
      accountId: cred.accountId,
      chain: chainId,
      pageSize: page.limit + 1,
      ...(page.after ? { afterAt: timestampFromDate(page.after.createdAt), afterId: page.after.id } : {}),
    });
    const { items, ...more } = pageOf(r.events, page.limit, (e) => ({ createdAt: eventAt(e), id: e.id }));
    return { events: items.map(walletEventView), ...more };
  }

  /**
   * POST /v1/spending-wallets/keys: a live `payments` key for an agent, minted
   * for the session (identity lets a session mint any key; there is no
   * payout-wallet precondition for it).
   */
  async mintAgentKey(cred: Credential, raw: unknown) {
    requireSession(cred, "mint an agent key");
    const body = validateBody("SpendingAgentKeyCreate", raw ?? {});
    const r = await this.deps.clients.identity.createApiKey({
      accountId: cred.accountId,
      name: body.name ?? "agent",
      scope: scopeToProto("payments"),
      mode: keyModeToProto("live"),
      mintedBy: { kind: credentialKindToProto(cred.kind), scope: scopeToProto(cred.scope), mode: keyModeToProto(cred.mode) },
      actor: cred.actor,
    });
    return newApiKeyView(answered(r.apiKey, "api_key"), r.secret);
  }

  /**
   * GET /v1/rehearsal-checkout: the account's rehearsal checkout, created
   * through the catalog's idempotent create (a fixed key and body, so a
   * repeat answers the same checkout while the catalog keeps the key) as a
   * test-mode create (never armed: only its test face matters, and it moves
   * nothing), whatever the asking credential's rung: it is the account's
   * fixed, free checkout, not one the caller designs.
   */
  async rehearsalCheckout(cred: Credential) {
    ensureScope(cred, "read_only");
    refuseOAuthOnWallets(cred);
    const creator: Credential = { ...cred, scope: "payments", mode: "test" };
    const r = await this.checkouts.create(creator, REHEARSAL_CHECKOUT, { idempotencyKey: REHEARSAL_IDEMPOTENCY_KEY });
    const { test_url: url } = r.checkout as { test_url: string };
    return {
      url,
      ask: `Pay ${url} with your x402 client. It is a rehearsal: the payment is simulated and nothing moves; the answer tells you it worked.`,
    };
  }
}
