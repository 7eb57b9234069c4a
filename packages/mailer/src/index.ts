/**
 * @c402/mailer: the service's transactional mail (first user: magic-link sign-in).
 *
 * `createMailer({ smtpUrl, dataDir, from })` returns a `Mailer`:
 * - with `smtpUrl` (`smtp://[user:pass@]host[:port]`, STARTTLS when the server offers it,
 *   or `smtps://` for TLS from the start; nodemailer's URL query options such as
 *   `?tls.rejectUnauthorized=false` apply), each mail is sent over SMTP;
 * - without it (unset or blank), each mail is written as an RFC 5322 message to
 *   `<dataDir>/mail/<ISO time without colons>-<random>.eml` (temp file + rename, mode 0600,
 *   since a sign-in link is a secret), to be opened in a mail client or parsed by a test.
 *
 * Both paths build the message with nodemailer, so it is the same message: From, To,
 * Subject, Date, Message-ID, a text/plain part (7bit when it can be, otherwise
 * quoted-printable) and, when given, an HTML alternative.
 *
 * `send` refuses a `to` that is not one bare address (`user@example.com`) and a subject
 * with line breaks, so caller text cannot add headers or recipients. The SMTP password
 * never appears in `describe()` or in an error message.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";
import { createTransport } from "nodemailer";

export interface Mail {
  /** One bare address, e.g. `user@example.com` (no display name, no list). */
  to: string;
  /** One line. */
  subject: string;
  text: string;
  html?: string;
}

export interface SentMail {
  /** The Message-ID header of the message, angle brackets included. */
  messageId: string;
  /** The .eml file written, when there is no SMTP server. */
  file?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<SentMail>;
  /** One line for the service's start line, without credentials. */
  describe(): string;
  close(): Promise<void>;
}

export interface MailerOptions {
  /** `smtp://` or `smtps://` URL; unset or blank writes .eml files under `<dataDir>/mail/`. */
  smtpUrl?: string;
  dataDir: string;
  /** `no-reply@example.com` or `Name <no-reply@example.com>`. */
  from: string;
}

// Generous for a relay on the network, short enough that a request waiting on a mail
// does not hang for nodemailer's defaults (up to 10 minutes).
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = String.raw`[\p{L}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?`;
const DOMAIN = new RegExp(`^(?:${LABEL}\\.)+${LABEL}$`, "u");
const CONTROL = /(?!\t)\p{Cc}/u; // control characters other than tab
const LINE_BREAK = /[\r\n]/;

/** A single bare address `local@domain.tld`: nothing a header or an SMTP command could be split on. */
export function isPlausibleAddress(address: string): boolean {
  if (address.length > 254) return false;
  const at = address.lastIndexOf("@");
  if (at <= 0) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  return local.length <= 64 && LOCAL_PART.test(local) && DOMAIN.test(domain);
}

function checkMail(mail: Mail): void {
  if (typeof mail.to !== "string" || LINE_BREAK.test(mail.to)) throw new Error("mail: `to` must not contain line breaks");
  if (!isPlausibleAddress(mail.to)) throw new Error(`mail: \`to\` must be one address like user@example.com, got ${JSON.stringify(mail.to)}`);
  if (typeof mail.subject !== "string" || LINE_BREAK.test(mail.subject)) throw new Error("mail: `subject` must be one line (no CR or LF)");
  if (CONTROL.test(mail.subject)) throw new Error("mail: `subject` must not contain control characters");
  if (typeof mail.text !== "string") throw new Error("mail: `text` must be a string");
  if (mail.html !== undefined && typeof mail.html !== "string") throw new Error("mail: `html` must be a string when given");
}

function checkFrom(from: string): void {
  if (typeof from !== "string" || CONTROL.test(from)) throw new Error("mail: `from` must be one line");
  const bracketed = /^[^<>]*<([^<>]+)>$/.exec(from.trim());
  const address = bracketed ? bracketed[1]! : from.trim();
  if (!isPlausibleAddress(address)) throw new Error(`mail: \`from\` must be an address or "Name <address>", got ${JSON.stringify(from)}`);
}

