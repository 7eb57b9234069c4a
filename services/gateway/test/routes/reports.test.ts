import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogReportsV1, identityV1, paymentsV1 } from "@c402/contracts";
import { ProblemError } from "@c402/problems";
import { REPORT_LIMITS } from "../../src/http/report-limits";
import { REPORT_NEXT } from "../../src/views/reports";
import {
  ACCOUNT_ID,
  BASE_URL,
  bodyOf,
  CHECKOUT_ID,
  getCheckout,
  PAYER,
  PAYMENT_ID,
  receipt,
  recorded,
  resolveCredential,
  SELLER_KEY,
  servers,
  TX_HASH,
} from "../support/fake-gateway";

/** Reports (routes/reports.ts): filing (public, validated, receipt-checked, rate limited), the seller's lists and PATCH. */

const serve = servers();
const json = { "content-type": "application/json" };
const auth = { authorization: `Bearer ${SELLER_KEY}` };
const REPORT_ID = "rpt_Report000000000000000000";
const OTHER_CHECKOUT = "chk_OtherCheckout00000000000";
const CREATED = new Date("2026-11-22T10:00:00.000Z");

function report(init: MessageInitShape<typeof catalogReportsV1.ReportSchema> = {}): catalogReportsV1.Report {
  return create(catalogReportsV1.ReportSchema, {
    id: REPORT_ID,
    checkoutId: CHECKOUT_ID,
    accountId: ACCOUNT_ID,
    category: "stale_data",
    kind: "anonymous",
    status: "open",
    testMode: false,
    createdAt: timestampFromDate(CREATED),
    updatedAt: timestampFromDate(CREATED),
    ...init,
  });
}

/** catalog.fileReport answering the report it was asked for (a buyer one when a payment came along). */
const fileReport = async (req: MessageInitShape<typeof catalogReportsV1.FileReportRequestSchema>) =>
  create(catalogReportsV1.FileReportResponseSchema, {
    report: report({
      checkoutId: req.checkoutId ?? "",
      category: req.category ?? "",
      ...(req.detail !== undefined ? { detail: req.detail } : {}),
      ...(req.payment ? { kind: "buyer", payment: req.payment, testMode: req.payment.testMode ?? false } : {}),
    }),
  });

const getReceipt =
  (init: MessageInitShape<typeof paymentsV1.ReceiptSchema> = {}) =>
  async () =>
    create(paymentsV1.GetReceiptResponseSchema, { receipt: receipt(init), status: paymentsV1.PaymentStatus.SETTLED, txHash: TX_HASH });

function fileFakes(payments: { getReceipt?: () => Promise<paymentsV1.GetReceiptResponse> } = {}) {
  return recorded({
    catalog: { fileReport, getCheckout: getCheckout() },
    payments: { getReceipt: payments.getReceipt ?? getReceipt() },
  });
}

const file = (url: string, body: unknown, checkoutId = CHECKOUT_ID) =>
  fetch(`${url}/v1/checkouts/${checkoutId}/reports`, { method: "POST", headers: json, body: typeof body === "string" ? body : JSON.stringify(body) });

