import { csvField, csvLine, RECEIPT_CSV_COLUMNS } from "../src/views/receipts-csv";

/** The ledger export's CSV: RFC 4180 quoting, and cells a spreadsheet would run as formulas neutralised. */
describe("receipts CSV", () => {
  it.each([
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\r\nlines", '"two\r\nlines"'],
    ["=1+1", "'=1+1"],
    ["+42", "'+42"],
    ["-s1", "'-s1"],
    ["@SUM(A1)", "'@SUM(A1)"],
    ["\tTAB", "'\tTAB"],
    ['=HYPERLINK("x","y")', `"'=HYPERLINK(""x"",""y"")"`],
    ["", ""],
  ])("%j is written %j", (value, written) => {
    expect(csvField(value)).toBe(written);
  });

  it("writes numbers, booleans and absent values as they are (a number is never taken for a formula)", () => {
    expect(csvLine([-1, 110500, true, null, undefined])).toBe("-1,110500,true,,\r\n");
  });

  it("names every column once, parties flattened", () => {
    expect(new Set(RECEIPT_CSV_COLUMNS).size).toBe(RECEIPT_CSV_COLUMNS.length);
    expect(RECEIPT_CSV_COLUMNS).toEqual(expect.arrayContaining(["sold_by", "buyer_name", "buyer_email", "buyer_ref", "seller_name", "seller_ref"]));
  });
});
