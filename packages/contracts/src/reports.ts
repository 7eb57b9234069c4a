/**
 * The words of reports on the wire (catalog.v1 Report and FileReportRequest,
 * events.catalog.v1.CheckoutReported, the JSON API), in one place: the
 * contracts carry them as strings, constrained to these sets.
 */

/** The spec's closed set of report categories (proto/catalog/v1/reports.proto lists the same). */
export const REPORT_CATEGORIES = [
  "not_delivered",
  "wrong_data",
  "stale_data",
  "schema_changed",
  "shape_not_as_described",
  "too_slow",
  "unauthorized_charge",
  "suspected_fraud",
  "other",
] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];

/** `buyer`: the report names a receipt of the checkout (the payment is attached); `anonymous`: it names none. */
export const REPORT_KINDS = ["buyer", "anonymous"] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

export const REPORT_STATUSES = ["open", "acknowledged", "resolved"] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];
