import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { OutboundRefused, type GuardedFetch } from "@c402/outbound-http";
import { credentialHeaders } from "./origin-auth";
import type { OriginCredential } from "./origin-keys";

/**
 * One session with a seller's MCP server through the official SDK client:
 * initialize (the handshake), `use`, then the session ended and the client
 * closed, whatever happened. Every request goes through the outbound guard
 * with the credential's headers, and the whole session, a stalled or
 * trickling stream and the closing request included, ends by `deadlineMs`
 * (`left()` is what remains of it, for the SDK's own request timeouts).
 */
export async function withMcpSession<T>(
  fetch: GuardedFetch,
  target: { originUrl: string; credential?: OriginCredential | undefined; deadlineMs: number },
  use: (client: Client, left: () => number) => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const left = () => Math.max(1, Math.round(target.deadlineMs - (performance.now() - started)));
  const session = AbortSignal.timeout(target.deadlineMs);
  const bounded = (input: string | URL | Request, init?: RequestInit) =>
    fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, session]) : session });
  const client = new Client({ name: "c402-fulfillment", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(target.originUrl), {
    fetch: bounded,
    requestInit: { headers: target.credential ? credentialHeaders(target.credential) : {} },
  });
  // The SDK reports the optional GET stream's refusal here; the outcome of each request is what counts.
  transport.onerror = () => {};
  try {
    await client.connect(transport, { timeout: left() });
    return await use(client, left);
  } finally {
    if (transport.sessionId && !session.aborted) await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

/** The refusal behind an error from the SDK client, if it came from the outbound guard. */
export function refusalIn(err: unknown): OutboundRefused | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof OutboundRefused) return e;
  }
  return undefined;
}
