import { isIP } from "node:net";
import { fetch as undiciFetch } from "undici";
import { OutboundRefused } from "./errors";
import { Exchange, boundedBody } from "./exchange";
import { createGuardedAgent } from "./guarded-connect";
import { classifyHost } from "./host-class";
import { addressVerdict, isClassAllowed, resolvePolicy, type OutboundPolicy, type ResolvedPolicy } from "./policy";

/** A WHATWG fetch (pass it as `fetch` to the MCP SDK), plus `close()` for its connection pool. */
export type GuardedFetch = ((input: string | URL | Request, init?: RequestInit) => Promise<Response>) & {
  close(): Promise<void>;
  /**
   * What can be judged of a URL before any DNS lookup or socket (scheme,
   * credentials, a literal or special host), under this client's policy: the
   * refusal, or undefined. Where a name points is judged only at connect time.
   */
  refusalOf(url: URL): OutboundRefused | undefined;
};

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
// Fetch's "request-body-header names": they describe a body that a method change drops.
const BODY_HEADERS = ["content-encoding", "content-language", "content-location", "content-type", "content-length"];
const BODY_HEADER_SET: ReadonlySet<string> = new Set(BODY_HEADERS);

/** Redirects followed and final URL of a guarded response (for guardedRequest). */
export const exchangeInfo = new WeakMap<Response, { redirects: number; finalUrl: string }>();

function originOf(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

/** Scheme, userinfo and (for IP literals and special names) the host, before any socket. */
export function checkUrl(url: URL, policy: ResolvedPolicy): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new OutboundRefused("bad-url", `scheme ${url.protocol} is not allowed`);
  // Refused rather than stripped: `http://public.example@10.0.0.1/` is an attack, not a typo.
  if (url.username !== "" || url.password !== "") throw new OutboundRefused("bad-url", `${originOf(url)}: credentials in the URL`);
  const hostClass = classifyHost(url.hostname);
  if (hostClass === "name") return;
  const literal = url.hostname.replace(/^\[|\]$/g, "");
  const allowed = isIP(literal) ? addressVerdict(literal, policy).allowed : isClassAllowed(hostClass, policy);
  if (!allowed) throw new OutboundRefused("blocked-address", `${url.hostname} is ${hostClass}`, hostClass);
}

interface CallerRequest {
  url: URL;
  init: RequestInit;
}

// Only these init members are honoured: `dispatcher`, `socketPath` and the like are dropped, so a
// caller cannot route around the guarded Agent.
function callerRequest(input: string | URL | Request, init: RequestInit | undefined): CallerRequest {
  const isRequest = typeof input === "object" && !(input instanceof URL);
  const raw = isRequest ? (input as Request).url : String(input);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused("bad-url", "not an absolute URL");
  }
  const merged: RequestInit = {};
  if (isRequest) {
    const r = input as Request;
    Object.assign(merged, { method: r.method, headers: r.headers, body: r.body, signal: r.signal, redirect: r.redirect });
  }
  for (const key of ["method", "headers", "body", "signal", "redirect"] as const) {
    if (init?.[key] !== undefined) (merged as Record<string, unknown>)[key] = init[key];
  }
  return { url, init: merged };
}

interface Prepared {
  url: URL;
  method: string;
  headers: Headers;
  // Buffered so that a 307/308 can send it again; request bodies here are small JSON documents.
  body: Uint8Array | undefined;
  redirect: NonNullable<RequestInit["redirect"]>;
}

// A caller's body stream that stalls must not outlive the deadline.
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

async function prepare({ url, init }: CallerRequest, signal: AbortSignal): Promise<Prepared> {
  let request: Request;
  try {
    // The platform Request validates method and headers and derives the body's content type.
    request = new Request(url, { ...init, signal: undefined, duplex: "half" } as RequestInit);
  } catch {
    // Its message can quote a header value, which may be a credential.
    throw new OutboundRefused("bad-url", `${originOf(url)}: invalid request (method, headers or body)`);
  }
  const body = request.body ? new Uint8Array(await Promise.race([request.arrayBuffer(), untilAborted(signal)])) : undefined;
  return { url, method: request.method, headers: new Headers(request.headers), body, redirect: init.redirect ?? "follow" };
}

