import { CHAIN_FAMILY } from "@c402/chain-addresses";
import type { identityV1 } from "@c402/contracts";
import { MAX_PLATFORM_FEE_BPS, MoneyFormatError, parsePrice } from "@c402/money";
import { invalid, type FieldError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router } from "express";
import { platformQuoteView, platformSettingsView, type FeeNetworks } from "../../views/platform";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { REHEARSAL_NETWORK, type SettlementRails } from "../rails";
import { validateBody } from "../validate";

/** How long a quote may be cached: it is a pure function of its query, and the fee rules change only with a deployment. */
export const QUOTE_MAX_AGE_SECONDS = 60;

/** One value of a query parameter: a repeated parameter (Express makes it an array) is not one value. */
function single(query: Record<string, unknown>, name: string, errors: FieldError[]): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === "string") return value;
  errors.push({ field: name, reason: "must be given once, as a plain value" });
  return undefined;
}

/**
 * The query of a quote: `price_usd` as checkout create takes it (a decimal
 * string, more than zero, at most 1000000, at most six decimals) and
 * `platform_fee_bps`, an integer from 0 to 2000 (default 0). 422 naming each
 * bad field; other parameters are ignored.
 */
export function quoteQueryOf(query: Record<string, unknown>): { price: bigint; bps: number } {
  const errors: FieldError[] = [];
  let price = 0n;
  const priceText = single(query, "price_usd", errors);
  if (priceText === undefined) {
    if (query.price_usd === undefined) errors.push({ field: "price_usd", reason: "is required" });
  } else {
    try {
      price = parsePrice(priceText);
    } catch (err) {
      if (!(err instanceof MoneyFormatError)) throw err;
      errors.push({ field: "price_usd", reason: err.message });
    }
  }
  let bps = 0;
  const bpsText = single(query, "platform_fee_bps", errors);
  if (bpsText !== undefined) {
    if (!/^[0-9]{1,4}$/.test(bpsText) || Number(bpsText) > MAX_PLATFORM_FEE_BPS) {
      errors.push({ field: "platform_fee_bps", reason: `must be an integer from 0 to ${MAX_PLATFORM_FEE_BPS}` });
    } else bps = Number(bpsText);
  }
  if (errors.length) throw invalid(errors, "Invalid quote parameters.");
  return { price, bps };
}

/**
 * GET /v1/platform/quote: what a price splits into under a platform fee; no
 * credential, no service asked. GET and PUT /v1/account/platform: the
 * account's platform mode and standing fee (identity's); reading takes any
 * seller credential, changing it is an account setting (scope full).
 */
export function platformRoutes({ clients }: GatewayDeps, rails: SettlementRails): Router {
  const router = Router();

  /** The networks a checkout can settle on in this run: the rehearsal's (EVM), and the live ones payments last named. */
  async function feeNetworks(): Promise<FeeNetworks> {
    const live = await rails.known();
    return { evm: [...new Set([REHEARSAL_NETWORK, ...(live?.base ?? [])])], solana: live?.solana ?? [] };
  }

  /**
   * The account's settings as answered, with the fee wallet its checkouts with
   * a cut take on Solana (its standing Solana wallet); identity's wallets are
   * asked only when the run settles on Solana and a cut can be taken.
   */
  async function settingsAnswer(accountId: string, settings: identityV1.PlatformSettings | undefined) {
    const networks = await feeNetworks();
    const asksWallets = Boolean(settings?.platformFeeTo) && networks.solana.length > 0;
    const wallets = asksWallets ? (await clients.identity.getPayoutWallets({ accountId })).wallets : [];
    const solanaWallet = wallets.find((w) => w.isDefault && w.chainFamily === CHAIN_FAMILY.solana)?.address;
    return platformSettingsView(answered(settings, "settings"), networks, solanaWallet);
  }

  router.get("/v1/account/platform", requireScope(clients, "read_only"), async (req, res) => {
    const { accountId } = credentialOf(req);
    const r = await clients.identity.getPlatformSettings({ accountId });
    res.json(await settingsAnswer(accountId, r.settings));
  });

  router.put("/v1/account/platform", requireScope(clients, "full"), async (req, res) => {
    const body = validateBody("PlatformSettingsPut", req.body);
    const cred = credentialOf(req);
    const r = await clients.identity.putPlatformSettings({
      accountId: cred.accountId,
      platformAccount: body.platform_account,
      platformFeeBps: body.platform_fee_bps,
      ...(typeof body.platform_fee_to === "string" ? { platformFeeTo: body.platform_fee_to } : {}),
      actor: cred.actor,
    });
    res.json(await settingsAnswer(cred.accountId, r.settings));
  });

  router.get("/v1/platform/quote", (req, res) => {
    const { price, bps } = quoteQueryOf(req.query);
    res.setHeader("Cache-Control", `public, max-age=${QUOTE_MAX_AGE_SECONDS}`);
    res.json(platformQuoteView(price, bps));
  });

  return router;
}
