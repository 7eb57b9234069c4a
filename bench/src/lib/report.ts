/** What every benchmark script shares: its settings, its progress lines and how it prints figures. */

/** `--quick`: a short smoke run with lower defaults. */
export const QUICK = process.argv.includes("--quick");

/** A positive number from the environment, or the default for a normal or a quick run. */
export function num(name: string, normal: number, quick: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return QUICK ? quick : normal;
  const v = Number(raw);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number, not ${raw}`);
  return v;
}

/** A progress line (stderr, so the figures on stdout stay clean). */
export function log(line: string): void {
  process.stderr.write(`  · ${line}\n`);
}

/** The p-th percentile of ascending figures (nearest rank); 0 for none. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const f0 = (n: number) => Math.round(n).toLocaleString("en-US");
export const f1 = (n: number) => n.toFixed(1);
/** A status mix as `200×398 402×2`. */
export const statusList = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, v]) => `${k}×${v}`)
    .join(" ");

/** Runs a benchmark script's main: exit 0 when it completes (the figures are a report, not a gate), 1 with the stack when it fails. */
export function runBenchmark(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}
