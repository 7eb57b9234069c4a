import type { Cache } from "@c402/cache";
import type { Request, Response } from "express";
import { countAgainst } from "./rate-limit";

/**
 * How often reports may be filed (docs/decisions.md, Report rate limits), in
 * fixed one-hour windows shared by every gateway replica through the cache.
 * A report naming a receipt (a buyer report) is counted per receipt and,
 * loosely, per client address; an anonymous one is counted per client address
 * and per address and checkout, harder, as the spec asks.
 */
export const REPORT_LIMITS = {
  windowSeconds: 3_600,
  anonymousPerAddress: 20,
  anonymousPerAddressAndCheckout: 5,
  buyerPerAddress: 60,
  buyerPerReceipt: 20,
} as const;

export type ReportLimitSettings = { readonly [K in keyof typeof REPORT_LIMITS]: number };

export class ReportLimits {
  constructor(
    private readonly cache: Cache,
    private readonly limits: ReportLimitSettings = REPORT_LIMITS,
  ) {}

  private count(res: Response, name: string, limit: number, key: string): Promise<void> {
    return countAgainst(this.cache, res, { name, limit, windowSeconds: this.limits.windowSeconds }, key);
  }

  /**
   * Counts one report, widest counter first (so a flood of distinct
   * checkouts or receipts is stopped before it opens a counter for each);
   * 429 with Retry-After once one is over its limit.
   */
  async admit(req: Request, res: Response, report: { checkoutId: string; receiptId?: string | undefined }): Promise<void> {
    const address = req.ip ?? "unknown";
    if (report.receiptId === undefined) {
      await this.count(res, "report-anonymous", this.limits.anonymousPerAddress, address);
      await this.count(res, "report-anonymous-checkout", this.limits.anonymousPerAddressAndCheckout, `${address}|${report.checkoutId}`);
    } else {
      await this.count(res, "report-buyer", this.limits.buyerPerAddress, address);
      await this.count(res, "report-receipt", this.limits.buyerPerReceipt, report.receiptId);
    }
  }
}
