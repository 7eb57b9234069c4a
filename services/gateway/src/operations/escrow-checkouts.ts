import type { MessageInitShape } from "@bufbuild/protobuf";
import { catalogV1, escrowV1 } from "@c402/contracts";
import { invalid, ProblemError, type FieldError } from "@c402/problems";
import type { ServiceClients } from "../http/deps";
import type { BodyOf } from "../http/request-schemas";
import { escrowPresetMessage, escrowPresetName } from "../views/escrow-settings";

/**
 * Which creates are escrow ones, and their terms (spec, Escrow; ADR 19). The
 * escrow service resolves the terms (its preset, windows and arbiter
 * resolution order, and the account's policy: `disabled` refuses with 409);
 * catalog freezes them on the checkout. An escrow create is POST
 * /v1/escrow-checkouts, a plain create with `escrow_offer: required`, or any
 * create of an account whose `escrow_policy` is `always`; `escrow_offer:
 * optional` mints an escrow twin beside the plain checkout instead.
 */

type CheckoutEscrow = MessageInitShape<typeof catalogV1.CheckoutEscrowSchema>;

/** What catalog's CreateCheckout is told about escrow. */
export type EscrowOfCreate = { escrow: CheckoutEscrow } | { escrowTwin: CheckoutEscrow } | Record<string, never>;

/** The escrow create fields a create names (POST /v1/escrow-checkouts); a plain create names none (the account's defaults). */
type EscrowFields = Partial<
  Pick<
    BodyOf<"EscrowCheckoutCreate">,
    "escrow_preset" | "escrow_settle_window" | "escrow_hold_window" | "escrow_backstop_window" | "arbiter_evm" | "arbiter_svm"
  >
>;

/** What decides the escrow side of a create, beside the escrow fields. */
interface CreateShape {
  /** The create's inherit_account_payouts, as sent. */
  inheritAccountPayouts: boolean | undefined;
  /** Series fields sent (schedule_interval_days, schedule_periods). */
  seriesFields: readonly string[];
}

export class EscrowCreates {
  constructor(private readonly clients: Pick<ServiceClients, "escrow" | "identity">) {}

  /** POST /v1/escrow-checkouts: the terms of the escrow create. */
  async escrowCreate(accountId: string, fields: EscrowFields, shape: CreateShape): Promise<EscrowOfCreate> {
    return { escrow: await this.resolve(accountId, fields, shape) };
  }

  /**
   * POST /v1/checkouts: escrow_offer required, or the account's escrow_policy
   * always, makes it an escrow create (the account's default terms);
   * optional mints a twin; else it stays plain. The policy is asked only
   * when escrow_offer leaves the choice open.
   */
  async plainCreate(accountId: string, escrowOffer: "optional" | "required" | undefined, shape: CreateShape & { content: boolean }): Promise<EscrowOfCreate> {
    if (escrowOffer === "required") return { escrow: await this.resolve(accountId, {}, shape) };
    const { settings } = await this.clients.escrow.getEscrowSettings({ accountId });
    if (settings?.policy === escrowV1.EscrowPolicy.ALWAYS) {
      if (shape.content)
        throw escrowWithContentRefused("content", "cannot be sold by this account: its escrow_policy always makes every checkout an escrow one");
      return { escrow: await this.resolve(accountId, {}, shape) };
    }
    if (escrowOffer === "optional") return { escrowTwin: await this.resolve(accountId, {}, shape) };
    return {};
  }

  private async resolve(accountId: string, fields: EscrowFields, shape: CreateShape): Promise<CheckoutEscrow> {
    refuseSeries(shape.seriesFields);
    const r = await this.clients.escrow.resolveEscrowTerms({
      accountId,
      ...(fields.escrow_preset !== undefined ? { preset: escrowPresetMessage(fields.escrow_preset) } : {}),
      ...(fields.escrow_settle_window !== undefined ? { settleSeconds: fields.escrow_settle_window } : {}),
      ...(fields.escrow_hold_window !== undefined ? { holdSeconds: fields.escrow_hold_window } : {}),
      ...(fields.escrow_backstop_window !== undefined ? { backstopSeconds: fields.escrow_backstop_window } : {}),
      ...(fields.arbiter_evm !== undefined ? { arbiterEvm: fields.arbiter_evm } : {}),
      ...(fields.arbiter_svm !== undefined ? { arbiterSvm: fields.arbiter_svm } : {}),
      forSubSeller: await this.forSubSeller(accountId, shape.inheritAccountPayouts),
    });
    return checkoutEscrowOf(r.terms);
  }

  /**
   * A platform account sells for sub-sellers unless the create inherits the
   * platform's own payout wallets (catalog's accountTermsOf default); then
   * only an arbiter named on the create counts.
   */
  private async forSubSeller(accountId: string, inheritAccountPayouts: boolean | undefined): Promise<boolean> {
    if (inheritAccountPayouts === true) return false;
    const { settings } = await this.clients.identity.getPlatformSettings({ accountId });
    return settings?.platformAccount ?? false;
  }
}

/** The spec's one 400 of escrow: a gated article is opened by a pass, an escrow holds the money until the buyer accepts. */
export function escrowWithContentRefused(field: "escrow_offer" | "content", reason: string): ProblemError {
  return new ProblemError("bad-request", {
    message: "Escrow and gated content cannot be combined.",
    errors: [{ field, reason }],
    help: { fix: "Sell a gated article (content) as a plain checkout, and goods through escrow without content.", retry_is_safe: false },
  });
}

/** The spec's series rule: a series is not sold through escrow. */
function refuseSeries(seriesFields: readonly string[]): void {
  const errors: FieldError[] = seriesFields.map((field) => ({ field, reason: "cannot be combined with escrow (a series is not sold through escrow)" }));
  if (errors.length) throw invalid(errors);
}

/**
 * The resolved terms as catalog freezes them. Escrow is Base only (ADR 19):
 * the EVM arbiter is the one an escrow is deposited under; the Solana one is
 * kept as resolved though no Solana rail is offered. No EVM rail offered
 * leaves arbiter_evm out, which catalog refuses (no rail to sell on).
 */
function checkoutEscrowOf(terms: escrowV1.EscrowTerms | undefined): CheckoutEscrow {
  const rail = (family: string) => terms?.rails.find((r) => r.family === family);
  const evm = rail("evm");
  const svmArbiter = rail("svm")?.arbiter;
  return {
    preset: escrowPresetName(terms?.preset ?? escrowV1.EscrowPreset.UNSPECIFIED),
    settleSeconds: terms?.windows?.settleSeconds ?? 0,
    holdSeconds: terms?.windows?.holdSeconds ?? 0,
    backstopSeconds: terms?.windows?.backstopSeconds ?? 0,
    ...(evm?.offered && evm.arbiter !== undefined ? { arbiterEvm: evm.arbiter } : {}),
    ...(svmArbiter !== undefined ? { arbiterSvm: svmArbiter } : {}),
  };
}
