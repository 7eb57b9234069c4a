import { ProblemError } from "@c402/problems";
import type { ScopeName } from "@c402/contracts";
import type { Request, Response } from "express";
import type { FacePayments } from "../faces/face-payments";
import type { UnpaidAnswers } from "../faces/unpaid";
import type { Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import type { CheckoutOperations } from "../operations/checkouts";
import type { ContentOperations } from "../operations/content";
import type { EmbedOperations } from "../operations/embed";
import type { EscrowSettingsOperations } from "../operations/escrow-settings";
import type { EscrowOperations } from "../operations/escrows";
import type { ScheduleOperations } from "../operations/schedules";
import type { SpendingWalletOperations } from "../operations/spending-wallets";
import type { ReceiptOperations } from "../operations/receipts";
import type { ReportFiling } from "../operations/reports";

/**
 * A tool of POST /mcp. A seller tool runs the same operation as its REST
 * route (same scope, same validation, same object answered); its arguments'
 * schema is the REST body's, adapted where the spec says so. A buyer tool
 * needs no credential.
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  /** JSON Schema of `arguments`: what tools/list publishes, and what the endpoint validates them against before `run`. */
  inputSchema: { type: "object"; properties: Record<string, unknown>; required?: readonly string[]; additionalProperties: false };
  /** The scope a seller credential needs; absent: a buyer tool, open to anyone. */
  scope?: ScopeName;
  /** `http`: the /mcp request the call came in (a buyer tool's limits count its client address). */
  run(args: Record<string, unknown>, credential: Credential | undefined, http: { req: Request; res: Response }): Promise<object>;
}

/** The operations the tools run: the REST routes' own. */
export interface McpToolDeps {
  deps: Pick<GatewayDeps, "clients" | "settings">;
  checkouts: CheckoutOperations;
  receipts: ReceiptOperations;
  unpaid: UnpaidAnswers;
  payments: FacePayments;
  reports: ReportFiling;
  embeds: EmbedOperations;
  content: ContentOperations;
  escrowSettings: EscrowSettingsOperations;
  escrows: EscrowOperations;
  schedules: ScheduleOperations;
  spendingWallets: SpendingWalletOperations;
}

/** A tool definition: the tool, given the operations it runs. */
export type McpToolDefinition = (ops: McpToolDeps) => McpTool;

/** A seller tool as written: `run` is given the seller's credential. */
type SellerToolSpec = Omit<McpTool, "scope" | "run"> & {
  scope: ScopeName;
  run(args: Record<string, unknown>, seller: Credential, http: { req: Request; res: Response }): Promise<object>;
};

/** A seller tool: its scope makes the endpoint authenticate the call, and it runs for that credential. */
export function sellerTool(spec: SellerToolSpec): McpTool {
  return {
    ...spec,
    async run(args, credential, http) {
      if (!credential) throw new ProblemError("unauthenticated", "This tool needs a seller credential: send Authorization: Bearer <API_KEY or OAuth token>.");
      return spec.run(args, credential, http);
    },
  };
}

/** Tool arguments as the REST query strings they stand for (numbers and booleans as text). */
export const asQuery = (args: Record<string, unknown>): Record<string, string> => Object.fromEntries(Object.entries(args).map(([k, v]) => [k, String(v)]));

export const noArguments = { type: "object", additionalProperties: false, properties: {} } as const;

/** A list tool's paging arguments, as the REST list routes' query. */
export const pageProperties = {
  limit: { type: "integer", minimum: 1, maximum: 200, description: "Items per page (default 50)." },
  cursor: { type: "string", maxLength: 512, description: "next_cursor of the previous page." },
} as const;