export function createGuardedFetch(options: OutboundPolicy = {}): GuardedFetch {
  const policy = resolvePolicy(options);
  const agent = createGuardedAgent(policy);

  async function send(req: Prepared, exchange: Exchange): Promise<Response> {
    let { url, method, body } = req;
    const headers = req.headers;
    for (let hops = 0; ; hops++) {
      checkUrl(url, policy);
      exchange.origin = originOf(url);
      const res = await undiciFetch(url, { method, headers: [...headers], body, redirect: "manual", signal: exchange.signal, dispatcher: agent });
      const location = REDIRECT_STATUSES.has(res.status) ? res.headers.get("location") : null;
      if (location === null || req.redirect === "manual" || (req.redirect !== "error" && policy.maxRedirects === 0)) {
        return wrap(res as unknown as Response, url, hops, method, exchange);
      }
      await res.body?.cancel().catch(() => {});
      if (req.redirect === "error" || hops >= policy.maxRedirects) {
        throw new OutboundRefused("too-many-redirects", `${exchange.origin}: more than ${req.redirect === "error" ? 0 : policy.maxRedirects} redirects`);
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new OutboundRefused("bad-url", `${exchange.origin} redirected to an invalid URL`);
      }
      if (url.protocol === "https:" && next.protocol === "http:") throw new OutboundRefused("redirect-downgrade", `${exchange.origin} redirected to http:`);
      // Fetch semantics: 303 turns anything but GET/HEAD into GET, and 301/302 turn POST into GET; the body goes.
      if ((res.status === 303 && method !== "GET" && method !== "HEAD") || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
        for (const name of BODY_HEADERS) headers.delete(name);
      }
      if (next.origin !== url.origin) {
        // Another host gets only the safe headers (content ones only with a body): no credential the
        // caller added, whatever its name. Once dropped they stay dropped, even if a later hop comes
        // back to the first origin.
        for (const name of [...headers.keys()]) {
          if (!policy.crossOriginHeaders.has(name) || (body === undefined && BODY_HEADER_SET.has(name))) headers.delete(name);
        }
      }
      url = next; // checkUrl at the top of the loop re-validates the hop
    }
  }

  function wrap(res: Response, url: URL, hops: number, method: string, exchange: Exchange): Response {
    const discard = () => void res.body?.cancel().catch(() => {});
    if (res.status < 200 || res.status > 599) {
      discard();
      throw new OutboundRefused("unreachable", `${exchange.origin}: unusable status ${res.status}`);
    }
    const declared = Number(res.headers.get("content-length") ?? NaN);
    if (method !== "HEAD" && declared > policy.maxResponseBytes) {
      discard();
      throw new OutboundRefused("too-large", `${exchange.origin}: response body of ${declared} bytes over ${policy.maxResponseBytes}`);
    }
    let body: ReadableStream<Uint8Array> | null = null;
    if (res.body && method !== "HEAD" && !NULL_BODY_STATUSES.has(res.status)) body = boundedBody(res.body, policy.maxResponseBytes, exchange);
    else {
      discard();
      exchange.finish();
    }
    // A platform Response (undici's own class differs from the global one), carrying the bounded body.
    const headers = new Headers();
    for (const [name, value] of res.headers) headers.append(name, value);
    const out = new Response(body, { status: res.status, statusText: res.statusText, headers });
    Object.defineProperties(out, { url: { value: url.href }, redirected: { value: hops > 0 } });
    exchangeInfo.set(out, { redirects: hops, finalUrl: url.href });
    return out;
  }

  const guardedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const caller = callerRequest(input, init);
    const exchange = new Exchange(policy.timeoutMs, caller.init.signal ?? undefined);
    exchange.origin = originOf(caller.url);
    try {
      checkUrl(caller.url, policy);
      return await send(await prepare(caller, exchange.signal), exchange);
    } catch (err) {
      throw exchange.fail(err);
    }
  };
  const refusalOf = (url: URL): OutboundRefused | undefined => {
    try {
      checkUrl(url, policy);
      return undefined;
    } catch (err) {
      if (err instanceof OutboundRefused) return err;
      throw err;
    }
  };
  return Object.assign(guardedFetch, { close: () => agent.close(), refusalOf });
}
