import { PAYOUT_CHAINS } from "@c402/chain-addresses";
import { bool, object, orNull, ref, str, type Schema } from "./openapi-schema";

/**
 * The payout operations and shapes of the OpenAPI document (openapi.ts merges
 * them in and hands over its operation helpers, as for openapi-reports.ts).
 */

type Part = Record<string, unknown> & { responses: Record<string, unknown> };

export interface PayoutOperationKit {
  operation: (op: Part, ...shared: Part[]) => unknown;
  authenticated: (minimumScope: "read_only" | "payments" | "full") => Part;
  bodyProblems: Part;
  use: (name: "NotFound" | "Conflict" | "InvalidOrPayoutAccountMissing" | "Unavailable") => unknown;
  json: (description: string, schema: Schema) => unknown;
  body: (name: "PayoutWalletsPut" | "CheckoutPayoutAdd") => unknown;
  checkoutId: unknown;
}

/** Request bodies a client could send as they are. */
export const PAYOUT_EXAMPLES = {
  PayoutWalletsPut: { base: "0x000000000000000000000000000000000000dEaD", solana: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" },
  CheckoutPayoutAdd: { chain: "stellar", address: "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H" },
};

const chain: Schema = { enum: [...PAYOUT_CHAINS], description: "The chain family: base (EVM), solana or stellar" };
const offered: Schema = {
  type: "boolean",
  description: "Whether checkout faces offer this chain to buyers in this build (each where the deployment settles it)",
};

export function payoutResponseSchemas(): Record<string, Schema> {
  const perChain = (schema: Schema) => object(Object.fromEntries(PAYOUT_CHAINS.map((c) => [c, schema])), { closed: true });
  const walletsProperties = {
    wallets: {
      ...perChain(orNull(ref("StandingPayoutWallet"))),
      description: "The standing wallet of each chain (null: none), which a checkout copies when pay_to is omitted",
    },
    verified_wallets: {
      type: "array",
      items: object({ chain, address: str }, { closed: true }),
      description: "Wallets a sign-in verified: a PUT never removes them, and one stands again for its chain when a PUT names none",
    },
    note: str,
  };
  const change: Schema = { enum: ["added", "replaced", "removed", "unchanged", "none"] };
  return {
    StandingPayoutWallet: object({ address: { type: "string", minLength: 1 }, verified: bool, offered }, { closed: true }),
    PayoutWallets: object({ object: { const: "payout_wallets" }, ...walletsProperties }, { closed: true, description: "The account's payout wallets" }),
    PayoutWalletsChange: object(
      {
        object: { enum: ["payout_wallets", "payout_wallets_preview"] },
        ...walletsProperties,
        changed: { type: "boolean", description: "false when the standing set already was this one (nothing written or recorded)" },
        changes: { ...perChain(change), description: "What happened (or, previewed, would happen) to each chain's standing wallet" },
      },
      { closed: true, description: "The wallets after a PUT (object payout_wallets), or as a PUT would leave them (payout_wallets_preview; nothing written)" },
    ),
    PayoutRail: object(
      { chain, address: { type: "string", minLength: 1 }, offered },
      { closed: true, description: "Where the checkout pays out on one chain" },
    ),
  };
}

export function payoutPaths(k: PayoutOperationKit): Record<string, Record<string, unknown>> {
  const rules =
    "Addresses are checked per chain: base an EVM address (a mixed-case one must carry a valid EIP-55 checksum; stored checksummed), solana base58 decoding to 32 bytes, stellar a G… strkey with a valid checksum; the zero key of each chain is refused. A bad address answers 422 naming its chain.";
  return {
    "/v1/account/wallets": {
      get: k.operation(
        {
          operationId: "getPayoutWallets",
          summary: "The account's payout wallets: the standing one per chain, and the sign-in wallets",
          responses: { "200": k.json("The payout wallets", ref("PayoutWallets")) },
        },
        k.authenticated("read_only"),
      ),
      put: k.operation(
        {
          operationId: "putPayoutWallets",
          summary: "Replace the standing payout wallets, one per chain (scope full)",
          description: `The body is the whole standing set: a chain left out (or null) has no standing wallet, except that a wallet a sign-in verified is never removed and stands again for its chain. A new address is stored unverified (nothing proves who controls it; it only receives). Checkouts created afterwards with pay_to omitted copy the set; existing checkouts keep theirs. ${rules} A change is recorded as one \`wallets.updated\` account event; the same set again records none. OAuth tokens (capped at payments) will get 403 here.`,
          requestBody: k.body("PayoutWalletsPut"),
          responses: { "200": k.json("The wallets now", ref("PayoutWalletsChange")) },
        },
        k.authenticated("full"),
        k.bodyProblems,
      ),
    },
    "/v1/account/wallets/preview": {
      post: k.operation(
        {
          operationId: "previewPayoutWallets",
          summary: "What PUT /v1/account/wallets would store for this body; writes nothing",
          description: `The same body and checks as the PUT (a preview that answers 200 means the PUT would be accepted), answering the normalised addresses and what would change per chain. ${rules}`,
          requestBody: k.body("PayoutWalletsPut"),
          responses: { "200": k.json("The wallets as the PUT would leave them", ref("PayoutWalletsChange")) },
        },
        k.authenticated("read_only"),
        k.bodyProblems,
      ),
    },
    "/v1/checkouts/{id}/payouts": {
      post: k.operation(
        {
          operationId: "addCheckoutPayout",
          summary: "Add a payout rail for a chain the checkout has none for (additive only)",
          description:
            "Both faces read the same rails (the test face gains it too). A chain that already has an address (base always has pay_to) answers 409, as does a void checkout; an address its chain refuses answers 422 naming `address`. Recorded as a `checkout.payouts_added` account event. A rail is quoted to buyers where the deployment settles its chain.",
          parameters: [k.checkoutId],
          requestBody: k.body("CheckoutPayoutAdd"),
          responses: {
            "200": k.json("The checkout with its rails", ref("Checkout")),
            "404": k.use("NotFound"),
            "409": k.use("Conflict"),
            "422": k.use("InvalidOrPayoutAccountMissing"),
            "503": k.use("Unavailable"),
          },
        },
        k.authenticated("payments"),
        k.bodyProblems,
      ),
    },
  };
}
