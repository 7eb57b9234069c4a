import { invalid } from "@c402/problems";
import type { NextFunction, Request, Response } from "express";

/**
 * Bounds on every JSON request body, whatever the route, checked right after
 * parsing and before anything reads the body. Free-form fields (the goods, the
 * offer card's schemas and examples, facilitator payloads) are stored and sent
 * back as they came, so a value that is too deep to serialise, or that
 * PostgreSQL refuses (a U+0000 in text or jsonb), must be refused here with a
 * 422 naming the field, before anything is written. With the depth bounded,
 * every later recursive walk (fingerprint, serialisation) is bounded too.
 */
export const JSON_BODY_LIMITS = {
  /** Containers inside the body; a JSON Schema or a goods document needs far fewer. */
  maxDepth: 32,
  /** Members of one object. */
  maxKeys: 1_000,
  /** Values in the whole body (the size limit alone allows about 256k). */
  maxValues: 100_000,
  /** Characters in one string or key. */
  maxStringLength: 256 * 1024,
};

export interface JsonBoundsViolation {
  field: string;
  reason: string;
}

interface Visit {
  value: unknown;
  depth: number;
  parent: Visit | undefined;
  key: string;
}

function fieldOf(visit: Visit): string {
  const keys: string[] = [];
  for (let v: Visit | undefined = visit; v?.parent; v = v.parent) keys.push(v.key);
  return keys.reverse().join(".") || "(body)";
}

/** The top-level member a visit is under: a depth violation names that, not a path thousands of levels long. */
function topFieldOf(visit: Visit): string {
  let v = visit;
  while (v.parent?.parent) v = v.parent;
  return v.parent ? v.key : "(body)";
}

/** The first way `body` breaks the bounds, walked without recursion, or undefined. */
export function jsonBoundsViolation(body: unknown, limits = JSON_BODY_LIMITS): JsonBoundsViolation | undefined {
  const stack: Visit[] = [{ value: body, depth: 0, parent: undefined, key: "" }];
  let values = 0;
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value } = visit;
    if (++values > limits.maxValues) return { field: topFieldOf(visit), reason: `has more than ${limits.maxValues} values in all` };
    if (typeof value === "string") {
      if (value.length > limits.maxStringLength) return { field: fieldOf(visit), reason: `must be at most ${limits.maxStringLength} characters` };
      if (value.includes("\u0000")) return { field: fieldOf(visit), reason: "must not contain the character U+0000" };
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (visit.depth >= limits.maxDepth) return { field: topFieldOf(visit), reason: `nests deeper than ${limits.maxDepth} levels` };
    const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    if (!Array.isArray(value) && entries.length > limits.maxKeys) return { field: fieldOf(visit), reason: `must have at most ${limits.maxKeys} members` };
    for (const [key, child] of entries) {
      const childVisit = { value: child, depth: visit.depth + 1, parent: visit, key };
      if (key.length > limits.maxStringLength) return { field: fieldOf(visit), reason: `has a member name over ${limits.maxStringLength} characters` };
      if (key.includes("\u0000")) return { field: fieldOf(visit), reason: "has a member name containing the character U+0000" };
      stack.push(childVisit);
    }
  }
  return undefined;
}

/** Refuses a parsed JSON body beyond the bounds with 422, naming the field. */
export function boundedJsonBodies(req: Request, _res: Response, next: NextFunction): void {
  if (req.body !== undefined) {
    const violation = jsonBoundsViolation(req.body);
    if (violation) throw invalid([violation], "The JSON body is too deep, too large or contains U+0000.");
  }
  next();
}
