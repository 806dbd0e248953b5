import type { StageEvent } from "../benchmarks";

/**
 * What a candidate's benchmark is doing now, as its typed stage events told it (never its log sentences):
 * the phase, the level or window running and its plan, and a budget over the phase's later levels.
 * Times are epoch milliseconds, so the status is pure given a clock.
 */
export interface BenchStatus {
  readonly startedMs: number;
  readonly phase: string | null;
  readonly level: { readonly label: string; readonly plannedSeconds: number; readonly atMs: number } | null;
  readonly budget: { readonly label: string; readonly seconds: number; readonly atMs: number } | null;
}

/** Pure: the status after `event` at `nowMs`; the first event starts the clock. A phase drops the last one's level and budget. */
export function afterStage(status: BenchStatus | null, event: StageEvent, nowMs: number): BenchStatus {
  const s = status ?? { startedMs: nowMs, phase: null, level: null, budget: null };
  switch (event.kind) {
    case "phase":
      return { ...s, phase: event.phase, level: null, budget: null };
    case "level":
      return { ...s, level: { label: event.label, plannedSeconds: event.plannedSeconds, atMs: nowMs } };
    case "budget":
      // A budget starts between levels: the level before it is over.
      return { ...s, level: null, budget: { label: event.label, seconds: event.seconds, atMs: nowMs } };
    default: {
      const never: never = event;
      throw new Error(`unknown stage event ${JSON.stringify(never)}`);
    }
  }
}

/** Whole seconds as `42s`, `2m05s`, `5m`, `1h02m`: short enough to redraw each second. */
export function clockText(seconds: number): string {
  const t = Math.max(0, Math.floor(seconds));
  if (t < 60) return `${t}s`;
  if (t >= 3600) return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, "0")}m`;
  const rest = t % 60;
  return rest === 0 ? `${t / 60}m` : `${Math.floor(t / 60)}m${String(rest).padStart(2, "0")}s`;
}

/** `31s of 48s left`; `48s planned` while none of it is spent, so a line printed at a level's start reads plainly. */
function leftText(plannedSeconds: number, fromMs: number, nowMs: number): string {
  const planned = Math.round(plannedSeconds);
  const left = Math.max(0, Math.ceil(plannedSeconds - (nowMs - fromMs) / 1000));
  return left >= planned ? `${clockText(planned)} planned` : `${clockText(left)} of ${clockText(planned)} left`;
}

/**
 * Pure: the status as one line, e.g.
 * `load: capacity probe 2.2/s · 4m30s · 31s of 48s left · capacity 3m02s of 5m left`
 * (the phase and what runs in it, the benchmark's elapsed time, what is left of the level and of the budget).
 */
export function statusText(s: BenchStatus, nowMs: number): string {
  const what = s.level === null ? (s.phase ?? "starting") : `${s.phase ?? "bench"}: ${s.level.label}`;
  const parts = [what, clockText((nowMs - s.startedMs) / 1000)];
  if (s.level !== null) parts.push(leftText(s.level.plannedSeconds, s.level.atMs, nowMs));
  if (s.budget !== null) parts.push(`${s.budget.label} ${leftText(s.budget.seconds, s.budget.atMs, nowMs)}`);
  return parts.join(" · ");
}
