import { OutboundRefused, toRefusal } from "./errors";

/**
 * One outbound call from start to the last body byte: a single deadline across every redirect hop
 * and the body, combined with the caller's signal. Whatever fails is reported as OutboundRefused,
 * except a caller's own abort, which rejects with the caller's reason as fetch does.
 */
export class Exchange {
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly onCallerAbort = () => this.controller.abort(this.callerSignal?.reason);
  private timedOut = false;
  private finished = false;
  /** The origin of the current hop, for error messages (never the path or query). */
  origin = "";

  constructor(
    private readonly timeoutMs: number,
    private readonly callerSignal?: AbortSignal,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(this.timeoutError());
    }, timeoutMs);
    // The sockets keep the process alive while there is work; the deadline alone must not.
    this.timer.unref();
    if (callerSignal?.aborted) this.onCallerAbort();
    else callerSignal?.addEventListener("abort", this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The exchange is over (body read, cancelled or failed): stop the clock. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener("abort", this.onCallerAbort);
  }

  /** What to reject with for `err`. */
  fail(err: unknown): unknown {
    this.finish();
    if (this.timedOut) return this.timeoutError();
    if (this.callerSignal?.aborted) return this.callerSignal.reason;
    return err instanceof OutboundRefused ? err : toRefusal(err, this.origin);
  }

  private timeoutError(): OutboundRefused {
    return new OutboundRefused("timeout", `${this.origin || "request"}: not complete within ${this.timeoutMs} ms`);
  }
}

/**
 * Wraps a response body so that it errors with "too-large" past `limit` bytes. Pull-based with no
 * read-ahead, so memory stays at one chunk however much the server sends.
 */
export function boundedBody(body: ReadableStream<Uint8Array>, limit: number, exchange: Exchange): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let total = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          controller.error(exchange.fail(err));
          return;
        }
        if (chunk.done) {
          exchange.finish();
          controller.close();
          return;
        }
        total += chunk.value.byteLength;
        if (total > limit) {
          const err = new OutboundRefused("too-large", `${exchange.origin}: response body over ${limit} bytes`);
          exchange.finish();
          reader.cancel(err).catch(() => {});
          controller.error(err);
          return;
        }
        controller.enqueue(chunk.value);
      },
      cancel(reason) {
        exchange.finish();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