/** The URL without credentials or query, with the port that will be used. */
function parseSmtpUrl(smtpUrl: string): { shown: string; secrets: string[] } {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    // Not the URL itself: it may hold a password (and so would the TypeError's `input`).
    throw new Error("mail: SMTP URL is not a valid URL (expected smtp://[user:pass@]host[:port] or smtps://...)");
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") {
    throw new Error(`mail: SMTP URL must start with smtp:// or smtps://, not ${url.protocol}//`);
  }
  if (!url.hostname) throw new Error("mail: SMTP URL has no host");
  const port = url.port || (url.protocol === "smtps:" ? "465" : "587");
  const shown = `${url.protocol}//${url.hostname}:${port}`;

  const secrets = new Set<string>();
  if (url.password) {
    const user = safeDecode(url.username);
    const pass = safeDecode(url.password);
    for (const s of [url.password, pass, encodeURIComponent(pass)]) secrets.add(s);
    // As sent on the wire by AUTH LOGIN and AUTH PLAIN, should a server echo it back.
    secrets.add(Buffer.from(pass).toString("base64"));
    secrets.add(Buffer.from(`\u0000${user}\u0000${pass}`).toString("base64"));
  }
  // Longest first, so a secret containing another is masked whole.
  return { shown, secrets: [...secrets].filter((s) => s.length > 0).sort((a, b) => b.length - a.length) };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function mask(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join("***");
  return out;
}

/** `2026-11-23T202906.123Z-1a2b3c4d5e6f.eml`: sorts by time, unique by the random part. */
function emlName(now: Date): string {
  return `${now.toISOString().replace(/:/g, "")}-${randomBytes(6).toString("hex")}.eml`;
}

async function writeAtomically(dir: string, name: string, content: Buffer): Promise<string> {
  const file = path.join(dir, name);
  const tmp = path.join(dir, `.${name}.tmp`);
  try {
    const handle = await open(tmp, "wx", 0o600);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return file;
}

export function createMailer(options: MailerOptions): Mailer {
  const { dataDir, from } = options;
  checkFrom(from);
  const smtpUrl = options.smtpUrl?.trim() ? options.smtpUrl.trim() : undefined;
  const safety = { disableFileAccess: true, disableUrlAccess: true };
  let closed = false;

  const compose = (mail: Mail) => {
    if (closed) throw new Error("mail: the mailer is closed");
    checkMail(mail);
    return { from, to: mail.to, subject: mail.subject, text: mail.text, ...(mail.html !== undefined ? { html: mail.html } : {}) };
  };

  if (smtpUrl) {
    const { shown, secrets } = parseSmtpUrl(smtpUrl);
    const transport = createTransport({ ...SMTP_TIMEOUTS, ...safety, url: smtpUrl });
    return {
      async send(mail) {
        const message = compose(mail);
        try {
          const info = await transport.sendMail(message);
          return { messageId: info.messageId };
        } catch (err) {
          // A new error, not wrapping the original: nodemailer's error carries the command and
          // server response, which a logger would print; only the masked message goes on.
          const reason = err instanceof Error ? err.message : String(err);
          throw new Error(mask(`mail: sending to ${mail.to} via ${shown} failed: ${reason}`, secrets));
        }
      },
      describe: () => `mail: SMTP ${shown}`,
      async close() {
        closed = true;
        transport.close();
      },
    };
  }

  if (!dataDir) throw new Error("mail: dataDir is required when there is no SMTP URL");
  const dir = path.resolve(dataDir, "mail");
  const transport = createTransport({ ...safety, streamTransport: true, buffer: true, newline: "windows" });
  return {
    async send(mail) {
      const info = await transport.sendMail(compose(mail));
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const file = await writeAtomically(dir, emlName(new Date()), info.message as Buffer);
      return { messageId: info.messageId, file };
    },
    describe: () => `mail: written as .eml files under ${dir} (no SMTP_URL set)`,
    async close() {
      closed = true;
      transport.close();
    },
  };
}
