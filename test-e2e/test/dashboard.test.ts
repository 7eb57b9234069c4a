import { randomBytes } from "node:crypto";
import type { Browser } from "playwright-core";
import { accessibilityViolations, launchBrowser, newContext } from "../src/browser";
import { baseUrl } from "../src/http";
import { linksMailedTo } from "../src/mail";

/** The mail's sign-in link, once it is written (the service mails it as the form answers). */
async function linkMailedTo(address: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const [link] = await linksMailedTo(address);
    if (link) return link;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no sign-in link was mailed to ${address}`);
}

/**
 * The seller dashboard (issue 51) in a real Chromium: a seller signs in by
 * magic link, by clicking, and lands on the overview.
 */
describe("seller dashboard", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("a seller signs in by magic link and lands on the overview; every page passes axe; without a session it leads to sign-in", async () => {
    const email = `dash-${randomBytes(6).toString("hex")}@example.com`;
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    expect(await accessibilityViolations(page)).toEqual([]);

    // A wrong address is refused on the page, named and announced.
    await page.getByLabel("Email address").fill("not an address");
    await page.getByRole("button", { name: "Email me a sign-in link" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("Enter an email address");
    expect(await page.getByLabel("Email address").getAttribute("aria-invalid")).toBe("true");
    expect(await accessibilityViolations(page)).toEqual([]);

    await page.getByLabel("Email address").fill(email);
    await page.getByRole("button", { name: "Email me a sign-in link" }).click();
    await page.getByRole("heading", { name: "Check your email" }).waitFor();
    expect(await page.getByRole("status").textContent()).toContain(email);
    expect(await accessibilityViolations(page)).toEqual([]);

    await page.goto(await linkMailedTo(email));
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
    expect(await page.getByRole("link", { name: "Overview" }).getAttribute("aria-current")).toBe("page");
    expect(await page.getByText("No sales yet.").isVisible()).toBe(true);
    expect(await accessibilityViolations(page)).toEqual([]);
    // Signed in, the sign-in page leads back to the dashboard.
    await page.goto(`${baseUrl()}/dashboard/sign-in`);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    await context.close();
  });

  it("the dark theme passes axe too, and the pages are never framed or cached", async () => {
    const context = await newContext(browser, { colorScheme: "dark" });
    const page = await context.newPage();
    const response = await page.goto(`${baseUrl()}/dashboard/sign-in`);
    const headers = response?.headers() ?? {};
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["content-security-policy"]).toContain("form-action 'self'");
    expect(headers["cache-control"]).toBe("no-store");
    expect(await accessibilityViolations(page)).toEqual([]);
    await context.close();
  });
});
