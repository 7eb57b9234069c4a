/**
 * bytea in and out of PGlite by Node's native hex codec. PGlite's own
 * converts byte by byte in JavaScript (`parseInt` per pair of digits, a string
 * per byte), which the paid-path profile found costing as much as the
 * statements that carry the bytes: every event's envelope crosses as bytea
 * three times (outbox, bus, webhooks). Same contract as PGlite's: a
 * `Uint8Array` of its own in each direction, PostgreSQL's hex format (`\x…`,
 * the default `bytea_output`) on the wire.
 */
export function parseBytea(text: string): Uint8Array {
  if (!text.startsWith("\\x")) throw new Error("bytea not in hex format (bytea_output must be hex)");
  const bytes = new Uint8Array((text.length - 2) >>> 1);
  // A Buffer over the array's own memory: decoded in place, nothing shared with Node's buffer pool.
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).write(text.slice(2), "hex");
  return bytes;
}

export function serializeBytea(value: unknown): string {
  if (!(value instanceof Uint8Array)) throw new Error("Invalid input for bytea type");
  return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex")}`;
}
