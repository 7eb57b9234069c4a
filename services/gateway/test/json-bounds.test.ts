import { JSON_BODY_LIMITS, jsonBoundsViolation } from "../src/http/json-bounds";

/** Nests `leaf` `levels` containers deep, alternating objects and arrays, without recursion. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

describe("JSON body bounds", () => {
  it("accepts ordinary bodies, including the deepest allowed", () => {
    expect(jsonBoundsViolation({ title: "Weather", payload: { temp_c: 21, tags: ["a", "b"] } })).toBeUndefined();
    expect(jsonBoundsViolation({ payload: nested(JSON_BODY_LIMITS.maxDepth - 1) })).toBeUndefined();
    expect(jsonBoundsViolation({ title: "café ☕ 𝄞" })).toBeUndefined();
  });

  it("refuses nesting past the limit, naming the top-level field, even thousands of levels deep (no recursion)", () => {
    expect(jsonBoundsViolation({ payload: nested(JSON_BODY_LIMITS.maxDepth) })).toEqual({ field: "payload", reason: "nests deeper than 32 levels" });
    expect(jsonBoundsViolation({ example_output: nested(100_000) })).toEqual({ field: "example_output", reason: "nests deeper than 32 levels" });
    expect(jsonBoundsViolation(nested(50))).toMatchObject({ reason: "nests deeper than 32 levels" });
  });

  it("refuses U+0000 in any string or member name, naming its path", () => {
    expect(jsonBoundsViolation({ title: "a\u0000b" })).toEqual({ field: "title", reason: "must not contain the character U+0000" });
    expect(jsonBoundsViolation({ payload: { notes: ["ok", "x\u0000"] } })).toEqual({
      field: "payload.notes.1",
      reason: "must not contain the character U+0000",
    });
    expect(jsonBoundsViolation({ payload: { "k\u0000": 1 } })).toEqual({ field: "payload", reason: "has a member name containing the character U+0000" });
  });

  it("refuses too many members, too many values and over-long strings", () => {
    const wide = Object.fromEntries(Array.from({ length: JSON_BODY_LIMITS.maxKeys + 1 }, (_, i) => [`k${i}`, i]));
    expect(jsonBoundsViolation({ input_schema: wide })).toEqual({ field: "input_schema", reason: "must have at most 1000 members" });
    expect(jsonBoundsViolation({ payload: new Array(JSON_BODY_LIMITS.maxValues).fill(0) })).toMatchObject({ field: "payload" });
    expect(jsonBoundsViolation({ description: "x".repeat(JSON_BODY_LIMITS.maxStringLength + 1) })).toMatchObject({ field: "description" });
  });
});
