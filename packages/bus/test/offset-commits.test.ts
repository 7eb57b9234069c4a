import { OffsetCommits, type PartitionOffset } from "../src/offset-commits";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A commit function that records each commit as "partition:offset" items by partition ("0:9 1:3"), and can be made to fail. */
function recorder() {
  const commits: string[] = [];
  let failNext = false;
  return {
    commits,
    failNext: () => void (failNext = true),
    commit: async (offsets: PartitionOffset[]) => {
      if (failNext) {
        failNext = false;
        await sleep(50);
        throw new Error("rebalancing");
      }
      commits.push(
        [...offsets]
          .sort((a, b) => a.partition - b.partition)
          .map((o) => `${o.partition}:${o.offset}`)
          .join(" "),
      );
    },
  };
}

describe("OffsetCommits", () => {
  it("commits the first batch at once, then at most once an interval: later batches wait for the timer, which commits every partition's latest in one request", async () => {
    const r = recorder();
    const c = new OffsetCommits(r.commit, 200, () => undefined);
    await c.handled(0, "5");
    expect(r.commits).toEqual(["0:5"]);
    await c.handled(0, "7");
    await c.handled(1, "3");
    await c.handled(0, "9");
    expect(r.commits).toHaveLength(1);
    await sleep(300);
    expect(r.commits).toEqual(["0:5", "0:9 1:3"]);
    c.close();
  });

  it("commits a batch at once when the last commit is an interval old", async () => {
    const r = recorder();
    const c = new OffsetCommits(r.commit, 100, () => undefined);
    await c.handled(2, "1");
    await sleep(150);
    await c.handled(2, "4");
    expect(r.commits).toEqual(["2:1", "2:4"]);
    c.close();
  });

  it("flush commits what is pending at once and disarms the timer; nothing pending commits nothing", async () => {
    const r = recorder();
    const c = new OffsetCommits(r.commit, 10_000, () => undefined);
    await c.handled(0, "1");
    await c.handled(0, "2");
    await c.flush();
    await c.flush();
    expect(r.commits).toEqual(["0:1", "0:2"]);
    c.close();
  });

  it("a failed commit leaves its offsets pending for the next, unless a later offset of the partition came meanwhile", async () => {
    const r = recorder();
    const errors: unknown[] = [];
    const c = new OffsetCommits(r.commit, 100, (err) => errors.push(err));
    await c.handled(0, "1");
    await c.handled(0, "2");
    await c.handled(1, "8");
    r.failNext();
    await sleep(120); // the timer's commit is under way (it fails after 50 ms)
    await c.handled(1, "9"); // partition 1 moves on meanwhile
    await sleep(50);
    expect(errors).toHaveLength(1);
    await c.flush();
    expect(r.commits).toEqual(["0:1", "0:2 1:9"]);
    c.close();
  });

  it("close leaves no timer behind: what is pending is not committed", async () => {
    const r = recorder();
    const c = new OffsetCommits(r.commit, 50, () => undefined);
    await c.handled(0, "1");
    await c.handled(0, "2");
    c.close();
    await sleep(100);
    expect(r.commits).toEqual(["0:1"]);
  });
});
