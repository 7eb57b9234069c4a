import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogV1, contentGrantsV1 } from "@c402/contracts";
import { isId } from "@c402/ids";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { secondsUntil, type PassFields } from "../faces/article-passes";
import { ensureScope, type Credential } from "../http/auth";
import type { GatewayDeps } from "../http/deps";
import { validateBody } from "../http/validate";
import { articleDeclarationOf, contentView, snippetView } from "../views/content";
import type { CheckoutOperations } from "./checkouts";

/** The longest pass the seller API issues (spec: ttl_seconds at most 31 days). */
export const SELLER_PASS_MAX_SECONDS = 31 * 24 * 3_600;
/** POST /v1/grants' default lifetime (spec: 24 hours). */
const SELLER_PASS_DEFAULT_SECONDS = 24 * 3_600;

const noArticle = () => new ProblemError("not-found", "No such article.");

/**
 * What a seller's credential does with its gated articles, whatever the door:
 * the REST routes (/v1/content, /v1/grants) and the MCP tools (get_content,
 * update_content, get_content_snippet, issue_content_grant) run these.
 */
export class ContentOperations {
  constructor(
    private readonly deps: Pick<GatewayDeps, "clients" | "settings">,
    private readonly checkouts: CheckoutOperations,
  ) {}

  /** GET /v1/content/{id}, get_content: the article as written plus the full declaration (the owner's only). */
  async get(cred: Credential, id: string) {
    ensureScope(cred, "read_only");
    return contentView(await this.owned(cred, id), this.deps.settings.baseUrl);
  }

  /** update_content: PATCH /v1/checkouts/{id} on an article (body, declaration, offer card), answered as get_content. */
  async update(cred: Credential, id: string, raw: unknown) {
    ensureScope(cred, "payments");
    if (!isId("contentCheckout", id)) throw noArticle();
    return contentView(await this.checkouts.update(cred, id, raw), this.deps.settings.baseUrl);
  }

  /** GET /x/{id}/snippet, get_content_snippet: public (what a seller pastes into its own page). */
  async snippet(id: string) {
    if (!isId("contentCheckout", id)) throw noArticle();
    const checkout = answered((await this.deps.clients.catalog.getCheckout({ checkoutId: id })).checkout, "checkout");
    if (checkout.status === catalogV1.CheckoutStatus.VOID) throw new ProblemError("gone", "This article was withdrawn by its seller.");
    return snippetView(checkout, this.deps.settings.baseUrl);
  }

  /**
   * POST /v1/content/{id}/grants, issue_content_grant: a pass to this article
   * (scope content) or to every article of the account (scope seller, the
   * default); ttl defaults to the article's pass_hours, capped at 31 days.
   */
  async grantForContent(cred: Credential, id: string, raw: unknown): Promise<PassFields> {
    ensureScope(cred, "payments");
    const body = validateBody("ContentGrantCreate", raw);
    const checkout = await this.owned(cred, id);
    const hours = articleDeclarationOf(checkout).pass_hours;
    const ttl = body.ttl_seconds ?? Math.min(hours * 3_600, SELLER_PASS_MAX_SECONDS);
    return this.issue(cred, { scope: body.scope ?? "seller", contentId: checkout.id, subject: body.subject, ttl, uses: body.uses });
  }

  /** POST /v1/grants: a pass to every article the account gates. */
  async grantForSeller(cred: Credential, raw: unknown): Promise<PassFields> {
    ensureScope(cred, "payments");
    const body = validateBody("GrantCreate", raw);
    return this.issue(cred, { scope: "seller", subject: body.subject, ttl: body.ttl_seconds ?? SELLER_PASS_DEFAULT_SECONDS, uses: body.uses });
  }

  /**
   * A seller's pass, recorded as a pass.issued account event. A pass issued
   * with a test key opens rehearsal faces only, as a rehearsal purchase's does.
   */
  private async issue(
    cred: Credential,
    p: { scope: "seller" | "content"; contentId?: string; subject: string; ttl: number; uses: number | undefined },
  ): Promise<PassFields> {
    const r = await this.deps.clients.contentGrants.issuePass({
      accountId: cred.accountId,
      scope: p.scope === "content" ? contentGrantsV1.PassScope.CONTENT : contentGrantsV1.PassScope.SELLER,
      ...(p.contentId !== undefined ? { contentId: p.contentId } : {}),
      subject: p.subject,
      expiresAt: timestampFromDate(new Date(Date.now() + p.ttl * 1000)),
      ...(p.uses !== undefined ? { uses: p.uses } : {}),
      rehearsal: cred.mode === "test",
      actor: cred.actor,
    });
    const expiresAt = r.expiresAt ? timestampDate(r.expiresAt) : new Date(Date.now() + p.ttl * 1000);
    return { grant: r.pass, grant_scope: p.scope, grant_expires_in: secondsUntil(expiresAt) };
  }

  /** One of the account's articles: a chk_ or esc_ id, or another seller's article, is 404. */
  private async owned(cred: Credential, id: string): Promise<catalogV1.Checkout> {
    if (!isId("contentCheckout", id)) throw noArticle();
    const r = await this.deps.clients.catalog.getCheckout({ checkoutId: id, accountId: cred.accountId });
    return answered(r.checkout, "checkout");
  }
}
