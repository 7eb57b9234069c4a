/**
 * JSON text of an RPC answer, with bigints written as plain numbers: a Solana
 * validator answers u64 values (lamports, rentEpoch = 2^64-1) as JSON numbers
 * beyond 2^53, and @solana/kit parses them back to bigints.
 */
export function toJsonText(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((item) => toJsonText(item)).join(",")}]`;
  const fields = Object.entries(value)
    .filter(([, field]) => field !== undefined)
    .map(([key, field]) => `${JSON.stringify(key)}:${toJsonText(field)}`);
  return `{${fields.join(",")}}`;
}
