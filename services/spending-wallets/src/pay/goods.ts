import type { Goods } from "../domain/ports";

/** The largest seller answer kept (1 MiB): the rest is cut off, never buffered. */
export const MAX_GOODS_BYTES = 1024 * 1024;

/**
 * The seller's answer as goods, its body read up to `limit` bytes. A longer
 * body is cut off rather than refused: by the time a paid answer is read the
 * money has moved, and the agent is better served by the first MiB than by
 * nothing. `truncated` tells the caller (and the log) that it happened.
 */
export async function readGoods(res: Response, limit = MAX_GOODS_BYTES): Promise<{ goods: Goods; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = limit - size;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room));
        size = limit;
        truncated = true;
        await reader.cancel();
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.byteLength;
  }
  return { goods: { status: res.status, contentType: res.headers.get("content-type") ?? "", body }, truncated };
}

/** A receipt URL the seller's JSON answer names (`receipt_url`, or `receipt.receipt_url` / `receipt.url`, as c402's own faces answer). */
export function receiptUrlOf(goods: Goods): string | undefined {
  if (!goods.contentType.toLowerCase().includes("json")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(goods.body));
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const top = parsed as { receipt_url?: unknown; receipt?: { receipt_url?: unknown; url?: unknown } };
  const candidate = top.receipt_url ?? top.receipt?.receipt_url ?? top.receipt?.url;
  return typeof candidate === "string" && /^https?:\/\//.test(candidate) ? candidate : undefined;
}
