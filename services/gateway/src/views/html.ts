import { createHash } from "node:crypto";

/** Escapes text for HTML element content and attribute values. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The CSP source that allows exactly one inline element's text (a <style> or a <script>): nothing else can apply. */
export const cspHash = (text: string): string => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
