import { sha256Hex } from "./stored-secrets";
import { domainToASCII } from "node:url";
import { newId, randomBase62 } from "@c402/ids";
import type { Logger } from "@c402/logging";
import { isPlausibleAddress, type Mailer } from "@c402/mailer";
import { invalid, ProblemError } from "@c402/problems";
import type { IdentityDb } from "../store/identity-store";
import { magicLinkStore as store } from "../store/magic-link-store";
import { recordActivity } from "./account-events";
import { openSession, type OpenedSession } from "./sessions";

/**
 * Magic-link sign-in (spec, Authentication rule 6): an address asks for a
 * link, the link is mailed, following it (or posting its token) opens a
 * browser session. The first verify of an address creates its account, the
 * same kind of account a wallet sign-in creates.
 *
 * - A link works once and for MAGIC_LINK_TTL_SECONDS; only the SHA-256 of its
 *   token is stored (the token has ~256 bits, so a slow hash adds nothing).
 * - A request is answered the same whether or not the address has an
 *   account: the mail goes out either way (to a new address it is the
 *   sign-up), and no account is looked up before the verify.
 * - `return_to` is a path on this site or nothing (no open redirect).
 */
export const MAGIC_LINK_TTL_SECONDS = 15 * 60;

/** RFC 5321's bound on a path, which every address accepted must fit. */
export const EMAIL_MAX_LENGTH = 254;
export const RETURN_TO_MAX_LENGTH = 2048;

const TOKEN_PATTERN = /^ml_[0-9A-Za-z]{43}$/;
/** Expired links deleted per request: bounded, and well above the request rate. */
const PURGE_BATCH = 100;

export function mintMagicLinkToken(): { token: string; hash: string } {
  const token = `ml_${randomBase62(43)}`;
  return { token, hash: hashMagicLinkToken(token) };
}

export function hashMagicLinkToken(token: string): string {
  return sha256Hex(token);
}

const EMAIL_REASON = "must be one email address like user@example.com";

/**
 * The address an account is known by: trimmed and lowercased whole (mail
 * systems in use treat the local part case-insensitively, and two accounts
 * for `Ada@` and `ada@` would be worse than the rare system that does not);
 * an internationalised domain becomes its ASCII (punycode) form, so a domain
 * has one spelling. 422 naming `email` for anything but one plain address of
 * at most 254 characters.
 */
export function normaliseEmail(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed.length > EMAIL_MAX_LENGTH) throw invalid([{ field: "email", reason: `must be at most ${EMAIL_MAX_LENGTH} characters` }]);
  const at = trimmed.lastIndexOf("@");
  if (at <= 0 || at === trimmed.length - 1) throw invalid([{ field: "email", reason: EMAIL_REASON }]);
  const domain = domainToASCII(trimmed.slice(at + 1).toLowerCase());
  const address = `${trimmed.slice(0, at).toLowerCase()}@${domain}`;
  if (!domain || !isPlausibleAddress(address)) throw invalid([{ field: "email", reason: EMAIL_REASON }]);
  return address;
}

const ANY_ORIGIN = "http://return-to.invalid";

/**
 * Why `return_to` is refused, or undefined when it is a path on this site:
 * it starts with one `/`, has no backslash (browsers read `/\evil` as
 * `//evil`), no whitespace or control characters (URL parsers strip them,
 * so `/\t/evil` would become `//evil`), and resolves to the same origin
 * whatever the site's is.
 */
export function returnToRefusal(value: string): string | undefined {
  if (value.length > RETURN_TO_MAX_LENGTH) return `must be at most ${RETURN_TO_MAX_LENGTH} characters`;
  if (/[\s\p{Cc}]/u.test(value)) return "must not contain spaces or control characters";
  if (!value.startsWith("/") || value.startsWith("//") || value.includes("\\")) {
    return "must be a path on this site, starting with a single / (no scheme, host or backslash)";
  }
  let resolved: URL;
  try {
    resolved = new URL(value, ANY_ORIGIN);
  } catch {
    return "must be a path on this site";
  }
  return resolved.origin === ANY_ORIGIN ? undefined : "must be a path on this site";
}

export interface MagicLinkSettings {
  /** The gateway's public URL: the link is `<baseUrl>/auth/verify?token=…`. */
  baseUrl: string;
}

