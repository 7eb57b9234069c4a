import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Frame, Page } from "playwright-core";
import { baseUrl } from "./http";

/*
 * A seller's site for the embed tests: a loopback HTTP server whose pages
 * hold the mounts a test gives and load /static/embed.js, recording every
 * svc:* event the host page hears. What the callbacks run in the browser
 * (page.waitForFunction) touch: the e2e suite compiles without the DOM library.
 */
declare const window: { svcEvents: RecordedEvent[] };

export interface SellerSite {
  origin: string;
  /** Serves `mounts` in a page that loads the embed script and records every svc:* event; answers its URL. */
  page(mounts: string): string;
  close(): Promise<void>;
}

/** A seller's site on loopback: each page holds the mounts a test gives, then the embed script. */
export async function sellerSite(): Promise<SellerSite> {
  const pages = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    if (req.url === "/teaser.svg") {
      res
        .writeHead(200, { "content-type": "image/svg+xml" })
        .end('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#345"/></svg>');
      return;
    }
    const html = pages.get(req.url ?? "");
    if (html === undefined) res.writeHead(404).end();
    else res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page(mounts) {
      const path = `/shop-${pages.size}`;
      pages.set(
        path,
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A seller's shop</title></head><body><main><h1>The shop</h1>
<script>window.svcEvents = []; for (const t of ${JSON.stringify(["ready", "paid", "held", "on_hold", "released", "escalated", "resize"])})
  document.addEventListener("svc:" + t, (e) => window.svcEvents.push({ type: e.type, mount: e.target.id, detail: e.detail }));</script>
${mounts}
<script src="${baseUrl()}/static/embed.js"></script></main></body></html>`,
      );
      return `${origin}${path}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface RecordedEvent {
  type: string;
  mount: string;
  detail: Record<string, unknown>;
}

/** The host page's svc events of `type`, once at least `count` arrived. */
export async function eventsOf(page: Page, type: string, count: number): Promise<RecordedEvent[]> {
  await page.waitForFunction(([t, n]) => window.svcEvents.filter((e) => e.type === t).length >= n, [type, count] as const, {
    timeout: 30_000,
  });
  return page.evaluate((t) => window.svcEvents.filter((e) => e.type === t), type);
}

/** The frame inside a mount (or the iframe `frameSelector` names). */
export async function frameOf(page: Page, mount: string, frameSelector = "iframe"): Promise<Frame> {
  const frame = await (await page.waitForSelector(`${mount} ${frameSelector}`)).contentFrame();
  if (!frame) throw new Error(`no frame in ${mount}`);
  await frame.waitForLoadState();
  return frame;
}
