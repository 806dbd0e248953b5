import { describeBound } from "../../measure/inputs/slo";
import { type BenchmarkResult, capacityLevelAt } from "../../result";
import { niceMax } from "./svg";

/**
 * Pictures of the SLO capacity. Per candidate: each bound's percentile against the offered rate of the
 * capacity search's probes, the bound drawn as a dashed line in its colour, the capacity (green) and the
 * lowest failing rate (red) marked. Across candidates: the capacity as bars with their brackets, and a
 * Pareto view of capacity against e2e p99 at the capacity. Pure.
 */

const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const f1 = (v: number) => v.toFixed(1);

interface Frame {
  readonly left: number;
  readonly top: number;
  readonly w: number;
  readonly h: number;
  readonly xMax: number;
  readonly yMax: number;
}
const xAt = (f: Frame, v: number) => f.left + (v / f.xMax) * f.w;
const yAt = (f: Frame, v: number) => f.top + f.h - (Math.min(v, f.yMax) / f.yMax) * f.h;

function axes(f: Frame, xLabel: string, yLabel: string): string[] {
  const out = [
    `<line x1="${f.left}" y1="${f.top + f.h}" x2="${f.left + f.w}" y2="${f.top + f.h}" stroke="#333"/>`,
    `<line x1="${f.left}" y1="${f.top}" x2="${f.left}" y2="${f.top + f.h}" stroke="#333"/>`,
    `<text x="${f.left + f.w / 2}" y="${f.top + f.h + 32}" text-anchor="middle" font-size="12">${esc(xLabel)}</text>`,
    `<text x="${f.left - 42}" y="${f.top + f.h / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 ${f.left - 42} ${f.top + f.h / 2})">${esc(yLabel)}</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const y = yAt(f, (f.yMax * i) / 4);
    const x = xAt(f, (f.xMax * i) / 4);
    out.push(
      `<line x1="${f.left - 4}" y1="${f1(y)}" x2="${f.left + f.w}" y2="${f1(y)}" stroke="#ddd"/>`,
      `<text x="${f.left - 6}" y="${f1(y + 4)}" text-anchor="end" font-size="10">${Number(((f.yMax * i) / 4).toPrecision(3))}</text>`,
      `<text x="${f1(x)}" y="${f.top + f.h + 15}" text-anchor="middle" font-size="10">${Number(((f.xMax * i) / 4).toPrecision(3))}</text>`,
    );
  }
  return out;
}

const svg = (width: number, height: number, body: readonly string[]) =>
  [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...body,
    "</svg>",
    "",
  ].join("\n");

/** Pure: one candidate's latency against offered rate with the SLO and its capacity; null without a search. */
export function capacityChartSvg(result: BenchmarkResult): string | null {
  const c = result.phases.load?.capacity;
  if (!c || c.probes.length === 0) return null;
  const probes = [...c.probes].sort((a, b) => a.ratePerSecond - b.ratePerSecond);
  const figure = (rate: number, i: number) =>
    capacityLevelAt(result.phases.load, rate)?.slo?.value?.bounds[i]?.figureMs ?? null;
  const values = c.slo.bounds.flatMap((b, i) => [b.ms, ...probes.map((p) => figure(p.ratePerSecond, i) ?? 0)]);
  // Past twice the highest bound the picture says nothing more: points beyond are drawn at the top.
  const yMax = niceMax(Math.min(Math.max(...values), 2 * Math.max(...c.slo.bounds.map((b) => b.ms))));
  const f: Frame = { left: 70, top: 40, w: 560, h: 260, xMax: niceMax(probes.at(-1)!.ratePerSecond), yMax };
  const cap = c.capacityRatePerSecond.value;
  const body = [
    `<text x="350" y="22" text-anchor="middle" font-size="14" font-weight="bold">${esc(`${result.stack}: latency vs offered rate, SLO capacity ${cap === null ? "n/a" : `${+cap.toFixed(3)} req/s`}${c.twin === undefined ? "" : c.twin.basis === "twin" ? " (long run, calibrated twin)" : " (measured search)"}`)}</text>`,
    ...axes(f, "offered Poisson rate (req/s)", "ms"),
  ];
  c.slo.bounds.forEach((b, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    body.push(
      `<line x1="${f.left}" y1="${f1(yAt(f, b.ms))}" x2="${f.left + f.w}" y2="${f1(yAt(f, b.ms))}" stroke="${color}" stroke-dasharray="6 4"/>`,
    );
    const pts = probes
      .map((p) => [p.ratePerSecond, figure(p.ratePerSecond, i)] as const)
      .filter((p): p is readonly [number, number] => p[1] !== null)
      .map(([x, y]) => `${f1(xAt(f, x))},${f1(yAt(f, y))}`);
    body.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(" ")}"/>`);
    for (const pt of pts) {
      const [x, y] = pt.split(",");
      body.push(`<circle cx="${x}" cy="${y}" r="3" fill="${color}"/>`);
    }
    body.push(
      `<rect x="${f.left + f.w + 15}" y="${48 + 18 * i}" width="12" height="12" fill="${color}"/>`,
      `<text x="${f.left + f.w + 32}" y="${58 + 18 * i}" font-size="11">${esc(describeBound(b))}</text>`,
    );
  });
  const mark = (rate: number | null, color: string, label: string, row: number) => {
    if (rate === null) return;
    const x = f1(xAt(f, rate));
    body.push(
      `<line x1="${x}" y1="${f.top}" x2="${x}" y2="${f.top + f.h}" stroke="${color}" stroke-width="2"${color === "#d62728" ? ' stroke-dasharray="3 3"' : ""}/>`,
      `<text x="${f.left + f.w + 15}" y="${58 + 18 * (c.slo.bounds.length + row)}" font-size="11" fill="${color}">${esc(label)}</text>`,
    );
  };
  mark(cap, "#2ca02c", `capacity ${cap ?? "n/a"}/s`, 0);
  mark(
    c.lowestFailingRatePerSecond,
    "#d62728",
    `fails at ${c.lowestFailingRatePerSecond === null ? "-" : +c.lowestFailingRatePerSecond.toFixed(3)}/s`,
    1,
  );
  return svg(820, 340, body);
}

