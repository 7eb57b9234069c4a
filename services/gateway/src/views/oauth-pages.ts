import { cspHash, escapeHtml } from "./html";

/**
 * The authorization server's pages: sign-in (magic link or wallet, on the
 * page itself), consent, and errors that must not go back to the client.
 * Each carries a strict CSP: only its own style and script, nothing frames
 * it (RFC 9700 §4.16, clickjacking), and forms post only here and, for the
 * consent's 303, to the client's redirect URI.
 */

const CSS =
  "body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#fafafa}" +
  "main{max-width:32rem;margin:3rem auto;padding:1.5rem;background:#fff;border:1px solid #ddd;border-radius:.5rem}" +
  "h1{font-size:1.3rem;margin:0 0 1rem}ul{padding-left:1.2rem}.host{font-family:ui-monospace,monospace}" +
  "button{font:inherit;padding:.5rem 1rem;margin:.5rem .5rem 0 0;border-radius:.3rem;border:1px solid #888;background:#fff;cursor:pointer}" +
  "button.primary{background:#1a1a1a;color:#fff;border-color:#1a1a1a}input{font:inherit;padding:.4rem;width:16rem}" +
  ".note{color:#555;font-size:.9rem}#status{min-height:1.5rem}";

/** Sign-in from the consent page: the magic-link request, or a wallet (EIP-1193) signing the challenge, then the session cookie and a reload. */
const SIGN_IN_SCRIPT = `(() => {
  const status = document.getElementById("status");
  const json = { "content-type": "application/json" };
  const say = (text) => { status.textContent = text; };
  document.getElementById("mail").addEventListener("submit", async (event) => {
    event.preventDefault();
    const email = document.getElementById("email").value;
    const returnTo = document.getElementById("mail").dataset.returnTo;
    const r = await fetch("/auth/magic-link/request", { method: "POST", headers: json, body: JSON.stringify({ email, return_to: returnTo }) });
    say(r.ok ? "Check your mail: the link signs you in and brings you back here." : "The link could not be sent (" + r.status + ").");
  });
  document.getElementById("wallet").addEventListener("click", async () => {
    try {
      const eth = window.ethereum;
      if (!eth) return say("No wallet was found in this browser.");
      const [address] = await eth.request({ method: "eth_requestAccounts" });
      const chainId = parseInt(await eth.request({ method: "eth_chainId" }), 16);
      const challenge = await (await fetch("/auth/wallet/challenge", { method: "POST", headers: json, body: JSON.stringify({ address, network: "eip155:" + chainId }) })).json();
      const signature = await eth.request({ method: "personal_sign", params: [challenge.message, address] });
      const verified = await fetch("/auth/wallet/verify", { method: "POST", headers: json, body: JSON.stringify({ message: challenge.message, signature }) });
      if (!verified.ok) return say("The wallet sign-in was refused (" + verified.status + ").");
      const { session } = await verified.json();
      const cookie = await fetch("/auth/session/cookie", { method: "POST", headers: { authorization: "Bearer " + session.token } });
      if (!cookie.ok) return say("The session could not be opened (" + cookie.status + ").");
      location.reload();
    } catch (err) {
      say("The wallet sign-in failed: " + (err && err.message ? err.message : err));
    }
  });
})();`;

const SCOPE_WORDS: Record<string, string> = {
  "checkouts.write": "Create, change, retire and take live your checkouts through the REST API (not your payout wallets or keys)",
  "mcp.read": "Read your checkouts, receipts and analytics through MCP tools",
  "mcp.write": "Act for you through MCP tools: create checkouts, take them live, mark receipts fulfilled, add webhooks",
};

export interface OAuthClientFacts {
  name: string | undefined;
  clientId: string;
  redirectUri: string;
}

export interface OAuthPage {
  status: number;
  html: string;
  headers: [string, string][];
}

function page(title: string, body: string, opts: { script?: string; formTargets?: string[] } = {}): Omit<OAuthPage, "status"> {
  const formAction = ["'self'", ...(opts.formTargets ?? [])].join(" ");
  const csp = [
    "default-src 'none'",
    `style-src ${cspHash(CSS)}`,
    opts.script ? `script-src ${cspHash(opts.script)}` : "script-src 'none'",
    "connect-src 'self'",
    "img-src 'none'",
    "base-uri 'none'",
    `form-action ${formAction}`,
    "frame-ancestors 'none'",
  ].join("; ");
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${CSS}</style></head><body><main>${body}</main>` +
    (opts.script ? `<script>${opts.script}</script>` : "") +
    `</body></html>`;
  return {
    html,
    headers: [
      ["Content-Type", "text/html; charset=utf-8"],
      ["Content-Security-Policy", csp],
      ["X-Frame-Options", "DENY"],
      ["Cache-Control", "no-store"],
      ["Referrer-Policy", "no-referrer"],
    ],
  };
}

function clientLine(client: OAuthClientFacts): string {
  const host = new URL(client.redirectUri).host;
  const name = client.name ?? "An application";
  return `<p><strong>${escapeHtml(name)}</strong> (returns to <span class="host">${escapeHtml(host)}</span>) asks to connect to your account.</p>`;
}

function scopeList(scopes: readonly string[]): string {
  return `<ul>${scopes.map((s) => `<li>${escapeHtml(SCOPE_WORDS[s] ?? s)} <span class="note">(${escapeHtml(s)})</span></li>`).join("")}</ul>`;
}

/** Not signed in: the request is valid; sign in here (magic link or wallet), then this page shows the consent. */
export function oauthSignInPage(client: OAuthClientFacts, scopes: readonly string[], returnTo: string): OAuthPage {
  const body =
    `<h1>Sign in to continue</h1>${clientLine(client)}<p>It would be able to:</p>${scopeList(scopes)}` +
    `<form id="mail" data-return-to="${escapeHtml(returnTo)}"><label>Email <input id="email" type="email" required autocomplete="email"></label>` +
    `<button class="primary" type="submit">Mail me a sign-in link</button></form>` +
    `<p>or <button id="wallet" type="button">Sign in with a wallet</button></p><p id="status" role="status"></p>`;
  return { status: 200, ...page("Sign in", body, { script: SIGN_IN_SCRIPT }) };
}

/** Signed in: what the client would get, and Allow / Deny. The form carries the request's id and CSRF token, nothing else. */
export function oauthConsentPage(client: OAuthClientFacts, scopes: readonly string[], requestId: string, csrfToken: string): OAuthPage {
  const body =
    `<h1>Connect ${escapeHtml(client.name ?? "this application")}?</h1>${clientLine(client)}<p>It would be able to:</p>${scopeList(scopes)}` +
    `<form method="post" action="/oauth/consent"><input type="hidden" name="request_id" value="${escapeHtml(requestId)}">` +
    `<input type="hidden" name="csrf_token" value="${escapeHtml(csrfToken)}">` +
    `<button class="primary" type="submit" name="decision" value="allow">Allow</button>` +
    `<button type="submit" name="decision" value="deny">Deny</button></form>` +
    `<p class="note">Checkouts it creates start in rehearsal until they are taken live. You can end the connection by revoking its token.</p>`;
  return { status: 200, ...page("Connect an application", body, { formTargets: [new URL(client.redirectUri).origin] }) };
}

/** An error shown to the user, never sent to a redirect URI that was not proven. */
export function oauthErrorPage(status: number, message: string): OAuthPage {
  return { status, ...page("Cannot connect", `<h1>This connection cannot go ahead</h1><p>${escapeHtml(message)}</p>`) };
}
