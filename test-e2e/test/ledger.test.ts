import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { devchainWallets } from "../src/devchain";
import { baseUrl, call, newCheckout, newSeller, payRehearsal } from "../src/http";

/**
 * The receipts ledger over the running services: GET /v1/receipts (real
 * payments by default, the rehearsal ledger with test_mode=true, newest
 * first, keyset pages, a settlement range), GET /v1/receipts/{id} for the
 * owner only, and the CSV export (RFC 4180, parties flattened, formula cells
 * neutralised); a live sale's row matches what moved on the chain.
 */

/** RFC 4180 rows of a CSV text (quoted fields, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else field += c;
  }
  return rows;
}

describe("the receipts ledger", () => {
  let seller: Awaited<ReturnType<typeof newSeller>>;
  let receipts: string[];

  beforeAll(async () => {
    seller = await newSeller();
    const c = await newCheckout(seller.key, {
      title: 'Tides, "Brest"',
      reusable: true,
      parties: { buyer: { name: "=HYPERLINK(1)", email: "ada@example.com", ref: "+42" }, seller: { name: "Ada, Inc.", ref: "-s1" } },
    });
    receipts = [];
    for (let i = 0; i < 3; i++) receipts.push((await payRehearsal(c.id)).body.receipt.id as string);
  });

  it("lists real payments by default and the rehearsal ledger with test_mode=true, newest first, a page at a time", async () => {
    expect((await call("GET", "/v1/receipts", { key: seller.key })).body).toEqual({ receipts: [], has_more: false, next_cursor: null });
    const first = await call("GET", "/v1/receipts?test_mode=true&limit=2", { key: seller.key });
    expect(first.status).toBe(200);
    expect(first.body.receipts.map((r: { id: string }) => r.id)).toEqual([receipts[2], receipts[1]]);
    expect(first.body.receipts[0]).toMatchObject({ object: "receipt", test_mode: true, sold_by: null, total: 110500 });
    expect(first.body.has_more).toBe(true);
    const second = await call("GET", `/v1/receipts?test_mode=true&limit=2&cursor=${first.body.next_cursor}`, { key: seller.key });
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.body.receipts.map((r: { id: string }) => r.id)).toEqual([receipts[0]]);
  });

  it("filters by settlement range and sold_by, and refuses malformed filters (422 naming them)", async () => {
    const all = (await call("GET", "/v1/receipts?test_mode=true", { key: seller.key })).body.receipts as { id: string; settled_at: string }[];
    const middle = all[1]!.settled_at;
    const upTo = await call("GET", `/v1/receipts?test_mode=true&to=${encodeURIComponent(middle)}`, { key: seller.key });
    expect(upTo.body.receipts.every((r: { settled_at: string }) => r.settled_at < middle)).toBe(true);
    // A cursor past `to` (from another listing) is implied by it: the same rows.
    const newest = (await call("GET", "/v1/receipts?test_mode=true&limit=1", { key: seller.key })).body.next_cursor as string;
    const pastTo = await call("GET", `/v1/receipts?test_mode=true&to=${encodeURIComponent(middle)}&cursor=${newest}`, { key: seller.key });
    expect(pastTo.body.receipts).toEqual(upTo.body.receipts);
    const from = await call("GET", `/v1/receipts?test_mode=true&from=${encodeURIComponent(middle)}`, { key: seller.key });
    expect(from.body.receipts.length + upTo.body.receipts.length).toBe(3);
    expect((await call("GET", "/v1/receipts?test_mode=true&sold_by=some-platform", { key: seller.key })).body.receipts).toEqual([]);
    const bad = await call("GET", "/v1/receipts?test_mode=yes&from=yesterday", { key: seller.key });
    expect([bad.status, bad.body.errors.map((e: { field: string }) => e.field)]).toEqual([422, ["test_mode", "from"]]);
  });

  it("answers one receipt to its owner; another account's is 404", async () => {
    const own = await call("GET", `/v1/receipts/${receipts[0]}`, { key: seller.key });
    expect([own.status, own.body.id]).toEqual([200, receipts[0]]);
    const other = await newSeller();
    expect((await call("GET", `/v1/receipts/${receipts[0]}`, { key: other.key })).status).toBe(404);
    expect((await call("GET", "/v1/receipts/pay_000000000000000000000000", { key: seller.key })).status).toBe(404);
  });

  it("a receipt is made only by a settlement and never deleted: no create or delete route, and it outlives its checkout's removal", async () => {
    // A seller of its own: the other tests count this suite's seller's receipts.
    const owner = await newSeller();
    const c = await newCheckout(owner.key, { title: "Short-lived" });
    const receipt = (await payRehearsal(c.id)).body.receipt.id as string;
    for (const [method, path] of [
      ["POST", "/v1/receipts"],
      ["PUT", `/v1/receipts/${receipt}`],
      ["PATCH", `/v1/receipts/${receipt}`],
      ["DELETE", `/v1/receipts/${receipt}`],
      ["DELETE", `/r/${receipt}`],
    ] as const) {
      const r = await call(method, path, { key: owner.key, ...(method === "DELETE" ? {} : { body: { id: receipt, total: 1 } }) });
      expect([method, path, r.status]).toEqual([method, path, 405]);
    }
    // Voiding (the API's delete) stops sales, never the receipts of what it sold.
    expect((await call("DELETE", `/v1/checkouts/${c.id}`, { key: owner.key })).status).toBe(200);
    expect((await call("GET", `/v1/receipts/${receipt}`, { key: owner.key })).body).toMatchObject({ id: receipt, checkout_id: c.id });
    expect((await call("GET", `/r/${receipt}`)).status).toBe(200);
  });

  it("exports the ledger as CSV (RFC 4180), parties flattened, formula cells neutralised", async () => {
    const res = await fetch(`${baseUrl()}/v1/receipts/export?test_mode=true`, { headers: { authorization: `Bearer ${seller.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/csv");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="receipts-test.csv"');
    const text = await res.text();
    expect(text.endsWith("\r\n")).toBe(true);
    const [header, ...rows] = parseCsv(text);
    expect(header).toContain("buyer_name");
    expect(rows).toHaveLength(3);
    const row = Object.fromEntries(header!.map((h, i) => [h, rows[0]![i]]));
    expect(row).toMatchObject({
      id: receipts[2],
      title: 'Tides, "Brest"',
      total: "110500",
      test_mode: "true",
      buyer_name: "'=HYPERLINK(1)",
      buyer_email: "ada@example.com",
      buyer_ref: "'+42",
      seller_name: "Ada, Inc.",
      seller_ref: "'-s1",
    });
    const real = await fetch(`${baseUrl()}/v1/receipts/export`, { headers: { authorization: `Bearer ${seller.key}` } });
    expect(parseCsv(await real.text())).toHaveLength(1); // the header row only
  });

  it("a live sale's ledger row matches what moved on the chain, to the atomic unit", async () => {
    const chain = await devchainWallets(15);
    const buyer = await chain.fundedBuyer(1_000_000n);
    const c = await newCheckout(seller.key, { title: "Live tides", test_mode: false, reusable: true });
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: buyer });
    const paid = await wrapFetchWithPayment(fetch, client)(`${baseUrl()}/c/${c.id}`, { headers: { accept: "application/json" } });
    expect(paid.status).toBe(200);
    const spent = 1_000_000n - (await chain.balance(buyer.address));
    const [row] = (await call("GET", "/v1/receipts", { key: seller.key })).body.receipts as {
      total: number;
      provider_amount: number;
      fee_amount: number;
      payer: string;
    }[];
    expect(row).toMatchObject({ payer: buyer.address });
    expect(BigInt(row!.total)).toBe(spent);
    expect(row!.provider_amount + row!.fee_amount).toBe(row!.total);
  });
});
