/** One campaign of the wall-time benchmark: its `--parallel`, how long it took and how it ended. */
export interface WallRun {
  readonly parallel: number;
  readonly seconds: number;
  /** The campaign's exit code (0: every candidate measured, baseline restored and verified). */
  readonly exitCode: number;
}

/**
 * The report as printed: one line per campaign, then the ratio of each parallel run's wall time to
 * the sequential one's (`--parallel 1`, measured in the same run). Pure. Throws without a
 * sequential run, since the ratio has no peer then.
 */
export function formatWall(runs: readonly WallRun[]): string {
  const sequential = runs.find((r) => r.parallel === 1);
  if (sequential === undefined) throw new Error("no --parallel 1 run: the ratio has no peer");
  const lines = runs.map(
    (r) => `--parallel ${r.parallel}: ${r.seconds.toFixed(1)} s (exit ${r.exitCode}${r.exitCode === 0 ? ", ok" : ""})`,
  );
  for (const r of runs.filter((x) => x.parallel !== 1)) {
    lines.push(`ratio --parallel ${r.parallel} / --parallel 1: ${(r.seconds / sequential.seconds).toFixed(2)}`);
  }
  return `${lines.join("\n")}\n`;
}