describe("POST /v1/checkouts/{id}/reports", () => {
  it("files an anonymous report without any credential: 201 with what happens next, and never a refund", async () => {
    const { fakes, of, called } = fileFakes();
    const { url } = await serve.app(fakes);
    const res = await file(url, { category: "stale_data", detail: "Yesterday's forecast." });
    expect(res.status).toBe(201);
    expect(await bodyOf(res)).toEqual({
      id: REPORT_ID,
      object: "report",
      checkout_id: CHECKOUT_ID,
      category: "stale_data",
      kind: "anonymous",
      receipt_id: null,
      status: "open",
      created_at: CREATED.toISOString(),
      refunds: false,
      next: REPORT_NEXT,
    });
    expect(REPORT_NEXT).toMatch(/acknowledge or resolve/);
    expect(REPORT_NEXT).toMatch(/never refunds/);
    expect(of("fileReport")).toEqual([{ checkoutId: CHECKOUT_ID, category: "stale_data", detail: "Yesterday's forecast." }]);
    expect(called()).toEqual(["catalog.fileReport"]);
  });

  it("with a receipt of this checkout: a buyer report with the payment as the receipt shows it", async () => {
    const { fakes, of } = fileFakes();
    const { url } = await serve.app(fakes);
    const res = await file(url, { category: "not_delivered", receipt_id: PAYMENT_ID });
    expect(res.status).toBe(201);
    expect(await bodyOf(res)).toMatchObject({ kind: "buyer", receipt_id: PAYMENT_ID });
    expect(of("getReceipt")).toEqual([{ paymentId: PAYMENT_ID }]);
    expect(of("fileReport")).toEqual([
      {
        checkoutId: CHECKOUT_ID,
        category: "not_delivered",
        payment: {
          paymentId: PAYMENT_ID,
          amountUsd: "0.10",
          total: 110_500n,
          network: "eip155:84532",
          payer: PAYER,
          subject: "sub_Buyer0000000000000000000",
          txHash: TX_HASH,
          testMode: true,
          settledAt: timestampFromDate(new Date("2025-01-02T03:05:00.000Z")),
          deliveryOutcome: "delivered",
        },
      },
    ]);
  });

  it.each([
    ["a receipt of another checkout", getReceipt({ checkoutId: OTHER_CHECKOUT })],
    ["an unknown receipt", async () => Promise.reject(new ProblemError("not-found", "No such receipt."))],
    ["a payment not settled yet", async () => create(paymentsV1.GetReceiptResponseSchema, { status: paymentsV1.PaymentStatus.PENDING, txHash: TX_HASH })],
  ])("refuses %s alike: 422 naming receipt_id, nothing filed", async (_what, answer) => {
    const { fakes, of } = fileFakes({ getReceipt: answer });
    const { url } = await serve.app(fakes);
    const res = await file(url, { category: "unauthorized_charge", receipt_id: PAYMENT_ID });
    expect(res.status).toBe(422);
    const body = await bodyOf(res);
    expect(body.errors).toEqual([{ field: "receipt_id", reason: "is not a receipt of this checkout" }]);
    expect(body.detail.message).toBe("The receipt named is not one of this checkout's.");
    expect(of("fileReport")).toEqual([]);
  });

  it("an unknown checkout is 404 whether or not a receipt is named", async () => {
    const missing = async () => Promise.reject(new ProblemError("not-found", "No such checkout."));
    const { fakes } = recorded({ catalog: { fileReport: missing, getCheckout: missing }, payments: { getReceipt: getReceipt() } });
    const { url } = await serve.app(fakes);
    expect((await file(url, { category: "other" })).status).toBe(404);
    expect((await file(url, { category: "other", receipt_id: PAYMENT_ID })).status).toBe(404);
  });

  it.each([
    ["no category", { detail: "x" }, "category", "is required"],
    ["a category outside the set", { category: "refund" }, "category", "must be equal to one of the allowed values"],
    ["a detail of 2001 characters", { category: "other", detail: "d".repeat(2001) }, "detail", "must NOT have more than 2000 characters"],
    ["a malformed receipt_id", { category: "other", receipt_id: "chk_WeatherParis000000000000" }, "receipt_id", 'must match pattern "^pay_[0-9A-Za-z]{24}$"'],
    ["an unknown field", { category: "other", refund: true }, "refund", "is not a known field"],
  ])("refuses %s with 422 naming the field, asking no service", async (_what, body, field, reason) => {
    const { fakes, called } = fileFakes();
    const { url } = await serve.app(fakes);
    const res = await file(url, body);
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors).toEqual([{ field, reason }]);
    expect(called()).toEqual([]);
  });

  it("answers 404 for a path id that cannot be a checkout, asking no service", async () => {
    const { fakes, called } = fileFakes();
    const { url } = await serve.app(fakes);
    expect((await file(url, { category: "other" }, PAYMENT_ID)).status).toBe(404);
    expect(called()).toEqual([]);
  });

  it("rate limits anonymous attempts per address and checkout, then per address: 429 with Retry-After, nothing filed", async () => {
    const { fakes, of } = fileFakes();
    const { url } = await serve.app(fakes);
    const statuses: number[] = [];
    for (let i = 0; i <= REPORT_LIMITS.anonymousPerAddressAndCheckout; i++) statuses.push((await file(url, { category: "too_slow" })).status);
    expect(statuses).toEqual([...Array(REPORT_LIMITS.anonymousPerAddressAndCheckout).fill(201), 429]);
    const limited = await file(url, { category: "too_slow" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(REPORT_LIMITS.windowSeconds - 60);
    expect((await bodyOf(limited)).type).toMatch(/\/problems\/rate-limited$/);
    expect(of("fileReport")).toHaveLength(REPORT_LIMITS.anonymousPerAddressAndCheckout);

    // Other checkouts still take reports from this address until its hourly budget of attempts (the two refused ones too) is spent.
    let other = 0;
    let last = 201;
    while (last === 201) {
      last = (await file(url, { category: "too_slow" }, `chk_Checkout${String(other++).padStart(16, "0")}`)).status;
    }
    expect(last).toBe(429);
    expect(of("fileReport")).toHaveLength(REPORT_LIMITS.anonymousPerAddress - 2);
  });

  it("rate limits buyer reports per receipt, apart from the anonymous budget", async () => {
    const { fakes, of } = fileFakes();
    const { url } = await serve.app(fakes);
    for (let i = 0; i < REPORT_LIMITS.anonymousPerAddressAndCheckout; i++) await file(url, { category: "other" });
    expect((await file(url, { category: "other" })).status).toBe(429);
    const statuses: number[] = [];
    for (let i = 0; i <= REPORT_LIMITS.buyerPerReceipt; i++) statuses.push((await file(url, { category: "not_delivered", receipt_id: PAYMENT_ID })).status);
    expect(statuses).toEqual([...Array(REPORT_LIMITS.buyerPerReceipt).fill(201), 429]);
    expect(of("fileReport")).toHaveLength(REPORT_LIMITS.anonymousPerAddressAndCheckout + REPORT_LIMITS.buyerPerReceipt);
  });
});

describe("the seller's reports", () => {
  const withPayment = report({
    kind: "buyer",
    testMode: true,
    detail: "Nothing came back.",
    status: "acknowledged",
    note: "Looking into it.",
    acknowledgedAt: timestampFromDate(CREATED),
    payment: {
      paymentId: PAYMENT_ID,
      amountUsd: "0.10",
      total: 110_500n,
      network: "eip155:84532",
      payer: PAYER,
      subject: "sub_Buyer0000000000000000000",
      txHash: TX_HASH,
      testMode: true,
      settledAt: timestampFromDate(CREATED),
      deliveryOutcome: "delivered",
    },
  });

  function listFakes(scope = identityV1.Scope.READ_ONLY, answer = [withPayment, report({ id: "rpt_Report000000000000000001" })]) {
    return recorded({
      identity: { resolveCredential: resolveCredential(scope) },
      catalog: {
        listReports: async () => create(catalogReportsV1.ListReportsResponseSchema, { reports: answer }),
        updateReport: async (req: MessageInitShape<typeof catalogReportsV1.UpdateReportRequestSchema>) =>
          create(catalogReportsV1.UpdateReportResponseSchema, {
            report: report({ status: req.status ?? "", ...(req.note !== undefined ? { note: req.note } : {}) }),
          }),
      },
    });
  }

  it("GET /v1/reports: a read_only key lists the account's reports with the attached payment, one more asked than shown", async () => {
    const { fakes, of } = listFakes();
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/reports?limit=1`, { headers: auth });
    expect(res.status).toBe(200);
    const body = await bodyOf(res);
    expect(body).toEqual({
      reports: [
        {
          id: REPORT_ID,
          object: "report",
          checkout_id: CHECKOUT_ID,
          category: "stale_data",
          detail: "Nothing came back.",
          kind: "buyer",
          status: "acknowledged",
          note: "Looking into it.",
          payment: {
            id: PAYMENT_ID,
            amount_usd: "0.10",
            total: 110500,
            network: "eip155:84532",
            payer: PAYER,
            subject: "sub_Buyer0000000000000000000",
            tx_hash: TX_HASH,
            test_mode: true,
            settled_at: CREATED.toISOString(),
            delivery: { outcome: "delivered" },
            receipt_url: `${BASE_URL}/r/${PAYMENT_ID}`,
          },
          test_mode: true,
          created_at: CREATED.toISOString(),
          updated_at: CREATED.toISOString(),
          acknowledged_at: CREATED.toISOString(),
          resolved_at: null,
        },
      ],
      has_more: true,
      next_cursor: expect.any(String),
    });
    expect(of("listReports")).toEqual([{ accountId: ACCOUNT_ID, pageSize: 2 }]);

    await fetch(`${url}/v1/reports?cursor=${body.next_cursor}`, { headers: auth });
    expect(of("listReports")[1]).toEqual({ accountId: ACCOUNT_ID, pageSize: 51, after: { createdAt: timestampFromDate(CREATED), id: REPORT_ID } });
  });

  it("GET /v1/checkouts/{id}/reports asks for that checkout's reports; an anonymous report has payment null", async () => {
    const { fakes, of } = listFakes(identityV1.Scope.READ_ONLY, [report()]);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/checkouts/${CHECKOUT_ID}/reports`, { headers: auth });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toMatchObject({
      reports: [{ id: REPORT_ID, kind: "anonymous", payment: null, detail: null, note: null }],
      has_more: false,
      next_cursor: null,
    });
    expect(of("listReports")).toEqual([{ accountId: ACCOUNT_ID, checkoutId: CHECKOUT_ID, pageSize: 51 }]);
  });

  it("lists need a credential (401) and a well-formed page (422)", async () => {
    const { fakes, called } = listFakes();
    const { url } = await serve.app(fakes);
    expect((await fetch(`${url}/v1/reports`)).status).toBe(401);
    expect((await fetch(`${url}/v1/checkouts/${CHECKOUT_ID}/reports`)).status).toBe(401);
    const bad = await fetch(`${url}/v1/reports?limit=0`, { headers: auth });
    expect(bad.status).toBe(422);
    expect((await bodyOf(bad)).errors).toEqual([expect.objectContaining({ field: "limit" })]);
    expect(called().filter((c) => c.startsWith("catalog."))).toEqual([]);
  });

  it("PATCH /v1/reports/{id} passes the change with the credential's actor and answers the report", async () => {
    const { fakes, of } = listFakes(identityV1.Scope.PAYMENTS);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/reports/${REPORT_ID}`, {
      method: "PATCH",
      headers: { ...auth, ...json },
      body: JSON.stringify({ status: "resolved", note: "Fixed the feed." }),
    });
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toMatchObject({ id: REPORT_ID, object: "report", status: "resolved", note: "Fixed the feed." });
    expect(of("updateReport")).toEqual([
      { accountId: ACCOUNT_ID, actor: "key:sk_test_abcd", reportId: REPORT_ID, status: "resolved", note: "Fixed the feed." },
    ]);
  });

  it.each([
    ["status open", { status: "open" }, "status"],
    ["no status", { note: "x" }, "status"],
    ["a note of 2001 characters", { status: "acknowledged", note: "n".repeat(2001) }, "note"],
    ["an unknown field", { status: "resolved", note: "x", refund: true }, "refund"],
  ])("PATCH refuses %s with 422 naming the field, without asking catalog", async (_what, body, field) => {
    const { fakes, of } = listFakes(identityV1.Scope.PAYMENTS);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/reports/${REPORT_ID}`, { method: "PATCH", headers: { ...auth, ...json }, body: JSON.stringify(body) });
    expect(res.status).toBe(422);
    expect((await bodyOf(res)).errors).toEqual([expect.objectContaining({ field })]);
    expect(of("updateReport")).toEqual([]);
  });

  it("PATCH needs scope payments (403 naming it); catalog's 409 passes through", async () => {
    const { fakes } = listFakes(identityV1.Scope.READ_ONLY);
    const { url } = await serve.app(fakes);
    const refused = await fetch(`${url}/v1/reports/${REPORT_ID}`, {
      method: "PATCH",
      headers: { ...auth, ...json },
      body: JSON.stringify({ status: "acknowledged" }),
    });
    expect(refused.status).toBe(403);
    expect(await bodyOf(refused)).toMatchObject({ needed_scope: "payments" });

    const conflict = recorded({
      identity: { resolveCredential: resolveCredential(identityV1.Scope.PAYMENTS) },
      catalog: { updateReport: async () => Promise.reject(new ProblemError("conflict", "This report is resolved.")) },
    });
    const second = await serve.app(conflict.fakes);
    const res = await fetch(`${second.url}/v1/reports/${REPORT_ID}`, {
      method: "PATCH",
      headers: { ...auth, ...json },
      body: JSON.stringify({ status: "acknowledged" }),
    });
    expect(res.status).toBe(409);
  });

  it("there is no DELETE: 405 naming PATCH", async () => {
    const { fakes } = listFakes(identityV1.Scope.FULL);
    const { url } = await serve.app(fakes);
    const res = await fetch(`${url}/v1/reports/${REPORT_ID}`, { method: "DELETE", headers: auth });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("PATCH");
  });
});
