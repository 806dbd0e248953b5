import { z } from "zod";
import type { ScrapeSeries } from "../metrics/scraper";

/** A gap inside the window with requests in flight and not one byte received on any of them. */
export const StallSchema = z.strictObject({ startEpochMs: z.number(), seconds: z.number() });
type Stall = z.infer<typeof StallSchema>;

const nowEpoch = () => performance.timeOrigin + performance.now();

/**
 * Finds server stalls during a load window. A stopped or wedged server keeps its connections open,
 * so requests neither fail nor finish: only the silence tells. Every byte on any stream, and every
 * request that ends, is activity; a silence longer than `boundMs` while a request is in flight is a
 * stall. Gaps are measured when they end (the next byte) or when the window closes.
 */
export class StallWatch {
  private inFlight = 0;
  private since: number | null = null;
  private open = false;
  private readonly found: Stall[] = [];

  constructor(
    readonly boundMs: number,
    private readonly now: () => number = nowEpoch,
  ) {}

  private measure(at: number): void {
    if (!this.open || this.inFlight === 0 || this.since === null) return;
    const gapMs = at - this.since;
    if (gapMs > this.boundMs) this.found.push({ startEpochMs: this.since, seconds: gapMs / 1000 });
  }

  /** Gaps before the window are not its business: the clock starts here. */
  startWindow(): void {
    this.open = true;
    this.since = this.now();
  }

  /** Closes a gap still open at the window's end. */
  endWindow(): void {
    this.measure(this.now());
    this.open = false;
  }

  /** A request was sent. An idle client is not a silent server, so the clock starts when one is in flight. */
  begin(): void {
    if (this.inFlight === 0) this.since = this.now();
    this.inFlight += 1;
  }

  /** Bytes arrived (headers or body) on some stream. */
  activity(): void {
    const at = this.now();
    this.measure(at);
    this.since = at;
  }

  /** A request ended (whatever its outcome): the end of a silence, if there was one. */
  end(): void {
    this.activity();
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  stalls(): Stall[] {
    return [...this.found];
  }
}

/** Pure: the validity reason for the stalls of a window, or null. */
export function stallReason(stalls: readonly Stall[], boundSeconds: number): string | null {
  if (stalls.length === 0) return null;
  const longest = stalls.reduce((a, b) => (b.seconds > a.seconds ? b : a));
  return (
    `server stalled: ${stalls.length === 1 ? "once" : `${stalls.length} times`}, ` +
    `no byte on any in-flight stream for up to ${longest.seconds.toFixed(1)} s ` +
    `(from ${new Date(longest.startEpochMs).toISOString()}; bound ${boundSeconds} s, scenario load.stallSeconds)`
  );
}

/** Pure: the validity reason for failed scrapes of a window's series, or null. */
export function scrapeFailureReason(
  what: string,
  series: Pick<ScrapeSeries<unknown>, "url" | "points" | "failedScrapes" | "firstError">,
): string | null {
  if (series.failedScrapes === 0) return null;
  const total = series.points.length + series.failedScrapes;
  const first = series.firstError ?? "?";
  return `${series.failedScrapes} of ${total} ${what} scrapes of ${series.url} failed in the window (first: ${first})`;
}