/** Pure: candidates' capacities side by side with their brackets, and capacity against e2e p99 there. */
export function capacityComparisonSvg(results: readonly BenchmarkResult[]): string | null {
  const rows = results.flatMap((r) => {
    const c = r.phases.load?.capacity;
    if (!c) return [];
    const cap = c.capacityRatePerSecond.value;
    const at = capacityLevelAt(r.phases.load, cap);
    return [
      {
        stack: r.stack,
        cap,
        pass: c.highestPassingRatePerSecond,
        fail: c.lowestFailingRatePerSecond,
        p99: at?.e2eMs?.p99 ?? null,
      },
    ];
  });
  if (rows.length === 0) return null;
  const xMax = niceMax(Math.max(...rows.map((r) => r.fail ?? r.pass ?? 1)));
  const bars: Frame = { left: 70, top: 40, w: 300, h: 240, xMax: rows.length, yMax: xMax };
  const body = [
    `<text x="220" y="22" text-anchor="middle" font-size="14" font-weight="bold">SLO capacity by candidate (bracket)</text>`,
    ...axes(bars, "candidate", "req/s").filter((l) => !/text-anchor="middle" font-size="10"/.test(l)),
  ];
  const slot = bars.w / rows.length;
  rows.forEach((r, i) => {
    const x = bars.left + slot * i + slot * 0.2;
    const color = PALETTE[i % PALETTE.length]!;
    if (r.cap !== null)
      body.push(
        `<rect x="${f1(x)}" y="${f1(yAt(bars, r.cap))}" width="${f1(slot * 0.6)}" height="${f1(bars.top + bars.h - yAt(bars, r.cap))}" fill="${color}"/>`,
      );
    if (r.pass !== null && r.fail !== null) {
      const cx = f1(x + slot * 0.3);
      body.push(
        `<line x1="${cx}" y1="${f1(yAt(bars, r.pass))}" x2="${cx}" y2="${f1(yAt(bars, r.fail))}" stroke="#333" stroke-width="2"/>`,
      );
    }
    body.push(
      `<text x="${f1(x + slot * 0.3)}" y="${bars.top + bars.h + 15}" text-anchor="middle" font-size="10">${esc(r.stack)}${r.cap === null ? " (n/a)" : ""}</text>`,
    );
  });
  const pts = rows.filter((r) => r.cap !== null && r.p99 !== null);
  const pareto: Frame = {
    left: 480,
    top: 40,
    w: 300,
    h: 240,
    xMax,
    yMax: niceMax(Math.max(1, ...pts.map((r) => r.p99 as number))),
  };
  body.push(
    `<text x="630" y="22" text-anchor="middle" font-size="14" font-weight="bold">Capacity vs e2e p99 at it</text>`,
    ...axes(pareto, "SLO capacity (req/s)", "e2e p99 (ms)"),
  );
  for (const r of pts) {
    const i = rows.indexOf(r);
    const [x, y] = [f1(xAt(pareto, r.cap as number)), f1(yAt(pareto, r.p99 as number))];
    body.push(
      `<circle cx="${x}" cy="${y}" r="5" fill="${PALETTE[i % PALETTE.length]}"/>`,
      `<text x="${x}" y="${f1(Number(y) - 8)}" text-anchor="middle" font-size="10">${esc(r.stack)}</text>`,
    );
  }
  return svg(820, 320, body);
}
