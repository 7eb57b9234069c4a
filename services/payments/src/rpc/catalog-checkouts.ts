import { toBinary } from "@bufbuild/protobuf";
import { catalogV1, checkoutStatusName } from "@c402/contracts";
import { RevisionCache } from "@c402/revision-cache";
import type { ServiceClient } from "@c402/rpc";
import type { CheckoutEscrowTerms, CheckoutForPayment, RelayOrigin } from "../domain/requirements";

/**
 * How many checkouts payments keeps, and what their goods may weigh together:
 * the hot ones are few; a checkout past the budget is read whole each time.
 */
const KEPT_CHECKOUTS = { maxEntries: 1_000, maxWeight: 16 * 1024 * 1024, maxAgeMs: 60_000 };

/**
 * The checkout a quote or a sale is for, from catalog's gRPC contract, read
 * on every use: catalog answers its current status every time, and the
 * whole record only when it changed since the revision payments holds
 * (ADR 14). A voided, sold or expired checkout stops selling at once; a
 * patched one sells as patched from the next request on.
 */
export function catalogCheckouts(catalog: ServiceClient<typeof catalogV1.CatalogService>): (checkoutId: string) => Promise<CheckoutForPayment> {
  // Weighed by the record's size on the wire, computed once per record kept.
  const kept = new RevisionCache<CheckoutForPayment>({
    ...KEPT_CHECKOUTS,
    weigh: (c) => (c.listing ? toBinary(catalogV1.CheckoutSchema, c.listing).byteLength : 0),
  });
  return async (checkoutId) => {
    const { value, answer } = await kept.through(checkoutId, async (knownRevision) => {
      const r = await catalog.getCheckout({ checkoutId, ...(knownRevision !== undefined ? { knownRevision } : {}) });
      return { revision: r.revision, status: r.status, value: r.checkout && checkoutForPayment(r.checkout, r.revision) };
    });
    // The status is the one thing that changes without a new revision (a checkout expires): always catalog's latest.
    return {
      ...value,
      // A status this build does not know cannot be sold: treat it as void.
      status: checkoutStatusName(answer.status) ?? "void",
      ...(value.listing ? { listing: { ...value.listing, status: answer.status } } : {}),
    };
  };
}

function checkoutForPayment(checkout: catalogV1.Checkout, revision: string): CheckoutForPayment {
  return {
    id: checkout.id,
    accountId: checkout.accountId,
    title: checkout.title,
    priceAtomic: checkout.priceAtomic,
    payTo: checkout.payTo,
    armed: checkout.armed,
    reusable: checkout.reusable,
    status: checkoutStatusName(checkout.status) ?? "void",
    ...platformTermsOf(checkout.settings),
    ...(checkout.origin ? { relay: relayOriginOf(checkout.origin, checkout.settings) } : {}),
    ...(checkout.fulfillment === catalogV1.Fulfillment.WEBHOOK ? { webhook: true } : {}),
    ...(checkout.package ? { package: { calls: checkout.package.calls, ttlDays: checkout.package.ttlDays } } : {}),
    ...payoutAddressesOf(checkout.payoutRails),
    ...(checkout.escrow ? { escrow: escrowTermsOf(checkout.escrow) } : {}),
    ...(checkout.escrowTwinId && !checkout.escrow ? { escrowTwinId: checkout.escrowTwinId } : {}),
    ...(checkout.schedule ? { schedule: { intervalDays: checkout.schedule.intervalDays, periods: checkout.schedule.periods } } : {}),
    listing: checkout,
    revision,
  };
}

/**
 * The platform terms a checkout was created with, from catalog's record: the
 * cut (none without a fee and its wallet) with the platform's Solana wallet
 * frozen beside it when it had one, and sold_by.
 */
function platformTermsOf(settings: catalogV1.CheckoutSettings | undefined): Pick<CheckoutForPayment, "platform" | "soldBy"> {
  const feeToSolana = settings?.platformFeeRails.find((r) => r.chainFamily === "solana")?.address;
  return {
    ...(settings?.platformFeeBps && settings.platformFeeTo
      ? { platform: { feeBps: settings.platformFeeBps, feeTo: settings.platformFeeTo, ...(feeToSolana !== undefined ? { feeToSolana } : {}) } }
      : {}),
    ...(settings?.soldBy ? { soldBy: settings.soldBy } : {}),
  };
}

/** How a relay checkout's origin is called, from catalog's record (the credential stays with fulfillment). */
function relayOriginOf(origin: catalogV1.Origin, settings: catalogV1.CheckoutSettings | undefined): RelayOrigin {
  return {
    url: origin.url,
    method: origin.method,
    ...(origin.originKeyId !== undefined ? { originKeyId: origin.originKeyId } : {}),
    oneOffCredential: origin.oneOffCredential,
    testDeliveryDailyCap: settings?.testDeliveryDailyCap || 25,
    ...(origin.mcp ? { mcp: origin.mcpTool !== undefined ? { tool: origin.mcpTool } : {} } : {}),
  };
}

/** The checkout's payout addresses on the families beside EVM (whose address is pay_to), from catalog's rails. */
function payoutAddressesOf(rails: readonly catalogV1.PayoutRail[]): Pick<CheckoutForPayment, "payoutAddresses"> {
  const solana = rails.find((r) => r.chainFamily === "solana")?.address;
  const stellar = rails.find((r) => r.chainFamily === "stellar")?.address;
  if (solana === undefined && stellar === undefined) return {};
  return { payoutAddresses: { ...(solana !== undefined ? { solana } : {}), ...(stellar !== undefined ? { stellar } : {}) } };
}

const ESCROW_PRESETS: readonly CheckoutEscrowTerms["preset"][] = ["instant", "standard", "shipping", "custom"];

/** An escrow checkout's frozen terms, from catalog's record (a preset catalog does not name is custom: the windows are what the contract enforces). */
function escrowTermsOf(escrow: catalogV1.CheckoutEscrow): CheckoutEscrowTerms {
  const preset = ESCROW_PRESETS.find((p) => p === escrow.preset) ?? "custom";
  return {
    preset,
    settleSeconds: escrow.settleSeconds,
    holdSeconds: escrow.holdSeconds,
    backstopSeconds: escrow.backstopSeconds,
    ...(escrow.arbiterEvm !== undefined && escrow.arbiterEvm !== "" ? { arbiterEvm: escrow.arbiterEvm } : {}),
  };
}
