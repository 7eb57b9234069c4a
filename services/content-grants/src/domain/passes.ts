import { accountActivityRow, type Actor } from "@c402/account-events";
import { enqueueOutboxRow } from "@c402/bus";
import { isId, randomBase62 } from "@c402/ids";
import { invalid } from "@c402/problems";
import type { TokenTagger } from "@c402/sealed-secrets";
import { passStore as store, type ContentGrantsDb } from "../store/pass-store";

/**
 * Gated-content passes (spec, Grant): a signed string, not a database row,
 * so checking one needs no query. `gp1.<key id>.<claims>.<tag>`: the claims
 * are base64url JSON, the tag their HMAC-SHA256 under the GRANT_KEYRING key
 * the id names (rotation: docs/decisions.md "Gated content"). Only a pass
 * with a use limit has a row, counting its reads (pass_uses).
 */
export type PassScope = "seller" | "content";

interface Claims {
  /** The seller's account: a pass never opens another seller's articles. */
  a: string;
  s: PassScope;
  /** The article: the one it opens (scope content), or the one it was bought for. */
  c?: string;
  sub: string;
  /** Issued and expiry instants, in seconds. */
  iat: number;
  exp: number;
  /** Reads it opens; absent: no limit. */
  u?: number;
  /** The pass's own id (its use count's key). */
  j: string;
  /** Minted by a rehearsal: opens rehearsal faces only. */
  r?: true;
}

export const PASS_LIMITS = {
  /** The most a pass may live: a purchase's pass_hours go up to 8760 (a year); the seller API's ttl_seconds to 31 days (the gateway's bound). */
  lifetimeMaxSeconds: 8_760 * 3_600,
  usesMax: 1_000_000,
  subjectMax: 200,
  textMax: 4_096,
};

const PREFIX = "gp1";
const B64URL = /^[A-Za-z0-9_-]+$/;

export interface IssuePass {
  accountId: string;
  scope: PassScope;
  contentId?: string;
  subject: string;
  expiresAt: Date;
  uses?: number;
  rehearsal: boolean;
  /** Set for a seller's pass: recorded as a pass.issued account event. */
  actor?: Actor;
}

export type PassCheck =
  | { valid: true; expiresAt: Date; usesLeft?: number }
  | { valid: false; reason: "malformed" | "signature" | "expired" | "other_seller" | "other_content" | "rehearsal_pass" | "used_up"; expiresAt?: Date };

export class Passes {
  constructor(
    private readonly db: ContentGrantsDb,
    private readonly tagger: TokenTagger,
    private readonly now: () => Date = () => new Date(),
    /** Told when an account event was written to the outbox (the relay publishes it now rather than at its next poll). */
    private readonly onOutbox: () => void = () => {},
  ) {}

