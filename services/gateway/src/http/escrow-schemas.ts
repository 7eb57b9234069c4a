/**
 * JSON Schemas of the escrow settings body, part of request-schemas.ts's
 * `schemas` (validation, the OpenAPI document and the body type all read it
 * there). The shape is checked here; each arbiter's address is checked for
 * its chain family by the escrow service, which answers 422 naming the field.
 */

const ADDRESS_MAX = 128;

/** The values of the settings, as the API names them (the escrow service's domain names them alike). */
export const ESCROW_POLICY_VALUES = ["disabled", "seller_choice", "always"] as const;
export const ESCROW_PRESET_VALUES = ["instant", "standard", "shipping"] as const;

const arbiter = (description: string) => ({ anyOf: [{ type: "string", minLength: 1, maxLength: ADDRESS_MAX }, { type: "null" }], description }) as const;

const HEX32 = "^0x[0-9a-fA-F]{64}$";

/** An escrow window as a create names it: seconds (the escrow service checks the spec's limits and names the field it refuses). */
const windowSeconds = (description: string) => ({ type: "integer", minimum: 1, maximum: 4_294_967_295, description }) as const;

/**
 * The escrow create fields of POST /v1/escrow-checkouts (request-schemas.ts
 * adds them to the checkout create body's). Each left out is resolved by the
 * escrow service: the preset is the account's default; the arbiters come
 * from the account's escrow settings, then the service default.
 */
export const escrowCreateFields = {
  escrow_preset: { type: "string", enum: ESCROW_PRESET_VALUES, description: "The windows' preset (default: the account's escrow_default_preset)." },
  escrow_settle_window: windowSeconds(
    "Seconds from the deposit until anyone may release to the seller (overrides the preset's); at least 1 hour, at most 30 days.",
  ),
  escrow_hold_window: windowSeconds("Seconds from the buyer's hold until anyone may release (overrides the preset's); at least 1 hour, at most 30 days."),
  escrow_backstop_window: windowSeconds(
    "Seconds from an escalation until anyone may refund the buyer when the arbiter has not ruled (overrides the preset's); greater than the hold window, at most 180 days.",
  ),
  arbiter_evm: {
    type: "string",
    minLength: 1,
    maxLength: ADDRESS_MAX,
    description:
      "The arbiter on Base (default: the account's escrow_arbiter_evm, then the service's). Required for a platform account creating for a sub-seller. It cannot be the checkout's own pay_to: the escrow contract refuses a seller as its own arbiter.",
  },
  arbiter_svm: {
    type: "string",
    minLength: 1,
    maxLength: ADDRESS_MAX,
    description: "The arbiter on Solana; this deployment offers no Solana escrow rail, so one named here is refused.",
  },
} as const;

export const escrowSchemas = {
  /** POST /e/{id}/actions/{action}/submit: the EIP-712 signature of the action's typed data, split as the contract takes it. */
  EscrowActionSubmit: {
    type: "object",
    additionalProperties: false,
    required: ["v", "r", "s", "deadline"],
    description:
      "The signature of the typed data POST /e/{id}/actions/{action} answered, split into v, r and s, and the deadline inside that typed data. The service relays it to the escrow contract and pays the gas; the contract accepts it only from the wallet the action needs (the buyer's; the seller's for cancel).",
    properties: {
      v: { type: "integer", enum: [27, 28], description: "The signature's recovery id (27 or 28)." },
      r: { type: "string", pattern: HEX32, description: "The signature's r, 0x and 64 hex digits." },
      s: { type: "string", pattern: HEX32, description: "The signature's s, 0x and 64 hex digits." },
      deadline: { type: "integer", minimum: 1, maximum: 9_999_999_999, description: "The typed data's deadline, unix seconds." },
    },
  },
  /** PUT /v1/account/escrow: the fields to change; a field left out keeps its value. */
  EscrowSettingsPut: {
    type: "object",
    additionalProperties: false,
    minProperties: 1,
    description:
      "Changes the account's escrow settings: each field named is set, a field left out keeps its value. `arbiter: \"payouts\"` copies the account's standing payout wallets (Base and Solana) as the arbiters, a snapshot that later wallet changes do not follow; it cannot be sent with escrow_arbiter_evm or escrow_arbiter_svm. Escrow checkouts copy the settings at create and never follow them later.",
    properties: {
      escrow_policy: {
        type: "string",
        enum: ESCROW_POLICY_VALUES,
        description: "disabled: no escrow checkouts; seller_choice (default): the seller chooses per checkout; always: every checkout goes through escrow.",
      },
      escrow_default_preset: {
        type: "string",
        enum: ESCROW_PRESET_VALUES,
        description: "The preset an escrow checkout takes when it names none (default standard).",
      },
      escrow_arbiter_evm: arbiter(
        "The arbiter on Base: an EVM address (0x and 40 hex digits; a mixed-case one must carry a valid EIP-55 checksum; stored checksummed); null removes it.",
      ),
      escrow_arbiter_svm: arbiter("The arbiter on Solana: base58 of a 32-byte public key; null removes it. This deployment offers no Solana escrow rail."),
      arbiter: { type: "string", enum: ["payouts"], description: "payouts: copy the account's standing payout wallets as the arbiters (a snapshot)." },
    },
  },
} as const;
