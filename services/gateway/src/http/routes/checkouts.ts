import { answered } from "@c402/rpc";
import { createHash } from "node:crypto";
import { ProblemError } from "@c402/problems";
import { Router } from "express";
import { CHECKOUT_NOT_YET_FIELDS } from "../../domain/request-schemas";
import { checkoutSummaryView, checkoutView } from "../../domain/views";
import { credentialOf, requireScope } from "../auth";
import type { GatewayDeps } from "../deps";
import { createdAtKey, pageOf, pageRequestOf, servicePage } from "../pagination";
import { validateBody } from "../validate";
import { FACE_QUOTE_VARIANTS, type FaceQuotes } from "./faces";

type Goods = Record<string, unknown> | unknown[] | string | null;

interface CheckoutCreateBody {
  title: string;
  price_usd: string;
  pay_to?: string;
  description?: string | null;
  fulfillment?: string;
  payload?: Goods;
  reusable?: boolean;
  test_mode?: boolean | null;
  expires_in_minutes?: number | null;
  input_schema?: Goods;
  output_schema?: Goods;
  example_input?: Goods;
  example_output?: Goods;
  freshness?: string | null;
  coverage?: string | null;
  source?: string | null;
  constraints?: string | null;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON text of a goods value, or undefined for absent/null. */
const jsonOf = (v: Goods | undefined) => (v === undefined || v === null ? undefined : JSON.stringify(v));

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

export function checkoutRoutes({ clients, settings }: GatewayDeps, quotes: FaceQuotes): Router {
  const router = Router();

  router.post("/v1/checkouts", requireScope(clients, "payments"), async (req, res) => {
    const raw = (req.body ?? {}) as Record<string, unknown>;
    const notYet = CHECKOUT_NOT_YET_FIELDS.filter((f) => typeof raw === "object" && raw !== null && f in raw).map((field) => ({
      field,
      reason: "is part of the spec but not available on this deployment yet",
    }));
    const stripped = Object.fromEntries(Object.entries(raw).filter(([k]) => !(CHECKOUT_NOT_YET_FIELDS as readonly string[]).includes(k)));
    const body = validateBody<CheckoutCreateBody>("CheckoutCreate", Array.isArray(raw) ? raw : stripped, notYet);
    const idempotencyKey = req.get("idempotency-key");
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new ProblemError("invalid-request", {
        message: "Invalid Idempotency-Key.",
        errors: [{ field: "Idempotency-Key", reason: "must be 1 to 255 visible ASCII characters" }],
      });
    }
    const cred = credentialOf(req);
    const r = await clients.catalog.createCheckout({
      accountId: cred.accountId,
      createdWithLiveKey: cred.mode === "live",
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      requestFingerprint: createHash("sha256").update(canonical(raw)).digest("hex"),
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
    quotes.invalidate(String(req.params.id), FACE_QUOTE_VARIANTS);
    const view = checkoutView(answered(r.checkout, "checkout"), settings.baseUrl);
    res.json({
      ...view,
      already_live: r.alreadyLive,
      rehearsal: { test_url: view.test_url, note: "The rehearsal face keeps settling simulated payments at test_url; it can never be armed." },
    });
  });

  return router;
}
