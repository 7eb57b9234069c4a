import { ASSET_PATHS } from "../static-assets";
import { html, type SafeHtml } from "./template";

/** The dashboard's sections, in the navigation's order. */
export const DASHBOARD_SECTIONS = [{ path: "/dashboard", label: "Overview" }] as const;

/** The dashboard's policy: this origin's styles only, no script yet, forms posting here, never framed. */
export const DASHBOARD_HEADERS: readonly [string, string][] = [
  [
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  ],
  ["X-Frame-Options", "DENY"],
  ["Referrer-Policy", "same-origin"],
  ["X-Content-Type-Options", "nosniff"],
  ["Cache-Control", "no-store"],
];

/** A dashboard page: the navigation (for a signed-in seller) and the page's own content. */
export function dashboardPage(p: { title: string; current?: string; signedIn: boolean; body: SafeHtml }): string {
  const nav = p.signedIn
    ? html`<nav aria-label="Dashboard">
        <ul class="dash-nav">
          ${DASHBOARD_SECTIONS.map((s) => html`<li><a href="${s.path}" ${s.path === p.current ? html`aria-current="page"` : ""}>${s.label}</a></li>`)}
        </ul>
      </nav>`
    : "";
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${p.title} · c402 dashboard</title>
        <link rel="stylesheet" href="${ASSET_PATHS.css}" />
      </head>
      <body>
        <a class="dash-skip" href="#main">Skip to the content</a>
        <header class="dash-header">
          <p class="dash-brand">c402 dashboard</p>
          ${nav}
        </header>
        <main id="main" class="svc-page dash-main">${p.body}</main>
      </body>
    </html>`.markup;
}
