import { ESCROW_POLICY_VALUES, ESCROW_PRESET_VALUES } from "../http/escrow-schemas";
import { bool, caip2, object, orNull, ref, str, strOrNull, timestampOrNull, type Schema } from "./openapi-schema";

/**
 * The escrow settings operations and shapes of the OpenAPI document
 * (openapi.ts merges them in and hands over its operation helpers, as for
 * openapi-payouts.ts).
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };

export interface EscrowOperationKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  authenticated: (minimumScope: "read_only" | "payments" | "full") => Part;
  bodyProblems: Part;
  json: (description: string, schema: Schema) => unknown;
  body: (name: "EscrowSettingsPut") => unknown;
}

/** Request bodies a client could send as they are. */
export const ESCROW_EXAMPLES = {
  EscrowSettingsPut: { escrow_policy: "seller_choice", escrow_default_preset: "shipping", escrow_arbiter_evm: "0x000000000000000000000000000000000000dEaD" },
};

const seconds: Schema = { type: "integer", minimum: 3600 };

export function escrowResponseSchemas(): Record<string, Schema> {
  const windows = object(
    { settle_window: seconds, hold_window: seconds, backstop_window: seconds },
    { closed: true, description: "Seconds: settle from the deposit, hold from the buyer's hold, backstop from the escalation" },
  );
  const settingsProperties: Record<string, Schema> = {
    object: { const: "escrow_settings" },
    escrow_policy: { enum: [...ESCROW_POLICY_VALUES] },
    escrow_default_preset: { enum: [...ESCROW_PRESET_VALUES] },
    escrow_arbiter_evm: { ...strOrNull, description: "The arbiter on Base (checksummed); null: none" },
    escrow_arbiter_svm: { ...strOrNull, description: "The arbiter on Solana (base58); null: none" },
    updated_at: { ...timestampOrNull, description: "null while the account never changed its settings (the defaults)" },
    presets: object(Object.fromEntries(ESCROW_PRESET_VALUES.map((p) => [p, windows])), { closed: true, description: "Each preset's windows" }),
    note: str,
  };
  const readiness = object(
    {
      evm: {
        ...orNull(
          object(
            {
              arbiter: str,
              escrow_offered: { const: true },
              network: { ...orNull(caip2), description: "The network the balance was read on; null when this deployment reads none" },
              gas_balance: {
                ...orNull({ type: "string", pattern: "^[0-9]+$" }),
                description: "The arbiter's native (ETH) balance in wei; null when it could not be read",
              },
              rulings_affordable: {
                ...orNull({ type: "integer", minimum: 0 }),
                description: "How many rulings that balance pays gas for at the current gas price; null when not read",
              },
              note: str,
            },
            { closed: true },
          ),
        ),
        description: "null: no EVM arbiter named",
      },
      svm: {
        ...orNull(object({ arbiter: str, escrow_offered: { const: false }, rulings_use_service_gas: { const: true }, note: str }, { closed: true })),
        description: "null: no Solana arbiter named",
      },
    },
    { closed: true, description: "Each chain family's readiness to rule" },
  );
  return {
    EscrowSettings: object(
      {
        ...settingsProperties,
        changed: { ...bool, description: "PUT only: false when the settings already were these (nothing recorded)" },
        readiness: { ...ref("ArbiterReadiness"), description: "PUT: when the arbiters changed; GET: never (see /v1/account/escrow/readiness)" },
        custody_note: str,
      },
      { closed: true, optional: ["changed", "readiness", "custody_note"], description: "The account's escrow settings, copied by escrow checkouts at create" },
    ),
    ArbiterReadiness: readiness,
    EscrowReadiness: object(
      { object: { const: "escrow_readiness" }, readiness: ref("ArbiterReadiness"), custody_note: str },
      { closed: true, description: "Whether each arbiter can rule" },
    ),
  };
}

export function escrowPaths(k: EscrowOperationKit): Record<string, Record<string, unknown>> {
  return {
    "/v1/account/escrow": {
      get: k.operation(
        {
          operationId: "getEscrowSettings",
          summary: "The account's escrow settings",
          description:
            "Any seller credential. An account that never set them has the defaults: escrow_policy seller_choice, escrow_default_preset standard, no arbiters.",
          responses: { "200": k.json("The escrow settings", ref("EscrowSettings")) },
        },
        k.authenticated("read_only"),
      ),
      put: k.operation(
        {
          operationId: "putEscrowSettings",
          summary: "Change the account's escrow settings (scope full)",
          description:
            'Each field named is set; a field left out keeps its value; an arbiter null removes it. Arbiters are checked per chain family (EVM: 0x and 40 hex digits, a mixed-case one with a valid EIP-55 checksum, stored checksummed; Solana: base58 of 32 bytes; the zero keys refused): 422 naming the field. `arbiter: "payouts"` copies the standing Base and Solana payout wallets as the arbiters (a snapshot; 422 when the account has neither). A change of arbiters answers their `readiness`. Escrow checkouts copy the settings at create, never following them later. A change is recorded as one `escrow_settings.updated` account event.',
          requestBody: k.body("EscrowSettingsPut"),
          responses: { "200": k.json("The settings now", ref("EscrowSettings")) },
        },
        k.authenticated("full"),
        k.bodyProblems,
      ),
    },
    "/v1/account/escrow/readiness": {
      get: k.operation(
        {
          operationId: "getEscrowReadiness",
          summary: "Whether each arbiter can rule",
          description:
            "Per chain family: null where no arbiter is named. EVM: the arbiter's gas balance on the live network, read now, and how many rulings it pays gas for at the current gas price (null when this deployment reads no network or the network did not answer; the note says which); Solana: rulings use the service's gas (no Solana escrow rail is offered here). With the custody note.",
          responses: { "200": k.json("The readiness", ref("EscrowReadiness")) },
        },
        k.authenticated("read_only"),
      ),
    },
  };
}
