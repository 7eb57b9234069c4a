import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { createMailer, type Mail, type Mailer } from "../src";

/** What a real SMTP server on 127.0.0.1 received. */
interface Arrived {
  envelopeFrom: string;
  envelopeTo: string[];
  user: string | undefined;
  parsed: ParsedMail;
}

interface TestSmtp {
  port: number;
  arrived: Arrived[];
  stop(): Promise<void>;
}

/**
 * smtp-server on 127.0.0.1, port 0. With `auth`, AUTH is required (over the plain
 * connection: STARTTLS is not offered) and a failed login is answered with `failReply`.
 */
async function startSmtp(auth?: { user: string; pass: string; failReply?: (given: string) => string }): Promise<TestSmtp> {
  const arrived: Arrived[] = [];
  const server = new SMTPServer({
    disabledCommands: auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    authOptional: !auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(login, _session, callback) {
      if (auth && login.username === auth.user && login.password === auth.pass) return callback(null, { user: login.username });
      callback(new Error(auth?.failReply ? auth.failReply(login.password ?? "") : "Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        simpleParser(Buffer.concat(chunks))
          .then((parsed) => {
            const mailFrom = session.envelope.mailFrom;
            arrived.push({
              envelopeFrom: mailFrom ? mailFrom.address : "",
              envelopeTo: session.envelope.rcptTo.map((r) => r.address),
              user: typeof session.user === "string" ? session.user : undefined,
              parsed,
            });
            callback();
          })
          .catch((err: Error) => callback(err));
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as net.AddressInfo).port;
  return { port, arrived, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A 127.0.0.1 port that nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The error a promise rejects with; fails the test if it resolves. */
async function refusal(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(Error);
  return outcome.error as Error;
}

const FROM = "c402 <no-reply@c402.example>";
const LINK = "https://checkout.c402.example/identity/v1/magic-link/verify?token=abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz";
const SIGN_IN: Mail = {
  to: "alice@example.com",
  subject: "Sign in to c402 — your link",
  text: `Hello,\n\nopen this link to sign in:\n\n${LINK}\n\nIt expires in 15 minutes. Grüße!\n`,
};

let tmp: string;
const mailers: Mailer[] = [];
const servers: TestSmtp[] = [];

function mailer(options: Parameters<typeof createMailer>[0]): Mailer {
  const m = createMailer(options);
  mailers.push(m);
  return m;
}

async function smtp(auth?: Parameters<typeof startSmtp>[0]): Promise<TestSmtp> {
  const s = await startSmtp(auth);
  servers.push(s);
  return s;
}

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "c402-mailer-"));
});

afterEach(async () => {
  await Promise.all(mailers.splice(0).map((m) => m.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  await rm(tmp, { recursive: true, force: true });
});

function expectSignInMail(parsed: ParsedMail, messageId: string): void {
  expect(parsed.from?.value).toEqual([{ name: "c402", address: "no-reply@c402.example" }]);
  const to = Array.isArray(parsed.to) ? parsed.to : [parsed.to];
  expect(to.flatMap((t) => t?.value ?? [])).toEqual([{ name: "", address: "alice@example.com" }]);
  expect(parsed.subject).toBe(SIGN_IN.subject);
  expect(parsed.text).toBe(SIGN_IN.text);
  expect(parsed.text).toContain(LINK);
  expect(parsed.messageId).toBe(messageId);
  expect(parsed.date).toBeInstanceOf(Date);
  expect(Math.abs(parsed.date!.getTime() - Date.now())).toBeLessThan(60_000);
}

describe("mailer over SMTP (smtp-server on 127.0.0.1)", () => {
  it("delivers the message: envelope, From, To, Subject, Date, Message-ID and text", async () => {
    const server = await smtp();
    const m = mailer({ smtpUrl: `smtp://127.0.0.1:${server.port}`, dataDir: tmp, from: FROM });

    const sent = await m.send(SIGN_IN);

    expect(sent.file).toBeUndefined();
    expect(sent.messageId).toMatch(/^<[^<>@\s]+@c402\.example>$/);
    expect(server.arrived).toHaveLength(1);
    const got = server.arrived[0]!;
    expect(got.envelopeFrom).toBe("no-reply@c402.example");
    expect(got.envelopeTo).toEqual(["alice@example.com"]);
    expectSignInMail(got.parsed, sent.messageId);
    await expect(stat(path.join(tmp, "mail"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("sends an HTML alternative when given", async () => {
    const server = await smtp();
    const m = mailer({ smtpUrl: `smtp://127.0.0.1:${server.port}`, dataDir: tmp, from: FROM });

    await m.send({ ...SIGN_IN, html: `<p><a href="${LINK}">Sign in</a></p>` });

    const got = server.arrived[0]!.parsed;
    expect(got.text).toBe(SIGN_IN.text);
    expect(got.html).toContain(`<a href="${LINK}">Sign in</a>`);
  });

  it("logs in with the username and password of the URL (percent-encoded characters included)", async () => {
    const pass = "p@ss:w/rd%Ü";
    const server = await smtp({ user: "mailer@c402.example", pass });
    const url = `smtp://${encodeURIComponent("mailer@c402.example")}:${encodeURIComponent(pass)}@127.0.0.1:${server.port}`;
    const m = mailer({ smtpUrl: url, dataDir: tmp, from: FROM });

    const sent = await m.send(SIGN_IN);

    expect(server.arrived).toHaveLength(1);
    expect(server.arrived[0]!.user).toBe("mailer@c402.example");
    expectSignInMail(server.arrived[0]!.parsed, sent.messageId);
  });

  it("a wrong password rejects the send, and the error message does not contain the password", async () => {
    const server = await smtp({ user: "mailer", pass: "right-password" });
    const wrong = "wrong-Secret-42";
    const m = mailer({ smtpUrl: `smtp://mailer:${wrong}@127.0.0.1:${server.port}`, dataDir: tmp, from: FROM });

    const error = await refusal(m.send(SIGN_IN));

    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(/535|auth|login/i);
    expect(error.message).toContain(`127.0.0.1:${server.port}`);
    expect(error.message).not.toContain(wrong);
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(wrong);
    expect(server.arrived).toHaveLength(0);
  });

  it("masks the password even when the server echoes it (plain or base64) in its reply", async () => {
    const wrong = "echoed-Secret-7";
    const server = await smtp({
      user: "mailer",
      pass: "right-password",
      failReply: (given) => `Authentication failed for ${given} (${Buffer.from(given).toString("base64")})`,
    });
    const m = mailer({ smtpUrl: `smtp://mailer:${wrong}@127.0.0.1:${server.port}`, dataDir: tmp, from: FROM });

    const error = await refusal(m.send(SIGN_IN));

    expect(error.message).toContain("Authentication failed for ***");
    expect(error.message).not.toContain(wrong);
    expect(error.message).not.toContain(Buffer.from(wrong).toString("base64"));
  });

  it("a server that is not there rejects the send without the password in the message", async () => {
    const port = await closedPort();
    const m = mailer({ smtpUrl: `smtp://mailer:unreachable-Secret@127.0.0.1:${port}`, dataDir: tmp, from: FROM });

    const error = await refusal(m.send(SIGN_IN));

    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain("unreachable-Secret");
  });

  it("describe() names the server and port without credentials or query", () => {
    const m = mailer({ smtpUrl: "smtp://user:top-Secret@mail.example:2525?tls.rejectUnauthorized=false", dataDir: tmp, from: FROM });
    expect(m.describe()).toBe("mail: SMTP smtp://mail.example:2525");
    expect(mailer({ smtpUrl: "smtp://mail.example", dataDir: tmp, from: FROM }).describe()).toBe("mail: SMTP smtp://mail.example:587");
    expect(mailer({ smtpUrl: "smtps://u:p@mail.example", dataDir: tmp, from: FROM }).describe()).toBe("mail: SMTP smtps://mail.example:465");
  });

  it("refuses a URL that is not smtp:// or smtps://, without repeating it", () => {
    expect(() => createMailer({ smtpUrl: "https://u:top-Secret@mail.example", dataDir: tmp, from: FROM })).toThrow(/smtp:\/\/ or smtps:\/\//);
    expect(() => createMailer({ smtpUrl: "not a url top-Secret", dataDir: tmp, from: FROM })).toThrow(/not a valid URL/);
    for (const url of ["https://u:top-Secret@mail.example", "not a url top-Secret"]) {
      try {
        createMailer({ smtpUrl: url, dataDir: tmp, from: FROM });
      } catch (err) {
        expect((err as Error).message).not.toContain("top-Secret");
        expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.toContain("top-Secret");
      }
    }
  });
});

describe("mailer without SMTP (.eml files)", () => {
  it("writes an RFC 5322 .eml file under <dataDir>/mail that parses back to the mail", async () => {
    const m = mailer({ dataDir: tmp, from: FROM });

    const sent = await m.send(SIGN_IN);

    const dir = path.join(tmp, "mail");
    const files = await readdir(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{6}\.\d{3}Z-[0-9a-f]{12}\.eml$/);
    expect(sent.file).toBe(path.join(dir, files[0]!));
    const raw = await readFile(sent.file!);
    const head = raw.toString("latin1").split("\r\n\r\n")[0]!;
    for (const header of ["From", "To", "Subject", "Date", "Message-ID"]) expect(head).toMatch(new RegExp(`^${header}: `, "m"));
    expect(raw.toString("latin1")).not.toMatch(/[^\r]\n/); // CRLF line ends
    expectSignInMail(await simpleParser(raw), sent.messageId);
    expect((await stat(sent.file!)).mode & 0o777).toBe(0o600);
  });

  it("two sends give two files (and no temp files are left)", async () => {
    const m = mailer({ dataDir: tmp, from: FROM });

    const first = await m.send(SIGN_IN);
    const second = await m.send({ to: "bob@example.org", subject: "Second", text: "two" });

    expect(first.file).not.toBe(second.file);
    expect(first.messageId).not.toBe(second.messageId);
    const files = (await readdir(path.join(tmp, "mail"))).sort();
    expect(files).toHaveLength(2);
    expect(files.every((f) => f.endsWith(".eml"))).toBe(true);
    const parsed = await simpleParser(await readFile(second.file!));
    expect(parsed.subject).toBe("Second");
    expect(parsed.text?.trimEnd()).toBe("two"); // a message body ends with a line break
    expect(parsed.html).toBe(false);
  });

  it("a blank smtpUrl means files too", async () => {
    const m = mailer({ smtpUrl: "  ", dataDir: tmp, from: FROM });
    expect((await m.send(SIGN_IN)).file).toBeDefined();
  });

  it("describe() names the directory", () => {
    const m = mailer({ dataDir: tmp, from: FROM });
    expect(m.describe()).toBe(`mail: written as .eml files under ${path.join(tmp, "mail")} (no SMTP_URL set)`);
  });

  it("a closed mailer refuses to send", async () => {
    const m = createMailer({ dataDir: tmp, from: FROM });
    await m.close();
    await expect(m.send(SIGN_IN)).rejects.toThrow(/closed/);
  });
});

describe("refusals (header injection)", () => {
  it.each([
    ["CRLF and a Bcc header", "alice@example.com\r\nBcc: eve@evil.example"],
    ["LF and a Bcc header", "alice@example.com\nBcc: eve@evil.example"],
    ["a lone CR", "alice@example.com\rX: y"],
    ["two addresses", "alice@example.com, eve@evil.example"],
    ["two addresses with ;", "alice@example.com;eve@evil.example"],
    ["a display name", "Alice <alice@example.com>"],
    ["no @", "alice.example.com"],
    ["no domain dot", "alice@localhost"],
    ["two @", "alice@eve@example.com"],
    ["spaces", " alice@example.com"],
    ["empty", ""],
  ])("refuses a `to` with %s", async (_what, to) => {
    const m = mailer({ dataDir: tmp, from: FROM });
    await expect(m.send({ ...SIGN_IN, to })).rejects.toThrow(/^mail: `to` must/);
    await expect(stat(path.join(tmp, "mail"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it.each([
    ["CRLF", "Sign in\r\nBcc: eve@evil.example"],
    ["LF", "Sign in\nBcc: eve@evil.example"],
    ["CR", "Sign in\rBcc: eve@evil.example"],
  ])("refuses a subject with %s", async (_what, subject) => {
    const m = mailer({ dataDir: tmp, from: FROM });
    await expect(m.send({ ...SIGN_IN, subject })).rejects.toThrow("mail: `subject` must be one line (no CR or LF)");
    await expect(stat(path.join(tmp, "mail"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("refuses a subject with other control characters (tab is fine)", async () => {
    const m = mailer({ dataDir: tmp, from: FROM });
    await expect(m.send({ ...SIGN_IN, subject: "Sign in\u0000x" })).rejects.toThrow("mail: `subject` must not contain control characters");
    await expect(m.send({ ...SIGN_IN, subject: "Sign in\u001bx" })).rejects.toThrow(/control characters/);
    expect((await m.send({ ...SIGN_IN, subject: "Sign\tin" })).file).toBeDefined();
  });

  it("refuses over SMTP too, before connecting", async () => {
    const server = await smtp();
    const m = mailer({ smtpUrl: `smtp://127.0.0.1:${server.port}`, dataDir: tmp, from: FROM });
    await expect(m.send({ ...SIGN_IN, to: "alice@example.com\r\nBcc: eve@evil.example" })).rejects.toThrow(/line breaks/);
    await expect(m.send({ ...SIGN_IN, subject: "a\r\nBcc: eve@evil.example" })).rejects.toThrow(/one line/);
    expect(server.arrived).toHaveLength(0);
  });

  it("refuses a `from` that is not one address", () => {
    expect(() => createMailer({ dataDir: tmp, from: "no-reply@c402.example\r\nBcc: eve@evil.example" })).toThrow(/`from`/);
    expect(() => createMailer({ dataDir: tmp, from: "c402" })).toThrow(/`from`/);
    expect(createMailer({ dataDir: tmp, from: "no-reply@c402.example" }).describe()).toMatch(/^mail: /);
  });
});
