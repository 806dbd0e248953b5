import type { CampaignSummary } from "../../campaign/record";

/** One slot's share of a campaign: its turns and their measured seconds (up + wait + benchmark). */
interface SlotLoad {
  readonly slot: number;
  readonly turns: number;
  readonly seconds: number;
}

/** One campaign of the wall-time benchmark: its `--parallel`, how long it took and how it ended. */
export interface WallRun {
  readonly parallel: number;
  readonly seconds: number;
  /** The campaign's exit code (0: every candidate measured, baseline restored and verified). */
  readonly exitCode: number;
  /** Where the time went, from the campaign's summary; absent when it wrote none. */
  readonly breakdown?: {
    readonly slots: readonly SlotLoad[];
    /** Baseline's restore `up`; null when it did not run. */
    readonly restoreUpSeconds: number | null;
    /** The slots' cleanup (destroys), summed; part of it overlaps the other slots' turns. */
    readonly cleanupSeconds: number;
  };
  /** The machine's 1-minute load average before and after the campaign (a shared machine's noise). */
  readonly load?: { readonly before: number; readonly after: number };
}

/** Each slot's turns and seconds, the restore and the cleanup, from a campaign's summary. Pure. */
export function breakdownOf(
  summary: Pick<CampaignSummary, "candidates" | "restore" | "cleanup">,
): NonNullable<WallRun["breakdown"]> {
  const bySlot = new Map<number, SlotLoad>();
  for (const c of summary.candidates) {
    const slot = c.slot ?? 0;
    const was = bySlot.get(slot) ?? { slot, turns: 0, seconds: 0 };
    const seconds = (c.upSeconds ?? 0) + (c.waitSeconds ?? 0) + (c.benchSeconds ?? 0);
    bySlot.set(slot, { slot, turns: was.turns + 1, seconds: was.seconds + seconds });
  }
  return {
    slots: [...bySlot.values()].sort((a, b) => a.slot - b.slot),
    restoreUpSeconds: summary.restore?.upSeconds ?? null,
    cleanupSeconds: summary.cleanup.reduce((sum, c) => sum + (c.seconds ?? 0), 0),
  };
}

function detailLine(r: WallRun): string | null {
  const parts = [
    ...(r.breakdown?.slots ?? []).map(
      (s) => `slot ${s.slot}: ${s.turns} turns, ${s.seconds.toFixed(1)} s up+wait+bench`,
    ),
    ...(r.breakdown === undefined
      ? []
      : [
          `restore up ${r.breakdown.restoreUpSeconds === null ? "-" : `${r.breakdown.restoreUpSeconds.toFixed(1)} s`}`,
          `cleanup ${r.breakdown.cleanupSeconds.toFixed(1)} s`,
        ]),
    ...(r.load === undefined ? [] : [`load ${r.load.before.toFixed(1)} -> ${r.load.after.toFixed(1)}`]),
  ];
  return parts.length === 0 ? null : `  ${parts.join("; ")}`;
}

/**
 * The report as printed: one line per campaign (and where its time went, when known), then the
 * ratio of each parallel run's wall time to the sequential one's (`--parallel 1`, measured in the
 * same run). Pure. Throws without a sequential run, since the ratio has no peer then.
 */
export function formatWall(runs: readonly WallRun[]): string {
  const sequential = runs.find((r) => r.parallel === 1);
  if (sequential === undefined) throw new Error("no --parallel 1 run: the ratio has no peer");
  const lines = runs.flatMap((r) => {
    const detail = detailLine(r);
    return [
      `--parallel ${r.parallel}: ${r.seconds.toFixed(1)} s (exit ${r.exitCode}${r.exitCode === 0 ? ", ok" : ""})`,
      ...(detail === null ? [] : [detail]),
    ];
  });
  for (const r of runs.filter((x) => x.parallel !== 1)) {
    lines.push(`ratio --parallel ${r.parallel} / --parallel 1: ${(r.seconds / sequential.seconds).toFixed(2)}`);
  }
  return `${lines.join("\n")}\n`;
}
