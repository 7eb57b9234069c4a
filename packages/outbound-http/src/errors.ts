import type { HostClass } from "./host-class";

export type RefusalReason = "blocked-address" | "bad-url" | "too-many-redirects" | "redirect-downgrade" | "too-large" | "timeout" | "unreachable";

/**
 * Every refused or failed outbound call rejects with this. Messages name at most an origin
 * (scheme, host, port) and an error code: never a path, query, header or credential, so they
 * are safe to log and to show to the seller who configured the URL.
 */
export class OutboundRefused extends Error {
  override readonly name = "OutboundRefused";
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly addressClass?: HostClass,
    /** The underlying system or undici error code, when there was one (ECONNREFUSED, ...). */
    readonly code?: string,
  ) {
    super(`${reason}: ${message}`);
  }
}

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"]);

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Finds our own refusal, or the first error code, along an error's cause chain. */
function inspect(err: unknown): { refused?: OutboundRefused; code?: string; badPort?: boolean } {
  let code: string | undefined;
  let badPort = false;
  for (let e: unknown = err, depth = 0; e != null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof OutboundRefused) return { refused: e };
    code ??= errorCode(e);
    // undici's fetch refuses the fetch standard's "bad ports" (25, 6000, ...) without an error code.
    badPort ||= e instanceof Error && e.message === "bad port";
  }
  return { code, badPort };
}

/** Maps any failure (undici's "fetch failed", a system error, a stream error) to OutboundRefused. */
export function toRefusal(err: unknown, origin: string): OutboundRefused {
  const { refused, code, badPort } = inspect(err);
  if (refused) return refused;
  if (badPort) return new OutboundRefused("bad-url", `${origin}: port refused by fetch (bad port list)`);
  if (code === "UND_ERR_RES_EXCEEDED_MAX_SIZE") return new OutboundRefused("too-large", `${origin}: response too large`, undefined, code);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new OutboundRefused("timeout", `${origin}: ${code}`, undefined, code);
  return new OutboundRefused("unreachable", `${origin}: ${code ?? "connection failed"}`, undefined, code);
}
