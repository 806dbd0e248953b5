import type { BenchmarkResult } from "../../result";

const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

interface ChartSeries {
  readonly name: string;
  /** [concurrency, value] pairs, value null where not measured (the line breaks there). */
  readonly points: ReadonlyArray<readonly [number, number | null]>;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A "nice" axis maximum (1, 2, 5 x 10^n) at or above `v`. */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function panel(x0: number, title: string, unit: string, series: readonly ChartSeries[], xs: readonly number[]): string {
  const w = 380;
  const h = 260;
  const left = x0 + 55;
  const top = 40;
  const plotW = w - 75;
  const plotH = h - 80;
  const values = series.flatMap((s) => s.points.map(([, v]) => v)).filter((v): v is number => v !== null);
  const yMax = niceMax(values.length ? Math.max(...values) : 1);
  const xPos = (c: number) => left + (xs.length <= 1 ? plotW / 2 : (xs.indexOf(c) / (xs.length - 1)) * plotW);
  const yPos = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [
    `<text x="${x0 + w / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`,
    `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="#333"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotH}" stroke="#333"/>`,
    `<text x="${left + plotW / 2}" y="${top + plotH + 35}" text-anchor="middle" font-size="12">concurrency</text>`,
    `<text x="${x0 + 14}" y="${top + plotH / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 ${x0 + 14} ${top + plotH / 2})">${esc(unit)}</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    const y = yPos(v);
    parts.push(`<line x1="${left - 4}" y1="${y}" x2="${left + plotW}" y2="${y}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${left - 6}" y="${y + 4}" text-anchor="end" font-size="10">${Number(v.toPrecision(3))}</text>`,
    );
  }
  for (const c of xs)
    parts.push(`<text x="${xPos(c)}" y="${top + plotH + 15}" text-anchor="middle" font-size="10">${c}</text>`);
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const segments: string[][] = [[]];
    for (const [c, v] of s.points) {
      if (v === null) segments.push([]);
      else segments[segments.length - 1]!.push(`${xPos(c).toFixed(1)},${yPos(v).toFixed(1)}`);
    }
    for (const seg of segments.filter((g) => g.length > 0)) {
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${seg.join(" ")}"/>`);
      for (const pt of seg) {
        const [cx, cy] = pt.split(",");
        parts.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${color}"/>`);
      }
    }
  });
  return parts.join("\n");
}

/** Pure renderer: throughput and latency against concurrency, one line per candidate. */
export function renderChartSvg(
  throughput: readonly ChartSeries[],
  latency: readonly ChartSeries[],
  latencyLabel = "e2e p50 (ms)",
): string {
  const xs = [...new Set([...throughput, ...latency].flatMap((s) => s.points.map(([c]) => c)))].sort((a, b) => a - b);
  const n = Math.max(throughput.length, latency.length);
  const legendH = 18 * n + 10;
  const width = 780;
  const height = 270 + legendH;
  const legend = throughput.map(
    (s, i) =>
      `<rect x="60" y="${275 + 18 * i}" width="12" height="12" fill="${PALETTE[i % PALETTE.length]}"/>` +
      `<text x="78" y="${285 + 18 * i}" font-size="12">${esc(s.name)}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    panel(0, "Throughput vs concurrency", "requests/s", throughput, xs),
    panel(390, "Latency vs concurrency", latencyLabel, latency, xs),
    ...legend,
    "</svg>",
    "",
  ].join("\n");
}

/** Series of every candidate's load sweep: req/s and e2e p50 per concurrency level. */
export function chartFromResults(results: readonly BenchmarkResult[]): string {
  const levels = (r: BenchmarkResult) => r.phases.load?.levels ?? [];
  const label = (r: BenchmarkResult) => `${r.stack}${r.valid ? "" : " (invalid)"}`;
  return renderChartSvg(
    results.map((r) => ({
      name: label(r),
      points: levels(r).map((l) => [l.concurrency, l.counts.succeeded > 0 ? l.requestsPerSecond : null] as const),
    })),
    results.map((r) => ({
      name: label(r),
      points: levels(r).map((l) => [l.concurrency, l.e2eMs?.p50 ?? null] as const),
    })),
  );
}
