/**
 * Values kept by revision, for a caller that asks a service for a record on
 * every use but need not receive it again while it is unchanged: the caller
 * sends the revision it holds, and the service answers without the record
 * when that revision is still current (ADR 14). What changes without a new
 * revision (a status that moves with the clock) is the service's to answer
 * every time; only the revision decides whether the kept value still holds.
 *
 * Bounded in entries and in weight (the oldest kept goes first; a value
 * heavier than the whole budget is not kept) and in age: an entry older
 * than `maxAgeMs` is not offered, so a revision token that could repeat
 * after a very long time (PostgreSQL's 32-bit transaction ids) never meets an
 * entry that old.
 */
export interface Revised<V> {
  /** The record's revision as the service answered it. */
  revision: string;
  /** The record, absent when the service answered that the caller's revision is current. */
  value?: V | undefined;
}

/** A value kept, with the revision it was answered at. */
export interface Held<V> {
  revision: string;
  value: V;
}

export interface RevisionCacheOptions<V> {
  maxEntries: number;
  maxAgeMs: number;
  /** What the values kept may weigh together, by `weigh` (bytes, say); unbounded without it. */
  maxWeight?: number;
  weigh?: (value: V) => number;
  now?: () => number;
}

interface Entry<V> {
  revision: string;
  value: V;
  weight: number;
  at: number;
}

export class RevisionCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly now: () => number;
  private weightKept = 0;

  constructor(private readonly options: RevisionCacheOptions<V>) {
    if (!(options.maxEntries >= 1) || !(options.maxAgeMs > 0)) throw new Error("a revision cache needs at least one entry and a positive age");
    if ((options.maxWeight === undefined) !== (options.weigh === undefined)) throw new Error("a revision cache's weight needs both maxWeight and weigh");
    this.now = options.now ?? Date.now;
  }

  /** How many values are kept (expired ones included until they are next looked at). */
  get size(): number {
    return this.entries.size;
  }

  /** What the values kept weigh together (0 without `weigh`). */
  get weight(): number {
    return this.weightKept;
  }

  /**
   * The value of `key`, current: `ask` is called with the revision kept for
   * it (undefined when none is kept) and answers the current revision, with
   * the value unless the kept revision is current. The answer itself is
   * returned too, for what the service answers fresh every time.
   */
  async through<A extends Revised<V>>(key: string, ask: (knownRevision: string | undefined) => Promise<A>): Promise<{ value: V; answer: A }> {
    // The entry is read once, before asking: another call may replace it meanwhile.
    const held = this.held(key);
    const answer = await ask(held?.revision);
    return { value: this.take(key, held, answer), answer };
  }

  /** What is kept for `key`, to name its revision in a request (then `take` its answer with it). */
  held(key: string): Held<V> | undefined {
    const entry = this.kept(key);
    return entry && { revision: entry.revision, value: entry.value };
  }

  /**
   * The value an answer stands for: the one it carries (kept from now on), or,
   * when it carries none, the one `held` when the request named its revision.
   */
  take(key: string, held: Held<V> | undefined, answer: Revised<V>): V {
    if (answer.value !== undefined) {
      this.keep(key, answer.revision, answer.value);
      return answer.value;
    }
    if (!held || held.revision !== answer.revision) {
      throw new Error(`answered unchanged at revision ${answer.revision} for ${key}, which holds ${held ? held.revision : "nothing"}`);
    }
    return held.value;
  }

  private kept(key: string): Entry<V> | undefined {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.at >= this.options.maxAgeMs) {
      this.forget(key);
      return undefined;
    }
    return entry;
  }

  private keep(key: string, revision: string, value: V): void {
    // Re-inserted, so the Map's insertion order stays oldest first.
    this.forget(key);
    const weight = this.options.weigh?.(value) ?? 0;
    const maxWeight = this.options.maxWeight ?? Number.POSITIVE_INFINITY;
    if (weight > maxWeight) return;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size < this.options.maxEntries && this.weightKept + weight <= maxWeight) break;
      this.forget(oldest);
    }
    this.entries.set(key, { revision, value, weight, at: this.now() });
    this.weightKept += weight;
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weightKept -= entry.weight;
  }
}