  async issue(req: IssuePass): Promise<{ pass: string; scope: PassScope; expiresAt: Date }> {
    const now = this.now();
    const lifetime = (req.expiresAt.getTime() - now.getTime()) / 1000;
    const errors = [];
    // The caller computed the instant a moment ago: any time ahead is a lifetime; at most a year (and a minute of clock skew).
    if (!(lifetime > 0 && lifetime <= PASS_LIMITS.lifetimeMaxSeconds + 60)) errors.push({ field: "expires_at", reason: "must be ahead, at most a year" });
    if (req.contentId !== undefined && !isId("contentCheckout", req.contentId)) errors.push({ field: "content_id", reason: "must be a cnt_ id" });
    if (req.scope === "content" && req.contentId === undefined) errors.push({ field: "content_id", reason: "is required for a content pass" });
    if (req.subject.length < 1 || req.subject.length > PASS_LIMITS.subjectMax)
      errors.push({ field: "subject", reason: `must be 1 to ${PASS_LIMITS.subjectMax} characters` });
    if (req.uses !== undefined && !(Number.isInteger(req.uses) && req.uses >= 1 && req.uses <= PASS_LIMITS.usesMax)) {
      errors.push({ field: "uses", reason: `must be an integer from 1 to ${PASS_LIMITS.usesMax}` });
    }
    if (errors.length) throw invalid(errors);
    const claims: Claims = {
      a: req.accountId,
      s: req.scope,
      ...(req.contentId !== undefined ? { c: req.contentId } : {}),
      sub: req.subject,
      iat: Math.floor(now.getTime() / 1000),
      // Rounded up: a pass never ends before the instant it was asked to last until.
      exp: Math.ceil(req.expiresAt.getTime() / 1000),
      ...(req.uses !== undefined ? { u: req.uses } : {}),
      j: randomBase62(22),
      ...(req.rehearsal ? { r: true as const } : {}),
    };
    const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
    const { keyId, tag } = this.tagger.tag(`${PREFIX}.${body}`);
    const pass = `${PREFIX}.${keyId}.${body}.${tag.toString("base64url")}`;
    const expiresAt = new Date(claims.exp * 1000);
    if (req.actor !== undefined) {
      // The record of a seller's pass (subject recorded, never interpreted); the pass itself is never stored.
      await enqueueOutboxRow(
        this.db,
        accountActivityRow({
          accountId: req.accountId,
          action: "pass.issued",
          objectId: claims.j,
          detail: { subject: req.subject, scope: req.scope, content_id: req.contentId ?? null, expires_at: expiresAt.toISOString(), uses: req.uses ?? null },
          actor: req.actor,
          testMode: req.rehearsal,
          at: now,
        }),
      );
      this.onOutbox();
    }
    // Only passes with a use limit ever get a row: issuing one also clears a batch of expired ones (a purchase's pass costs no statement).
    if (req.uses !== undefined) await store.purgeExpired(this.db, now, 100);
    return { pass, scope: req.scope, expiresAt };
  }

  /** Whether `pass` opens the article `contentId` of `accountId` on this face now; a limited pass counts the read. */
  async check(pass: string, article: { accountId: string; contentId: string; rehearsalFace: boolean }): Promise<PassCheck> {
    const claims = this.verified(pass);
    if (!claims) return { valid: false, reason: pass.startsWith(`${PREFIX}.`) ? "signature" : "malformed" };
    const expiresAt = new Date(claims.exp * 1000);
    if (claims.exp * 1000 <= this.now().getTime()) return { valid: false, reason: "expired", expiresAt };
    if (claims.a !== article.accountId) return { valid: false, reason: "other_seller", expiresAt };
    if (claims.s === "content" && claims.c !== article.contentId) return { valid: false, reason: "other_content", expiresAt };
    if (claims.r && !article.rehearsalFace) return { valid: false, reason: "rehearsal_pass", expiresAt };
    if (claims.u === undefined) return { valid: true, expiresAt };
    const used = await store.countUse(this.db, claims.j, claims.u, expiresAt);
    if (used === undefined) return { valid: false, reason: "used_up", expiresAt };
    return { valid: true, expiresAt, usesLeft: claims.u - used };
  }

  /** Gives back the read a limited pass of `accountId` counted (the seller's origin then failed it); false when nothing was counted. */
  async giveBack(pass: string, accountId: string): Promise<boolean> {
    const claims = this.verified(pass);
    if (!claims || claims.a !== accountId || claims.u === undefined) return false;
    return store.returnUse(this.db, claims.j);
  }

  /** The claims of a pass whose tag checks, or undefined. */
  private verified(pass: string): Claims | undefined {
    if (pass.length > PASS_LIMITS.textMax) return undefined;
    const parts = pass.split(".");
    if (parts.length !== 4 || parts[0] !== PREFIX) return undefined;
    const [, keyId = "", body = "", tag = ""] = parts;
    if (!B64URL.test(body) || !B64URL.test(tag) || !this.tagger.matches(keyId, `${PREFIX}.${body}`, Buffer.from(tag, "base64url"))) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Claims;
      return typeof claims.a === "string" && typeof claims.exp === "number" && typeof claims.j === "string" ? claims : undefined;
    } catch {
      return undefined;
    }
  }
}
