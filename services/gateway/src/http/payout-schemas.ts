import { PAYOUT_CHAINS } from "@c402/chain-addresses";

/**
 * JSON Schemas of the payout bodies, part of request-schemas.ts's `schemas`
 * (validation, the OpenAPI document and the body types all read them there).
 * The shape is checked here; each address is checked for its chain by the
 * service that stores it (identity for the account's wallets, catalog for a
 * checkout's rails), which answers 422 naming the field.
 */

const ADDRESS_MAX = 128;

const standing = (description: string) => ({ anyOf: [{ type: "string", minLength: 1, maxLength: ADDRESS_MAX }, { type: "null" }], description }) as const;

export const payoutSchemas = {
  /**
   * PUT /v1/account/wallets and POST /v1/account/wallets/preview: the whole
   * standing set, one address per chain (absent or null: none).
   */
  PayoutWalletsPut: {
    type: "object",
    additionalProperties: false,
    description:
      "Replaces the account's standing payout wallets: one address per chain; a chain left out (or null) has none. A wallet a sign-in verified is never removed and stands again for its chain when the body names none. Checkouts copy the standing set at create (pay_to for base, the others as payout rails); existing checkouts keep what they copied.",
    properties: {
      base: standing("EVM address (Base): 0x and 40 hex digits; a mixed-case address must carry a valid EIP-55 checksum. Stored checksummed."),
      solana: standing("Solana address: base58 of a 32-byte public key."),
      stellar: standing("Stellar account id: a G… strkey (56 characters, checksum verified)."),
    },
  },
  /** POST /v1/checkouts/{id}/payouts: one rail for a chain the checkout has none for. */
  CheckoutPayoutAdd: {
    type: "object",
    additionalProperties: false,
    required: ["chain", "address"],
    description: "Adds a payout rail for a chain the checkout has no address for; rails are additive only (a chain that has one answers 409).",
    properties: {
      chain: { type: "string", enum: PAYOUT_CHAINS, description: "base (EVM), solana or stellar." },
      address: { type: "string", minLength: 1, maxLength: ADDRESS_MAX, description: "The address, valid for the chain (as for PUT /v1/account/wallets)." },
    },
  },
} as const;
