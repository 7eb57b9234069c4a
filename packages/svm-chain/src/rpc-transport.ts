import { createDefaultRpcTransport, type RpcTransport } from "@solana/kit";

/**
 * kit's HTTP transport with every call bounded: a node that accepts the
 * connection and never answers must not hold a settlement forever. A call
 * that runs out of time rejects (an AbortError), which callers read as "the
 * outcome is unknown", never as a refusal.
 */
export function rpcTransportWithTimeout(url: string, timeoutMs: number): RpcTransport {
  const transport = createDefaultRpcTransport({ url });
  return ((request) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    return transport({ ...request, signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout });
  }) as RpcTransport;
}
