import { createHash } from "node:crypto";
import { ProblemError } from "@c402/problems";
import { answered } from "@c402/rpc";
import { Router, type Request } from "express";
import { forgetFaces, type FaceQuotes } from "../../faces/answers";
import { checkoutSummaryView, checkoutView, goLiveView } from "../../views/checkouts";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { CHECKOUT_NOT_YET_FIELDS, type BodyOf } from "../request-schemas";
import { validateBodyOffering } from "../validate";

/** /v1/checkouts: a seller creates, lists, reads and arms checkouts. */

type CheckoutCreate = BodyOf<"CheckoutCreate">;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON text of a goods value, or undefined for absent/null. */
const jsonOf = (v: unknown) => (v === undefined || v === null ? undefined : JSON.stringify(v));

/** Key-sorted JSON text; its recursion is bounded because every body's depth is (json-bounds). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The body, validated; a field the spec names but this deployment does not offer yet is refused by name. */
function checkoutBodyOf(raw: unknown): CheckoutCreate {
  return validateBodyOffering("CheckoutCreate", raw, CHECKOUT_NOT_YET_FIELDS);
}

function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get("idempotency-key");
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new ProblemError("invalid-request", {
      message: "Invalid Idempotency-Key.",
      errors: [{ field: "Idempotency-Key", reason: "must be 1 to 255 visible ASCII characters" }],
    });
  }
  return key;
}

/** The checkout's own fields of catalog's CreateCheckout, from the body. */
function checkoutFieldsOf(body: CheckoutCreate) {
  return {
    title: body.title,
    priceUsd: body.price_usd,
    ...(body.pay_to !== undefined ? { payTo: body.pay_to } : {}),
    ...(typeof body.description === "string" ? { description: body.description } : {}),
    ...(body.fulfillment !== undefined ? { fulfillment: body.fulfillment } : {}),
    ...(jsonOf(body.payload) !== undefined ? { payloadJson: jsonOf(body.payload) } : {}),
    ...(body.reusable !== undefined ? { reusable: body.reusable } : {}),
    ...(typeof body.test_mode === "boolean" ? { testMode: body.test_mode } : {}),
    ...(typeof body.expires_in_minutes === "number" ? { expiresInMinutes: BigInt(body.expires_in_minutes) } : {}),
    offer: {
      ...(typeof body.freshness === "string" ? { freshness: body.freshness } : {}),
      ...(typeof body.coverage === "string" ? { coverage: body.coverage } : {}),
      ...(typeof body.source === "string" ? { source: body.source } : {}),
      ...(typeof body.constraints === "string" ? { constraints: body.constraints } : {}),
      ...(jsonOf(body.input_schema) !== undefined ? { inputSchemaJson: jsonOf(body.input_schema) } : {}),
      ...(jsonOf(body.output_schema) !== undefined ? { outputSchemaJson: jsonOf(body.output_schema) } : {}),
      ...(jsonOf(body.example_input) !== undefined ? { exampleInputJson: jsonOf(body.example_input) } : {}),
      ...(jsonOf(body.example_output) !== undefined ? { exampleOutputJson: jsonOf(body.example_output) } : {}),
    },
  };
}

export function checkoutRoutes({ clients, settings }: GatewayDeps, quotes: FaceQuotes): Router {
  const router = Router();

  router.post("/v1/checkouts", requireScope(clients, "payments"), async (req, res) => {
    const raw: unknown = req.body ?? {};
    const body = checkoutBodyOf(raw);
    const idempotencyKey = idempotencyKeyOf(req);
    const cred = credentialOf(req);
    const r = await clients.catalog.createCheckout({
      accountId: cred.accountId,
      createdWithLiveKey: cred.mode === "live",
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      requestFingerprint: createHash("sha256").update(canonical(raw)).digest("hex"),
      ...checkoutFieldsOf(body),
    });
    if (r.replayed) res.setHeader("Idempotency-Replayed", "true");
    res.status(201).json(checkoutView(answered(r.checkout, "checkout"), settings.baseUrl));
  });

  router.get("/v1/checkouts", requireScope(clients, "read_only"), async (req, res) => {
    const includeVoided = req.query.include_voided === "true";
    if (req.query.include_voided !== undefined && !["true", "false"].includes(String(req.query.include_voided))) {
      throw new ProblemError("invalid-request", { message: "Invalid query.", errors: [{ field: "include_voided", reason: "must be true or false" }] });
    }
    const page = pageRequestOf(req.query);
    const r = await clients.catalog.listCheckouts({ accountId: credentialOf(req).accountId, includeVoided, ...servicePage(page) });
    const { items, ...more } = pageOf(r.checkouts, page.limit, createdAtKey);
    res.json({ checkouts: items.map((c) => checkoutSummaryView(c, settings.baseUrl)), ...more });
  });

  router.get("/v1/checkouts/:id", requireScope(clients, "read_only"), async (req, res) => {
    const r = await clients.catalog.getCheckout({ checkoutId: String(req.params.id), accountId: credentialOf(req).accountId });
    res.json(checkoutView(answered(r.checkout, "checkout"), settings.baseUrl));
  });

  router.post("/v1/checkouts/:id/go-live", requireScope(clients, "payments"), async (req, res) => {
    const r = await clients.catalog.goLive({ accountId: credentialOf(req).accountId, checkoutId: String(req.params.id) });
    forgetFaces(quotes, String(req.params.id));
    res.json(goLiveView(answered(r.checkout, "checkout"), r.alreadyLive, settings.baseUrl));
  });

  return router;
}
