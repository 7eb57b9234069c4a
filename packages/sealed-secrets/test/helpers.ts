import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { SealedSecretError } from "../src";

/** Segment positions in `v1.<keyId>.<wrappedDek>.<iv>.<ct>.<tag>`. */
export const SEGMENTS = { wrappedDek: 2, iv: 3, ct: 4, tag: 5 } as const;
export type SegmentName = keyof typeof SEGMENTS;
export const SEGMENT_NAMES = Object.keys(SEGMENTS) as SegmentName[];

/** A fresh random key entry `id:base64` and its bytes (for leak checks). */
export function keyEntry(id: string): { text: string; key: Buffer } {
  const key = randomBytes(32);
  return { text: `${id}:${key.toString("base64")}`, key };
}

export function segmentBytes(sealed: string, segment: SegmentName): Buffer {
  return Buffer.from(sealed.split(".")[SEGMENTS[segment]]!, "base64url");
}

export function replaceSegment(sealed: string, segment: SegmentName, bytes: Buffer): string {
  const parts = sealed.split(".");
  parts[SEGMENTS[segment]] = bytes.toString("base64url");
  return parts.join(".");
}

/** The sealed value with one bit of one decoded segment flipped (re-encoded canonically). */
export function flipBit(sealed: string, segment: SegmentName, bit: number): string {
  const bytes = Buffer.from(segmentBytes(sealed, segment));
  bytes[bit >> 3]! ^= 1 << (bit & 7);
  return replaceSegment(sealed, segment, bytes);
}

/** The SealedSecretError `fn` throws (fails the test when it returns or throws something else). */
export function sealedError(fn: () => unknown): SealedSecretError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SealedSecretError) return error;
    throw new Error(`expected a SealedSecretError, got ${String(error)}`);
  }
  throw new Error("expected a SealedSecretError, but the call succeeded");
}

/** Every textual form a key could leak in. */
export function keyForms(key: Buffer): string[] {
  return [key.toString("base64"), key.toString("base64url"), key.toString("hex"), key.toString("hex").toUpperCase(), key.toString("latin1")];
}

/** Plaintexts: empty, short and long ASCII/unicode (astral, combining, control), up to a few KB. */
export const plaintextArb: fc.Arbitrary<string> = fc.oneof(
  fc.constant(""),
  fc.string({ unit: "grapheme-ascii", maxLength: 64 }),
  fc.string({ unit: "binary-ascii", maxLength: 256 }),
  fc.string({ unit: "grapheme", maxLength: 128 }),
  fc.string({ unit: "binary", maxLength: 64 }),
  fc.string({ unit: "binary", minLength: 256, maxLength: 1536, size: "max" }),
);

/** Resource ids as AAD: ULID-like ids and arbitrary non-empty unicode. */
export const aadArb: fc.Arbitrary<string> = fc.oneof(
  fc.ulid().map((id) => `origin_${id}`),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 64 }),
  fc.string({ unit: "binary", minLength: 1, maxLength: 16 }),
);
