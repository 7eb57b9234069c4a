import { ESCROW_POLICY_VALUES, ESCROW_PRESET_VALUES } from "../http/escrow-schemas";
import { bool, caip2, idOf, object, orNull, ref, str, strOrNull, timestamp, timestampOrNull, url, type Schema } from "./openapi-schema";

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
  use: (name: "NotFound" | "Conflict" | "InvalidRequest" | "Unavailable") => unknown;
  json: (description: string, schema: Schema) => unknown;
  body: (name: "EscrowSettingsPut" | "EscrowActionSubmit") => unknown;
  pathParam: (name: string, schema: Schema, description?: string) => unknown;
  pageQuery: unknown[];
}

/** Request bodies a client could send as they are. */
export const ESCROW_EXAMPLES = {
  EscrowActionSubmit: { v: 27, r: `0x${"1".repeat(64)}`, s: `0x${"2".repeat(64)}`, deadline: 1_900_000_000 },
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
  const address: Schema = { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" };
  const hex32: Schema = { type: "string", pattern: "^0x[0-9a-fA-F]{64}$" };
  const units: Schema = { type: "integer", minimum: 0, description: "USDC atomic units" };
  const state = { enum: ["held", "on_hold", "escalated", "released", "refunded"] };
  const summaryProperties = {
    object: { const: "escrow" },
    payment_id: idOf("pay"),
    checkout_id: idOf("esc"),
    status: state,
    network: caip2,
    buyer: orNull(address),
    total: { ...units, description: "What the buyer deposited (price and escrow fee), USDC atomic units" },
    deadline: { ...timestampOrNull, description: "When the next timed exit opens (release, or the backstop refund); null in a final state" },
    next_step: { type: "string", minLength: 1, description: "What happens next (or what happened), in words" },
    test_mode: bool,
    created_at: timestamp,
    status_url: url,
  };
  const summary = object(summaryProperties, { closed: true, description: "An escrow as a list shows it" });
  const transaction = object(
    {
      family: { const: "evm" },
      network: caip2,
      chain_id: { type: "integer", minimum: 1 },
      from_: { ...orNull(address), description: "The wallet that must sign it; null when anyone may send it" },
      to: address,
      data: { type: "string", pattern: "^0x[0-9a-fA-F]*$" },
      value: { type: "string", pattern: "^[0-9]+$" },
    },
    { closed: true, description: "An unsigned EVM transaction" },
  );
  return {
    EscrowSummary: summary,
    Escrow: object(
      {
        ...summaryProperties,
        contract: { ...address, description: "The escrow contract holding the deposit" },
        escrow_id: { ...hex32, description: "The contract's id of the escrow: the EIP-712 hash of its terms" },
        seller: orNull(address),
        arbiter: orNull(address),
        amount: { ...units, description: "The seller's share" },
        platform_amount: { ...units, description: "The platform's cut (0: none)" },
        fee: { ...units, description: "The escrow fee (1% + $0.02)" },
        preset: { enum: ["instant", "standard", "shipping", "custom", null] },
        settle_window: orNull(seconds),
        hold_window: orNull(seconds),
        backstop_window: orNull(seconds),
        handoff_id: strOrNull,
        deposit_tx_hash: orNull(hex32),
        close_tx_hash: { ...orNull(hex32), description: "The release or refund; null while open (or for a rehearsal)" },
        closed_by: { enum: ["approve", "settle_window", "hold_window", "ruling", "cancel", "backstop", null] },
        deposited_at: timestampOrNull,
        on_hold_at: timestampOrNull,
        escalated_at: timestampOrNull,
        closed_at: timestampOrNull,
        gasless: { ...bool, description: "Actions can be relayed on the service's gas (/submit)" },
        receipt_url: { ...orNull(url), description: "Once released: the receipt" },
      },
      { closed: true, description: "One escrow: its terms as frozen in the buyer's signature, where it stands and its transactions" },
    ),
    EscrowList: object({ escrows: { type: "array", items: summary }, has_more: bool, next_cursor: strOrNull }, { closed: true }),
    EscrowAction: object(
      {
        object: { const: "escrow_action" },
        action: { enum: ["hold", "approve", "request-refund", "cancel"] },
        payment_id: orNull(idOf("pay")),
        signer: { ...address, description: "The wallet whose signature the contract accepts: the buyer's, the seller's for cancel" },
        typed_data: {
          type: "object",
          required: ["domain", "types", "primaryType", "message"],
          description: "EIP-712 typed data to sign (eth_signTypedData_v4)",
        },
        deadline: { type: "integer", description: "The signature's deadline, unix seconds (inside the typed data)" },
        transaction: {
          ...orNull(transaction),
          description:
            "To send it from one's own wallet instead: submitAction(escrowId, action, deadline, v, r, s), the signature's v, r, s in the data's last three words",
        },
        gasless: bool,
        submit_url: { ...orNull(url), description: "Where to send the signature for a relayed submission (POST {v, r, s, deadline})" },
        escrow: orNull(summary),
      },
      { closed: true, description: "What to sign to act on an escrow" },
    ),
    EscrowSubmission: object(
      {
        object: { const: "escrow_submission" },
        tx_hash: { ...orNull(hex32), description: "The relayed transaction; null for a rehearsal escrow" },
        pending: { ...bool, description: "Sent, not confirmed yet: the status URL shows the outcome" },
        replayed: { ...bool, description: "This signed action was submitted before; its outcome is answered" },
        escrow: orNull(summary),
      },
      { closed: true, description: "A relayed escrow action" },
    ),
    EscrowRuling: object(
      {
        object: { const: "escrow_ruling" },
        to_seller: bool,
        ...(transaction.properties as Record<string, Schema>),
        note: str,
        escrow: orNull(summary),
      },
      { closed: true, description: "The arbiter's unsigned ruling: sign with the wallet in from_ and broadcast it" },
    ),
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
  const PAYMENT_PARAM = k.pathParam("payment_id", { type: "string", pattern: "^pay_[0-9A-Za-z]{24}$" }, "The escrow's payment id");
  const TO_SELLER = {
    name: "to_seller",
    in: "query",
    required: true,
    schema: { enum: ["true", "false"] },
    description: "true pays the seller, false refunds the buyer",
  };
  const ESCROW_CHECKOUT_PARAM = k.pathParam("id", idOf("esc"), "The escrow checkout");
  const ACTION_PARAM = k.pathParam("action", { enum: ["hold", "approve", "request-refund", "cancel"] }, "The action");
  const PAYMENT_QUERY = { name: "payment_id", in: "query", required: true, schema: idOf("pay"), description: "The escrow's payment id" };
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
    "/v1/escrows": {
      get: k.operation(
        {
          operationId: "listEscrows",
          summary: "The account's escrows, newest first",
          description:
            "Any seller credential. `status` keeps the escrows in one open state; without it every escrow is listed (released and refunded ones too).",
          parameters: [
            { name: "status", in: "query", required: false, schema: { enum: ["held", "on_hold", "escalated"] }, description: "Only escrows in this state" },
            ...k.pageQuery,
          ],
          responses: { "200": k.json("A page of escrows", ref("EscrowList")), "422": k.use("InvalidRequest") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/escrows/{payment_id}": {
      get: k.operation(
        {
          operationId: "getEscrow",
          summary: "One escrow",
          description: "Another account's escrow (or an unknown id) is 404.",
          parameters: [PAYMENT_PARAM],
          responses: { "200": k.json("The escrow", ref("Escrow")), "404": k.use("NotFound") },
        },
        k.authenticated("read_only"),
      ),
    },
    "/v1/escrows/{payment_id}/resolve": {
      post: k.operation(
        {
          operationId: "resolveEscrow",
          summary: "The arbiter's unsigned ruling",
          description:
            "For an escalated escrow: the UNSIGNED transaction `rule(escrowId, to_seller)` for the arbiter wallet named in `from_`, which signs and broadcasts it (and pays its gas); the service holds no arbiter key. The escrow follows the chain once it is mined. An escrow not escalated is 409.",
          parameters: [PAYMENT_PARAM, TO_SELLER],
          responses: {
            "200": k.json("The ruling to sign", ref("EscrowRuling")),
            "404": k.use("NotFound"),
            "409": k.use("Conflict"),
            "422": k.use("InvalidRequest"),
          },
        },
        k.authenticated("payments"),
      ),
    },
    "/v1/escrows/{payment_id}/resolve/submit": {
      post: k.operation(
        {
          operationId: "resolveEscrowSubmit",
          summary: "Broadcast a ruling on the service's gas (Solana only)",
          description:
            "Solana escrows only; this deployment offers escrow on Base alone (ADR 19), where the arbiter broadcasts its own ruling: every escrow answers 409 naming /resolve.",
          parameters: [PAYMENT_PARAM, TO_SELLER],
          responses: { "404": k.use("NotFound"), "409": k.use("Conflict"), "422": k.use("InvalidRequest") },
        },
        k.authenticated("payments"),
      ),
    },
    "/e/{id}/actions/{action}": {
      post: k.operation({
        operationId: "prepareEscrowAction",
        summary: "What to sign to act on an escrow (no credential)",
        description:
          "hold, approve and request-refund are the buyer's; cancel is the seller's. Answers the EIP-712 typed data with the escrow's next action nonce and a deadline, the wallet that must sign it, and the transaction that sends it from one's own wallet. An action the escrow's state does not allow is 409 naming the state.",
        parameters: [ESCROW_CHECKOUT_PARAM, ACTION_PARAM, PAYMENT_QUERY],
        responses: {
          "200": k.json("The action to sign", ref("EscrowAction")),
          "404": k.use("NotFound"),
          "409": k.use("Conflict"),
          "422": k.use("InvalidRequest"),
        },
      }),
    },
    "/e/{id}/actions/{action}/submit": {
      post: k.operation(
        {
          operationId: "submitEscrowAction",
          summary: "Relay a signed escrow action on the service's gas (no credential)",
          description:
            "The signature of the typed data the action answered, as v, r, s, and its deadline. The service checks that it recovers to the wallet the action needs, records it, then sends it once (a repeat answers the same transaction, `replayed` true). The escrow follows the chain.",
          parameters: [ESCROW_CHECKOUT_PARAM, ACTION_PARAM, PAYMENT_QUERY],
          requestBody: k.body("EscrowActionSubmit"),
          responses: {
            "200": k.json("The relayed action", ref("EscrowSubmission")),
            "404": k.use("NotFound"),
            "409": k.use("Conflict"),
            "503": k.use("Unavailable"),
          },
        },
        k.bodyProblems,
      ),
    },
  };
}
