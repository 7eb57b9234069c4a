/** Where a partition's consumption resumes: the offset after the last handled message. */
export interface PartitionOffset {
  partition: number;
  offset: string;
}

/**
 * A consumer group's offset commits on one topic, at most one every
 * `intervalMs` (like Kafka's own auto-commit, and DatabaseBus's): a commit is a
 * write on the broker, and committing after every fetched batch cost the broker
 * about as much as the events themselves (issue 16). What was handled within
 * the interval is committed by a timer when no later batch does it first, in
 * one request for every partition, and at once by `flush()` (on stop). A crash
 * may redeliver up to `intervalMs` of handled messages, which the idempotent
 * consumers absorb; an offset is only ever recorded after its message was
 * handled, so no commit can skip one that was not.
 */
export class OffsetCommits {
  private readonly pending = new Map<number, string>();
  private lastCommitAt = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Commits run one after another, so a partition's committed offset only moves forward. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly commit: (offsets: PartitionOffset[]) => Promise<void>,
    private readonly intervalMs: number,
    private readonly onTimerError: (err: unknown) => void,
  ) {}

  /** A partition was handled up to `offset` (exclusive): committed now if the last commit is `intervalMs` old, else by the timer. */
  handled(partition: number, offset: string): Promise<void> {
    this.pending.set(partition, offset);
    const wait = this.lastCommitAt + this.intervalMs - Date.now();
    if (wait <= 0) return this.flush();
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(this.onTimerError);
    }, wait);
    return Promise.resolve();
  }

  /** Commits everything pending now, after any commit under way. A failed commit leaves its offsets pending (unless a later one superseded them). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const run = this.queue.then(async () => {
      if (this.pending.size === 0) return;
      const offsets = [...this.pending].map(([partition, offset]) => ({ partition, offset }));
      this.pending.clear();
      this.lastCommitAt = Date.now();
      try {
        await this.commit(offsets);
      } catch (err) {
        for (const { partition, offset } of offsets) if (!this.pending.has(partition)) this.pending.set(partition, offset);
        throw err;
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** No timer left behind (what is pending stays uncommitted: redelivered, as after a crash). */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
