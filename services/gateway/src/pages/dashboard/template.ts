import { escapeHtml } from "../../views/html";

/** Markup that is already safe: produced by `html`, never by concatenating what a user wrote. */
export class SafeHtml {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/**
 * The dashboard's templates: every interpolated value is escaped unless it
 * is itself `html` markup (arrays are joined, null/undefined/false render
 * nothing), so a seller's or buyer's text can never become markup.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? "");
  });
  return new SafeHtml(out);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}
