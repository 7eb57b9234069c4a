import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { simpleParser } from "mailparser";

/**
 * The mail the target wrote: without SMTP_URL the service writes each mail as
 * an .eml file under $DATA_DIR/mail/, and the global setup publishes the
 * target's DATA_DIR as E2E_DATA_DIR.
 */
export function mailDir(): string {
  const dir = process.env.E2E_DATA_DIR;
  if (!dir) throw new Error("E2E_DATA_DIR is not set (run through test-e2e/jest.config.js)");
  return join(dir, "mail");
}

/** The sign-in links mailed to `address` so far, oldest first (each read from its mail's text). */
export async function linksMailedTo(address: string): Promise<string[]> {
  const files = (await readdir(mailDir()).catch(() => [] as string[])).filter((f) => f.endsWith(".eml")).sort();
  const links: string[] = [];
  for (const file of files) {
    const mail = await simpleParser(await readFile(join(mailDir(), file)));
    const to = (Array.isArray(mail.to) ? mail.to : [mail.to]).flatMap((t) => t?.value.map((v) => v.address) ?? []);
    if (!to.includes(address)) continue;
    const link = /https?:\/\/\S+\/auth\/verify\?token=ml_[0-9A-Za-z]{43}/.exec(mail.text ?? "")?.[0];
    if (!link) throw new Error(`a mail to ${address} without a sign-in link: ${mail.text}`);
    links.push(link);
  }
  return links;
}
