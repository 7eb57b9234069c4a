import type { Duplex } from "node:stream";
import { ProblemError, toProblemDocument, PROBLEM_CONTENT_TYPE } from "@c402/problems";
import { NOSNIFF } from "./request-context";

const NOSNIFF_LINE = `${NOSNIFF[0]}: ${NOSNIFF[1]}\r\n`;

/**
 * Requests Node's HTTP parser refuses before any route sees them still get a
 * problem document (G21: every refusal is problem+json): headers over Node's
 * 16 KiB limit (431) and malformed HTTP (400). A request that timed out gets
 * Node's own bare 408; a reset socket gets nothing.
 */
export function answerClientError(siteUrl: string) {
  // The parser keeps reading what a refused client still sends and reports each chunk as another
  // error: once a socket has its answer, later errors are ignored (destroying it then would reset
  // the connection and could lose the answer the client has not read yet).
  const answered = new WeakSet<Duplex>();
  return (err: Error & { code?: string }, socket: Duplex): void => {
    if (answered.has(socket)) return;
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      socket.end(`HTTP/1.1 408 Request Timeout\r\n${NOSNIFF_LINE}Connection: close\r\n\r\n`);
      return;
    }
    const problem =
      err.code === "HPE_HEADER_OVERFLOW"
        ? new ProblemError("headers-too-large", "The request's headers are larger than this service accepts.")
        : new ProblemError("bad-request", "The request is not valid HTTP/1.1.");
    const body = JSON.stringify(toProblemDocument(problem, siteUrl));
    socket.end(
      `HTTP/1.1 ${problem.status} ${problem.status === 431 ? "Request Header Fields Too Large" : "Bad Request"}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n${NOSNIFF_LINE}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    answered.add(socket);
    lingerBeforeClose(socket);
  };
}

/** How long a refused client may keep sending before its socket is destroyed. */
const LINGER_MS = 2_000;

/**
 * A lingering close: the client may still be sending the rest of an oversized
 * request. Closing with that data unread would make the kernel reset the
 * connection, and a reset can discard the answer before the client reads it;
 * so read and drop what still comes, for a short while.
 */
function lingerBeforeClose(socket: Duplex): void {
  socket.on("data", () => undefined);
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
