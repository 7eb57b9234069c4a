import type { identityV1 } from "@c402/contracts";
import { SESSION_COOKIE } from "../http/session-cookie";
import { isoOrNull } from "./values";

/** The answers of magic-link sign-in and of the session-cookie mint. */

/** The same answer for every address, with or without an account: nothing here depends on one. */
export function magicLinkRequestedView(r: identityV1.RequestMagicLinkResponse) {
  return {
    object: "magic_link",
    sent: true,
    email: r.email,
    expires_at: isoOrNull(r.expiresAt) ?? "",
    expires_in_seconds: r.expiresInSeconds,
    note: "A sign-in link is on its way to this address: it works once, until expires_at. The first sign-in with an address creates its account.",
  };
}

export function signedInByLinkView(r: identityV1.VerifyMagicLinkResponse) {
  return {
    object: "session",
    account: { id: r.account?.id, created: r.accountCreated },
    session: {
      token: r.session?.token ?? "",
      expires_at: isoOrNull(r.session?.expiresAt) ?? "",
      cookie: SESSION_COOKIE,
      note: "Set as the HttpOnly session cookie too. The token is a bearer credential like a key (scope full, test mode for checkout defaults); shown once.",
    },
    return_to: r.returnTo ?? null,
  };
}

export function sessionCookieView(expiresAt: Date) {
  return {
    object: "session_cookie",
    cookie: SESSION_COOKIE,
    expires_at: expiresAt.toISOString(),
    note: "The browser now carries this session as an HttpOnly cookie; logging out (POST /auth/logout) ends both.",
  };
}
