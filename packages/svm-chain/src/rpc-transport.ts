import { createDefaultRpcTransport, type RpcTransport } from "@solana/kit";

/**
 * kit's HTTP transport with every call bounded: a node that accepts the
 * connection and never answers must not hold a settlement forever. A call
 * that runs out of time rejects with an Error naming the method, which
 * callers read as "the outcome is unknown", never as a refusal.
 */
export function rpcTransportWithTimeout(url: string, timeoutMs: number): RpcTransport {
  const transport = createDefaultRpcTransport({ url });
  // The node by its origin only: providers put API keys in the path.
  const shownUrl = new URL(url).origin;
  return (async (request) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await transport({ ...request, signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout });
    } catch (err) {
      if (!timeout.aborted) throw err;
      const method = (request.payload as { method?: unknown } | undefined)?.method;
      throw new Error(`the Solana node at ${shownUrl} did not answer ${String(method)} within ${timeoutMs} ms`, { cause: err });
    }
  }) as RpcTransport;
}
