import type { Duplex } from "node:stream";
import { ProblemError, toProblemDocument, PROBLEM_CONTENT_TYPE } from "@c402/problems";

/**
 * Requests Node's HTTP parser refuses before any route sees them still get a
 * problem document (G21: every refusal is problem+json): headers over Node's
 * 16 KiB limit (431) and malformed HTTP (400). A request that timed out gets
 * Node's own bare 408; a reset socket gets nothing.
 */
export function answerClientError(siteUrl: string) {
  return (err: Error & { code?: string }, socket: Duplex): void => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      socket.end("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n");
      return;
    }
    const problem =
      err.code === "HPE_HEADER_OVERFLOW"
        ? new ProblemError("headers-too-large", "The request's headers are larger than this service accepts.")
        : new ProblemError("bad-request", "The request is not valid HTTP/1.1.");
    const body = JSON.stringify(toProblemDocument(problem, siteUrl));
    socket.end(
      `HTTP/1.1 ${problem.status} ${problem.status === 431 ? "Request Header Fields Too Large" : "Bad Request"}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
