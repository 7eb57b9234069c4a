import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router, type Request, type Response } from "express";
import { forgetFaces, type FaceQuotes } from "../../faces/answers";
import { CheckoutOperations } from "../../operations/checkouts";
import { checkoutView, voidView } from "../../views/checkouts";
import { credentialOf, requireScope, type Credential } from "../auth";
import type { GatewayDeps } from "../deps";
import { validateBody } from "../validate";

/** /v1/checkouts: a seller creates (and /v1/escrow-checkouts: creates escrow ones), lists, reads, arms, changes, voids, restores and extends checkouts. */

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header, when sent; 422 when malformed (checkout creates, spending-wallet pay). */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get("idempotency-key");
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new ProblemError("invalid-request", {
      message: "Invalid Idempotency-Key.",
      errors: [{ field: "Idempotency-Key", reason: "must be 1 to 255 visible ASCII characters" }],
    });
  }
  return key;
}

export function checkoutRoutes(deps: GatewayDeps, quotes: FaceQuotes, checkouts = new CheckoutOperations(deps, quotes)): Router {
  const { clients, settings } = deps;
  const router = Router();

  /** A create answers 201, and a repeat of an Idempotency-Key says it is the original answer. */
  type Create = (cred: Credential, body: unknown, opts: { idempotencyKey?: string }) => Promise<{ checkout: unknown; replayed: boolean }>;
  const created = (create: Create) => async (req: Request, res: Response) => {
    const idempotencyKey = idempotencyKeyOf(req);
    const r = await create(credentialOf(req), req.body ?? {}, idempotencyKey !== undefined ? { idempotencyKey } : {});
    if (r.replayed) res.setHeader("Idempotency-Replayed", "true");
    res.status(201).json(r.checkout);
  };

  router.post(
    "/v1/checkouts",
    requireScope(clients, "payments"),
    created((cred, body, opts) => checkouts.create(cred, body, opts)),
  );
  router.post(
    "/v1/escrow-checkouts",
    requireScope(clients, "payments"),
    created((cred, body, opts) => checkouts.createEscrow(cred, body, opts)),
  );

  router.get("/v1/checkouts", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await checkouts.list(credentialOf(req), req.query));
  });

  router.get("/v1/checkouts/:id", requireScope(clients, "read_only"), async (req, res) => {
    res.json(await checkouts.get(credentialOf(req), String(req.params.id)));
  });

  router.post("/v1/checkouts/:id/go-live", requireScope(clients, "payments"), async (req, res) => {
    res.json(await checkouts.goLive(credentialOf(req), String(req.params.id)));
  });

  // Every change below can change what a face answers: its cached 402s are dropped at once.
  router.patch("/v1/checkouts/:id", requireScope(clients, "payments"), async (req, res) => {
    const checkout = await checkouts.update(credentialOf(req), String(req.params.id), req.body ?? {});
    res.json(checkoutView(checkout, settings.baseUrl));
  });

  router.delete("/v1/checkouts/:id", requireScope(clients, "payments"), async (req, res) => {
    const cred = credentialOf(req);
    const r = await clients.catalog.voidCheckout({ accountId: cred.accountId, actor: cred.actor, checkoutId: String(req.params.id) });
    forgetFaces(quotes, String(req.params.id));
    res.json(voidView(r, settings.baseUrl));
  });

  router.post("/v1/checkouts/:id/restore", requireScope(clients, "payments"), async (req, res) => {
    const cred = credentialOf(req);
    const r = await clients.catalog.restoreCheckout({ accountId: cred.accountId, actor: cred.actor, checkoutId: String(req.params.id) });
    forgetFaces(quotes, String(req.params.id));
    res.json({ ...checkoutView(answered(r.checkout, "checkout"), settings.baseUrl), restored: r.restored });
  });

  router.post("/v1/checkouts/:id/extend", requireScope(clients, "payments"), async (req, res) => {
    const body = validateBody("CheckoutExtend", req.body);
    const cred = credentialOf(req);
    const r = await clients.catalog.extendCheckout({
      accountId: cred.accountId,
      actor: cred.actor,
      checkoutId: String(req.params.id),
      ...(body.expires_in_minutes !== null ? { expiresInMinutes: BigInt(body.expires_in_minutes) } : {}),
    });
    forgetFaces(quotes, String(req.params.id));
    res.json(checkoutView(answered(r.checkout, "checkout"), settings.baseUrl));
  });

  return router;
}
