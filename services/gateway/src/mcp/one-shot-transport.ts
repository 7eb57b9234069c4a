import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, JSONRPCRequest, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

/**
 * An MCP transport for one HTTP request: it hands the SDK server one
 * JSON-RPC request and resolves with the server's answer to it. /mcp is one
 * object in, one object out (no stream, no session), so the HTTP side stays
 * ours: status codes, the Accept header (which changes nothing here), and
 * authentication before dispatch (docs/decisions.md "MCP endpoint").
 */
export class OneShotTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private answer!: (message: JSONRPCMessage) => void;
  /** The server's answer to the request (a result or an error carrying its id). */
  readonly answered = new Promise<JSONRPCMessage>((resolve) => (this.answer = resolve));

  async start(): Promise<void> {}

  /** What the server sends: the answer to our request; anything else (a notification: JSON mode cannot stream it) is dropped. */
  async send(message: JSONRPCMessage): Promise<void> {
    if ("id" in message && ("result" in message || "error" in message)) this.answer(message);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** Hands the request to the connected server. */
  deliver(request: JSONRPCRequest, extra: MessageExtraInfo): void {
    if (!this.onmessage) throw new Error("no MCP server is connected to this transport");
    this.onmessage(request, extra);
  }
}
