import { OutboundRefused, toRefusal } from "./errors";
import { exchangeInfo } from "./guarded-fetch";

export interface GuardedRequestOptions {
  method?: string;
  headers?: Record<string, string> | [string, string][] | Headers;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

export interface GuardedResult {
  status: number;
  headers: Headers;
  body: Buffer;
  finalUrl: string;
  redirects: number;
  elapsedMs: number;
}

/** One buffered exchange through a guarded fetch (the body is bounded by the fetch's maxResponseBytes). */
export async function guardedRequest(
  fetchFn: (input: string | URL, init?: RequestInit) => Promise<Response>,
  url: string | URL,
  options: GuardedRequestOptions = {},
): Promise<GuardedResult> {
  const started = performance.now();
  const res = await fetchFn(url, { method: options.method, headers: options.headers, body: options.body, signal: options.signal });
  let body: Buffer;
  try {
    body = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    if (options.signal?.aborted && err === options.signal.reason) throw err;
    throw err instanceof OutboundRefused ? err : toRefusal(err, new URL(res.url || String(url)).origin);
  }
  const info = exchangeInfo.get(res);
  return {
    status: res.status,
    headers: res.headers,
    body,
    finalUrl: info?.finalUrl ?? (res.url || String(url)),
    redirects: info?.redirects ?? (res.redirected ? 1 : 0),
    elapsedMs: performance.now() - started,
  };
}
