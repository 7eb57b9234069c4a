import { RevisionCache, type Revised } from "../src";

/** A record service as the protocol has it: the record, unless the caller's revision is current. */
class Records {
  readonly values = new Map<string, { revision: number; value: string }>();
  asked: (string | undefined)[] = [];
  put(key: string, value: string): void {
    this.values.set(key, { revision: (this.values.get(key)?.revision ?? 0) + 1, value });
  }
  async get(key: string, known: string | undefined): Promise<Revised<string> & { status: string }> {
    this.asked.push(known);
    const record = this.values.get(key)!;
    const revision = String(record.revision);
    return { revision, status: `fresh:${key}`, ...(known === revision ? {} : { value: record.value }) };
  }
}

describe("RevisionCache", () => {
  let clock = 0;
  const cacheOf = (maxEntries = 10, maxAgeMs = 1_000) => new RevisionCache<string>({ maxEntries, maxAgeMs, now: () => clock });
  beforeEach(() => {
    clock = 0;
  });

  it("asks with the revision it holds and keeps the value while that revision is current", async () => {
    const records = new Records();
    const cache = cacheOf();
    records.put("a", "one");
    const first = await cache.through("a", (known) => records.get("a", known));
    const second = await cache.through("a", (known) => records.get("a", known));
    expect([first.value, second.value]).toEqual(["one", "one"]);
    expect(records.asked).toEqual([undefined, "1"]);
    // The answer comes back too: what is fresh every time is read from it.
    expect(second.answer.value).toBeUndefined();
    expect(second.answer.status).toBe("fresh:a");
  });

  it("takes the new value as soon as the record changes", async () => {
    const records = new Records();
    const cache = cacheOf();
    records.put("a", "one");
    await cache.through("a", (known) => records.get("a", known));
    records.put("a", "two");
    expect((await cache.through("a", (known) => records.get("a", known))).value).toBe("two");
    expect((await cache.through("a", (known) => records.get("a", known))).value).toBe("two");
    expect(records.asked).toEqual([undefined, "1", "2"]);
  });

  it("offers nothing older than its age: the value is asked for again", async () => {
    const records = new Records();
    const cache = cacheOf(10, 1_000);
    records.put("a", "one");
    await cache.through("a", (known) => records.get("a", known));
    clock = 999;
    await cache.through("a", (known) => records.get("a", known));
    clock = 1_000;
    await cache.through("a", (known) => records.get("a", known));
    expect(records.asked).toEqual([undefined, "1", undefined]);
  });

  it("keeps at most its entries, dropping the oldest kept", async () => {
    const records = new Records();
    const cache = cacheOf(2);
    for (const key of ["a", "b", "c"]) {
      records.put(key, key);
      await cache.through(key, (known) => records.get(key, known));
    }
    expect(cache.size).toBe(2);
    records.asked = [];
    for (const key of ["c", "b", "a"]) await cache.through(key, (known) => records.get(key, known));
    // c and b are held; a was dropped when c was kept.
    expect(records.asked).toEqual(["1", "1", undefined]);
  });

  it("keeps the values within their weight, dropping the oldest, and none heavier than it all", async () => {
    const records = new Records();
    const cache = new RevisionCache<string>({ maxEntries: 10, maxAgeMs: 1_000, maxWeight: 10, weigh: (v) => v.length, now: () => clock });
    for (const [key, value] of [
      ["a", "aaaa"],
      ["b", "bbbb"],
      ["c", "cccc"],
    ] as const) {
      records.put(key, value);
      await cache.through(key, (known) => records.get(key, known));
    }
    expect([cache.size, cache.weight]).toEqual([2, 8]);
    records.put("huge", "x".repeat(11));
    expect((await cache.through("huge", (known) => records.get("huge", known))).value).toBe("x".repeat(11));
    expect((await cache.through("huge", (known) => records.get("huge", known))).value).toBe("x".repeat(11));
    expect([cache.size, cache.weight]).toEqual([2, 8]);
    records.asked = [];
    for (const key of ["c", "b", "a", "huge"]) await cache.through(key, (known) => records.get(key, known));
    // b and c were held; a was dropped when c was kept; the huge one was never kept.
    expect(records.asked).toEqual(["1", "1", undefined, undefined]);
    expect(() => new RevisionCache<string>({ maxEntries: 1, maxAgeMs: 1, maxWeight: 1 })).toThrow(/both/);
  });

  it("uses the entry it asked with, whatever another call kept meanwhile", async () => {
    const records = new Records();
    const cache = cacheOf();
    records.put("a", "one");
    await cache.through("a", (known) => records.get("a", known));
    let release!: () => void;
    const slow = cache.through("a", async (known) => {
      const answer = await records.get("a", known);
      await new Promise<void>((resolve) => (release = resolve));
      return answer;
    });
    records.put("a", "two");
    await cache.through("a", (known) => records.get("a", known));
    release();
    // The slow call was told revision 1 is current: it answers revision 1's value.
    expect((await slow).value).toBe("one");
    expect((await cache.through("a", (known) => records.get("a", known))).value).toBe("two");
  });

  it("refuses an answer without a value for a revision it does not hold", async () => {
    const cache = cacheOf();
    await expect(cache.through("a", async () => ({ revision: "7" }))).rejects.toThrow(/holds nothing/);
    await cache.through("a", async () => ({ revision: "1", value: "one" }));
    await expect(cache.through("a", async () => ({ revision: "2" }))).rejects.toThrow(/holds 1/);
  });

  it("needs at least one entry and a positive age", () => {
    expect(() => new RevisionCache({ maxEntries: 0, maxAgeMs: 1 })).toThrow();
    expect(() => new RevisionCache({ maxEntries: 1, maxAgeMs: 0 })).toThrow();
  });
});
