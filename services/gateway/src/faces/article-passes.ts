import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { contentGrantsV1, type catalogV1, type paymentsV1 } from "@c402/contracts";
import type { ServiceClients } from "../http/deps";
import type { ContentDeclaration } from "@c402/contracts";
import { isRehearsalFace } from "./article-rehearsals";
import type { Face } from "./face";

/** The pass fields a purchase (or a seller) is answered with (spec, Grant). */
export interface PassFields {
  grant: string | null;
  grant_scope: "seller" | "content";
  grant_expires_in: number;
}

/** Why a pass does not open an article, in words a reader can act on. */
const NOT_A_PASS = "This is not a pass.";
const REFUSALS: Record<string, string> = {
  malformed: NOT_A_PASS,
  signature: "This pass was not issued by this service (or its signing key was retired).",
  expired: "This pass has expired; pay again for a new one.",
  other_seller: "This pass was issued for another seller's articles.",
  other_content: "This pass opens another article only.",
  rehearsal_pass: "A pass from a rehearsal (or issued with a test key) opens rehearsal faces only (/x/{id}/test).",
  used_up: "This pass has opened all the reads it was issued for.",
};

/** The longest text CheckPass takes (content_grants.proto). */
const PASS_MAX_CHARS = 4_096;

export const secondsUntil = (at: Date, now = Date.now()) => Math.max(0, Math.floor((at.getTime() - now) / 1000));

/**
 * Passes to gated articles: content-grants signs and checks them (its keys
 * never leave it); here, the pass a purchase answers and the check of one read.
 */
export class ArticlePasses {
  constructor(private readonly clients: Pick<ServiceClients, "contentGrants">) {}

  /**
   * The pass of a settled purchase: the buyer's subject, the article's pass
   * terms, valid pass_hours from settlement (a redelivery answers a pass that
   * ends when the first one does; after that, none). A rehearsal's pass opens
   * rehearsal faces only.
   */
  async ofPurchase(checkout: catalogV1.Checkout, content: ContentDeclaration, receipt: paymentsV1.Receipt): Promise<PassFields> {
    const settledAt = receipt.settledAt ? timestampDate(receipt.settledAt) : new Date();
    const expiresAt = new Date(settledAt.getTime() + content.pass_hours * 3_600_000);
    if (secondsUntil(expiresAt) < 1) return { grant: null, grant_scope: content.pass_scope, grant_expires_in: 0 };
    const r = await this.clients.contentGrants.issuePass({
      accountId: checkout.accountId,
      scope: content.pass_scope === "content" ? contentGrantsV1.PassScope.CONTENT : contentGrantsV1.PassScope.SELLER,
      contentId: checkout.id,
      subject: receipt.subject,
      expiresAt: timestampFromDate(expiresAt),
      rehearsal: receipt.testMode,
    });
    return { grant: r.pass, grant_scope: content.pass_scope, grant_expires_in: secondsUntil(r.expiresAt ? timestampDate(r.expiresAt) : expiresAt) };
  }

  /** Gives back the read a limited pass counted when the seller's origin then failed it. */
  async giveBack(pass: string, checkout: catalogV1.Checkout): Promise<void> {
    await this.clients.contentGrants.returnPassUse({ pass, accountId: checkout.accountId });
  }

  /** Whether `pass` opens this article on this face now (a limited pass counts the read). */
  async check(
    pass: string,
    checkout: catalogV1.Checkout,
    face: Face,
  ): Promise<{ valid: true; usesLeft?: number; expiresIn?: number } | { valid: false; reason: string; message: string }> {
    // No pass is this long (content-grants bounds what it checks): refused here without asking.
    if (pass.length > PASS_MAX_CHARS) return { valid: false, reason: "malformed", message: NOT_A_PASS };
    const r = await this.clients.contentGrants.checkPass({
      pass,
      accountId: checkout.accountId,
      contentId: checkout.id,
      rehearsalFace: isRehearsalFace(checkout, face),
    });
    if (!r.valid) return { valid: false, reason: r.reason, message: REFUSALS[r.reason] ?? "This pass does not open this article." };
    return {
      valid: true,
      ...(r.usesLeft !== undefined ? { usesLeft: r.usesLeft } : {}),
      ...(r.expiresAt ? { expiresIn: secondsUntil(timestampDate(r.expiresAt)) } : {}),
    };
  }
}
