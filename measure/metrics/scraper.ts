import type { ApiClient } from "../http/client";
import { type Measured, measured, missing } from "../measured";
import { type MetricSample, parseExposition } from "./exposition";

/** One scrape reduced to the values a window keeps. */
interface ScrapePoint<T> {
  readonly tEpochMs: number;
  readonly values: T;
}

export interface ScrapeSeries<T> {
  readonly url: string;
  readonly intervalMs: number;
  readonly points: ScrapePoint<T>[];
  /** Failed scrapes with their first error; a scrape that fails is not a zero. */
  readonly failedScrapes: number;
  readonly firstError: string | null;
  /** Why `url` was not scraped at all (every figure of the series is null with it); absent when it was. */
  readonly unscraped?: string;
}

/** A `/metrics` endpoint as a run reads it: its URL, and why it is not scraped at all (null: it is). */
export interface MetricsSource {
  readonly url: string;
  readonly unscraped: string | null;
}

/** The series of a window in which `url` was not scraped at all, for `reason`. */
export function unscrapedSeries<T>(url: string, intervalMs: number, reason: string): ScrapeSeries<T> {
  return { url, intervalMs, points: [], failedScrapes: 0, firstError: null, unscraped: reason };
}

/**
 * Scrapes `source.url` every `intervalMs` from start() to stop(), never overlapping scrapes, and
 * always takes one scrape at each edge so a load shorter than the interval is still seen. A source with
 * `unscraped` is never asked: stop() returns the empty series with that reason.
 */
export class WindowScraper<T> {
  private readonly points: ScrapePoint<T>[] = [];
  private failed = 0;
  private firstError: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly client: ApiClient,
    private readonly source: MetricsSource,
    private readonly intervalMs: number,
    private readonly reduce: (samples: MetricSample[]) => T,
  ) {}

  private async scrapeOnce(): Promise<void> {
    const tEpochMs = performance.timeOrigin + performance.now();
    try {
      const res = await this.client.send("GET", this.source.url, undefined, Math.max(2000, this.intervalMs * 2));
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      this.points.push({ tEpochMs, values: this.reduce(parseExposition(res.text)) });
    } catch (err) {
      this.failed += 1;
      this.firstError ??= (err as Error).message;
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.inFlight = this.scrapeOnce().then(() => this.schedule());
    }, this.intervalMs);
  }

  /** Takes the first scrape, then keeps scraping until stop(). */
  async start(): Promise<void> {
    if (this.source.unscraped !== null) return;
    this.inFlight = this.scrapeOnce();
    await this.inFlight;
    this.schedule();
  }

  /** Takes the closing scrape and returns the series. */
  async stop(): Promise<ScrapeSeries<T>> {
    const { url, unscraped } = this.source;
    if (unscraped !== null) return unscrapedSeries(url, this.intervalMs, unscraped);
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.inFlight;
    await this.scrapeOnce();
    return {
      url,
      intervalMs: this.intervalMs,
      points: this.points,
      failedScrapes: this.failed,
      firstError: this.firstError,
    };
  }
}

/** Peak of one field over a series; null with a reason when no scrape carried it. */
export function peakOf<T>(series: ScrapeSeries<T>, get: (v: T) => number | null, what: string): Measured<number> {
  if (series.unscraped !== undefined) return missing(series.unscraped);
  const values = series.points.map((p) => get(p.values)).filter((v): v is number => v !== null);
  if (series.points.length === 0) {
    return missing(
      `no successful scrape of ${series.url} in the window (${series.failedScrapes} failed: ${series.firstError ?? "?"})`,
    );
  }
  if (values.length === 0) return missing(`${what} not exported by ${series.url}`);
  return measured(Math.max(...values));
}

/** Counter increase between the first and last scrape that carry it. */
export function deltaOf<T>(series: ScrapeSeries<T>, get: (v: T) => number | null, what: string): Measured<number> {
  if (series.unscraped !== undefined) return missing(series.unscraped);
  const values = series.points.map((p) => get(p.values)).filter((v): v is number => v !== null);
  if (series.points.length === 0) return missing(`no successful scrape of ${series.url} in the window`);
  if (values.length === 0) return missing(`${what} not exported by ${series.url}`);
  if (values.length === 1) return missing(`${what}: only one scrape carried it, no delta`);
  const delta = values[values.length - 1]! - values[0]!;
  // A counter that went down means the process restarted: the delta is unknown, not negative.
  return delta < 0 ? missing(`${what} decreased (counter reset: the server restarted)`) : measured(delta);
}
