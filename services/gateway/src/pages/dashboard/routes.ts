import { ProblemError } from "@c402/problems";
import express, { Router, type Request, type Response } from "express";
import { authenticate, type Credential } from "../../http/auth";
import type { GatewayDeps } from "../../http/deps";
import { requestSignInLink, signInsPerClient } from "../../http/routes/magic-link";
import { sessionCookieOf } from "../../http/session-cookie";
import { sellerAnalytics } from "../../operations/analytics";
import type { ReceiptOperations } from "../../operations/receipts";
import { DASHBOARD_HEADERS, dashboardPage } from "./layout";
import { overviewBody } from "./overview";
import { signInBody, signInSentBody } from "./sign-in";

const SIGN_IN = "/dashboard/sign-in";
/** A form's body: a few short fields; anything bigger is no dashboard form. */
const FORM_LIMITS = { extended: false, limit: "16kb", parameterLimit: 20 } as const;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{1,63}$/;

/**
 * The seller dashboard (issue 51; rule 4): server-rendered pages over the
 * same operations as the JSON API, signed in by magic link (the session
 * cookie). Without a session every page leads to the sign-in form.
 */
export function dashboardRoutes(deps: GatewayDeps, receipts: ReceiptOperations): Router {
  const router = Router();
  router.use("/dashboard", express.urlencoded(FORM_LIMITS));

  const send = (res: Response, status: number, page: string) => {
    for (const [name, value] of DASHBOARD_HEADERS) res.setHeader(name, value);
    res.status(status).type("html").send(page);
  };

  /** The seller the session cookie names, or null when the browser is not signed in (no cookie, or one that no longer holds a session). */
  const sellerOf = async (req: Request, res: Response): Promise<Credential | null> => {
    if (sessionCookieOf(req) === undefined) return null;
    try {
      return await authenticate(deps.clients, req, res, { cookie: true });
    } catch (err) {
      if (err instanceof ProblemError && err.status === 401) return null;
      throw err;
    }
  };

  router.get(SIGN_IN, async (req, res) => {
    if (await sellerOf(req, res)) return res.redirect(303, "/dashboard");
    send(res, 200, dashboardPage({ title: "Sign in", signedIn: false, body: signInBody({}) }));
  });

  router.post(SIGN_IN, signInsPerClient(deps), async (req, res) => {
    const raw = typeof req.body?.email === "string" ? req.body.email.trim().toLowerCase() : "";
    if (!EMAIL.test(raw) || raw.length > 254) {
      return send(
        res,
        422,
        dashboardPage({ title: "Sign in", signedIn: false, body: signInBody({ email: raw, error: "Enter an email address, such as you@example.com." }) }),
      );
    }
    try {
      await requestSignInLink(deps, res, raw, "/dashboard");
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      return send(res, err.status, dashboardPage({ title: "Sign in", signedIn: false, body: signInBody({ email: raw, error: err.message }) }));
    }
    send(res, 200, dashboardPage({ title: "Check your email", signedIn: false, body: signInSentBody(raw) }));
  });

  router.get("/dashboard", async (req, res) => {
    const seller = await sellerOf(req, res);
    if (!seller) return res.redirect(303, SIGN_IN);
    const [analytics, recent] = await Promise.all([sellerAnalytics(deps, seller, { days: "30" }), receipts.list(seller, { limit: "5" })]);
    send(res, 200, dashboardPage({ title: "Overview", current: "/dashboard", signedIn: true, body: overviewBody(analytics, recent.receipts) }));
  });

  return router;
}
