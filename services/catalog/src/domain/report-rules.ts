import { REPORT_CATEGORIES, type ReportCategory, type ReportStatus } from "@c402/contracts";
import { ProblemError, invalid, type FieldError } from "@c402/problems";

/**
 * Report rules. The spec fixes the categories (a closed set, REPORT_CATEGORIES
 * in @c402/contracts) and that a seller acknowledges or resolves a report with
 * a note; the statuses, transitions, the note rule and the text limits are our
 * choices (docs/decisions.md).
 */

/** Where a seller may move a report from each status: forward only, and a resolved report stays resolved. */
export const REPORT_TRANSITIONS: Record<ReportStatus, readonly ReportStatus[]> = {
  open: ["acknowledged", "resolved"],
  acknowledged: ["resolved"],
  resolved: [],
};

/** Characters (Unicode code points, as JSON Schema's maxLength counts them). */
export const REPORT_LIMITS = { detailMax: 2_000, noteMax: 2_000 };

const length = (text: string) => [...text].length;
const isCategory = (v: string): v is ReportCategory => (REPORT_CATEGORIES as readonly string[]).includes(v);

export interface FileInput {
  category: string;
  detail?: string | undefined;
}

/** A report's own fields, checked: the category is one of the set, the detail at most 2000 characters (empty or blank: none). */
export function validateFile(input: FileInput): { category: ReportCategory; detail: string | null } {
  const errors: FieldError[] = [];
  if (!isCategory(input.category)) errors.push({ field: "category", reason: `must be one of ${REPORT_CATEGORIES.join(", ")}` });
  if (input.detail !== undefined && length(input.detail) > REPORT_LIMITS.detailMax) {
    errors.push({ field: "detail", reason: `must be at most ${REPORT_LIMITS.detailMax} characters` });
  }
  if (errors.length) throw invalid(errors);
  const detail = input.detail === undefined || input.detail.trim() === "" ? null : input.detail;
  return { category: input.category as ReportCategory, detail };
}

export interface UpdateInput {
  status: string;
  note?: string | undefined;
}

/**
 * A seller's change, checked on its own: the status is `acknowledged` or
 * `resolved`; a note is at most 2000 characters; resolving needs a note (what
 * was done about it), acknowledging does not. A blank note counts as none.
 */
export function validateUpdate(input: UpdateInput): { status: "acknowledged" | "resolved"; note: string | null } {
  const errors: FieldError[] = [];
  const note = input.note === undefined || input.note.trim() === "" ? null : input.note;
  if (input.status !== "acknowledged" && input.status !== "resolved") errors.push({ field: "status", reason: "must be acknowledged or resolved" });
  if (note !== null && length(note) > REPORT_LIMITS.noteMax) errors.push({ field: "note", reason: `must be at most ${REPORT_LIMITS.noteMax} characters` });
  if (input.status === "resolved" && note === null) errors.push({ field: "note", reason: "is required to resolve a report (say what was done)" });
  if (errors.length) throw invalid(errors);
  return { status: input.status as "acknowledged" | "resolved", note };
}

/** 409 unless the report may move from `current` to `next`. */
export function assertTransition(current: ReportStatus, next: ReportStatus): void {
  if (REPORT_TRANSITIONS[current].includes(next)) return;
  const allowed = REPORT_TRANSITIONS[current];
  throw new ProblemError("conflict", {
    message:
      allowed.length === 0
        ? `This report is ${current}; a resolved report does not change again.`
        : `This report is ${current}; it can only become ${allowed.join(" or ")}.`,
    help: { retry_is_safe: false, fix: allowed.length === 0 ? "File nothing: the report is closed." : `Send status ${allowed.join(" or ")}.` },
  });
}
