import { html } from "./template";

/** The sign-in form: an email address, and the link arrives by mail (a form that works without script). */
export function signInBody(p: { email?: string; error?: string }) {
  return html`<h1>Sign in</h1>
    <p>Enter your email address: we mail you a link that signs you in. The first sign-in with an address creates its account.</p>
    <form class="dash-form" method="post" action="/dashboard/sign-in" novalidate>
      <label for="email">Email address</label>
      <input
        id="email"
        name="email"
        type="email"
        autocomplete="email"
        required
        maxlength="254"
        value="${p.email ?? ""}"
        ${p.error ? html`aria-invalid="true" aria-describedby="email-error"` : ""}
      />
      ${p.error ? html`<p id="email-error" class="dash-error" role="alert">${p.error}</p>` : ""}
      <button class="svc-button" type="submit">Email me a sign-in link</button>
    </form>`;
}

export function signInSentBody(email: string) {
  return html`<h1>Check your email</h1>
    <p role="status">A sign-in link is on its way to <strong>${email}</strong>. It works once, for a few minutes; open it in this browser.</p>
    <p><a href="/dashboard/sign-in">Use another address</a></p>`;
}