export interface MagicLinkRequested {
  email: string;
  expiresAt: Date;
  expiresInSeconds: number;
}

export interface MagicLinkSignIn {
  accountId: string;
  accountCreatedAt: Date;
  accountCreated: boolean;
  email: string;
  session: OpenedSession;
  /** Where to land after signing in, as asked when the link was requested. */
  returnTo: string | null;
}

const linkRefused = () =>
  new ProblemError("unauthenticated", {
    message: "This sign-in link is unknown, already used or expired.",
    help: { fix: "Ask for a new link: POST /auth/magic-link/request {email}. A link works once, within 15 minutes.", retry_is_safe: false },
  });

export class MagicLinks {
  constructor(
    private readonly db: IdentityDb,
    private readonly mailer: Mailer,
    private readonly settings: MagicLinkSettings,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Stores a link for the address and mails it; 503 when the mail cannot be sent. */
  async request(input: { email: string; returnTo?: string | undefined }): Promise<MagicLinkRequested> {
    const email = normaliseEmail(input.email);
    const returnTo = input.returnTo ?? null;
    if (returnTo !== null) {
      const refusal = returnToRefusal(returnTo);
      if (refusal) throw invalid([{ field: "return_to", reason: refusal }]);
    }
    const createdAt = this.now();
    const expiresAt = new Date(createdAt.getTime() + MAGIC_LINK_TTL_SECONDS * 1000);
    const { token, hash } = mintMagicLinkToken();
    await store.deleteExpired(this.db, createdAt, PURGE_BATCH);
    await store.insert(this.db, { token_hash: hash, email, return_to: returnTo, created_at: createdAt, expires_at: expiresAt });
    const link = `${this.settings.baseUrl}/auth/verify?token=${token}`;
    try {
      await this.mailer.send({ to: email, subject: "Your sign-in link", text: mailText(link, token) });
    } catch (err) {
      // The mailer's message names the relay and the reason, never its password; the link stored is useless unsent.
      this.logger.warn({ reason: err instanceof Error ? err.message : String(err) }, "a sign-in mail could not be sent");
      throw new ProblemError("unavailable", {
        message: "The sign-in mail could not be sent just now.",
        help: { fix: "Retry in a moment.", retry_is_safe: true },
      });
    }
    return { email, expiresAt, expiresInSeconds: MAGIC_LINK_TTL_SECONDS };
  }

  /**
   * Consumes a link: opens a browser session for the address's account,
   * creating the account on its first verify. An unknown, used, expired or
   * malformed token is refused alike (401), so the answer tells nothing.
   */
  async verify(token: string): Promise<MagicLinkSignIn> {
    if (!TOKEN_PATTERN.test(token)) throw linkRefused();
    const hash = hashMagicLinkToken(token);
    return this.db.transaction().execute(async (trx) => {
      const at = this.now();
      const link = await store.claim(trx, hash, at);
      if (!link) throw linkRefused();
      const accountCreated = await store.insertAccountForEmail(trx, { id: newId("account"), email: link.email, created_at: at });
      const account = await store.findAccountByEmail(trx, link.email);
      if (!account) throw new Error("the account of a verified address is missing");
      if (accountCreated) {
        await recordActivity(trx, {
          accountId: account.id,
          action: "account.created",
          objectId: account.id,
          detail: { via: "magic_link", email: link.email },
          actor: "session",
          testMode: false,
          at,
        });
      }
      const session = await openSession(trx, { accountId: account.id, via: "magic_link", at, detail: { email: link.email } });
      return { accountId: account.id, accountCreatedAt: account.created_at, accountCreated, email: link.email, session, returnTo: link.return_to };
    });
  }
}

/**
 * The mail's text. The token also stands alone on a short line: a long line
 * (the link) makes the body quoted-printable, which can break the link across
 * lines for a reader of the raw .eml, never the short token.
 */
function mailText(link: string, token: string): string {
  return [
    "Open this link to sign in:",
    "",
    link,
    "",
    `It works once, within ${MAGIC_LINK_TTL_SECONDS / 60} minutes.`,
    "The first sign-in with an address creates its account.",
    "",
    "From a script, send this token to POST /auth/verify:",
    "",
    token,
    "",
    "If you did not ask to sign in, ignore this mail:",
    "nothing happens without the link.",
    "",
  ].join("\n");
}
