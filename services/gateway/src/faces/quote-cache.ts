/**
 * Unpaid 402 answers of the faces, kept briefly. A face's requirements change
 * only when its checkout does (go-live, sold out, expiry, void), so asking
 * catalog and payments on every unpaid request buys nothing but latency. An
 * answer lives at most `ttlMs` and never past its checkout's expiry; a go-live
 * through this gateway drops it at once. A payment is never judged from here:
 * the paid path always asks payments.
 */
export class QuoteCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  private static key(checkoutId: string, variant: string): string {
    return `${checkoutId}|${variant}`;
  }

  get(checkoutId: string, variant: string): V | undefined {
    const key = QuoteCache.key(checkoutId, variant);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Keeps `value` for `ttlMs`, or until `notAfter` (epoch ms) if that comes first. */
  set(checkoutId: string, variant: string, value: V, notAfter?: number): void {
    if (this.entries.size >= this.maxEntries) {
      // Oldest first: a Map iterates in insertion order.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    const until = Math.min(this.now() + this.ttlMs, notAfter ?? Number.POSITIVE_INFINITY);
    this.entries.set(QuoteCache.key(checkoutId, variant), { value, until });
  }

  /** Forgets every answer of a checkout (its state changed here). */
  invalidate(checkoutId: string, variants: readonly string[]): void {
    for (const variant of variants) this.entries.delete(QuoteCache.key(checkoutId, variant));
  }
}
