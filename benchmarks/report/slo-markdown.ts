import { num } from "../../common/format";
import { describeSlo } from "../../measure/inputs/slo";
import { describeMiss } from "../../measure/inputs/slo-judge";
import { cutOffCountedLabels } from "../../measure/inputs/slo-metrics";
import type { LevelBase, LoadPhase, SloCapacity } from "../../result";
import { capacityBracketText } from "../../verdict";
import { table } from "./markdown-notes";
import { capacityBasisText, twinLines } from "./twin-markdown";

/** The SLO's part of a result's report: attainment and request goodput per level, and the SLO capacity. Pure. */

const pct = (f: number | null | undefined) => (f === null || f === undefined ? "-" : `${num(f * 100, 1)} %`);

function levelRows(levels: ReadonlyArray<readonly [string, LevelBase]>): string[][] {
  return levels.map(([name, l]) => {
    const s = l.slo;
    if (s === undefined || s.value === null) return [name, "-", "-", "-", "-", s?.reason ?? "not recorded"];
    const v = s.value;
    return [
      name,
      `${v.met} / ${v.completed}`,
      pct(v.attainment),
      num(v.goodputRequestsPerSecond, 3),
      v.bounds.map((b) => `${b.metric} ${b.percentile} ${num(b.figureMs, 1)} (${pct(b.metFraction)})`).join(", "),
      v.holds ? "holds" : [...v.misses].map(describeMiss).join("; "),
    ];
  });
}

/** Whether the passing end held in a longer confirming probe; nothing for results written before. */
const confirmation = (c: SloCapacity) =>
  c.confirmed === undefined
    ? ""
    : c.confirmed
      ? ", confirmed by a longer probe"
      : `, not confirmed by a longer probe (stopped by: ${c.stoppedBy})`;

/** How the measured search found its figure. */
const searchMethodText = (c: SloCapacity) =>
  `The highest Poisson request rate at which ${describeSlo(c.slo)} held: probes from ${c.start ? `${num(c.start.ratePerSecond, 3)}/s (${c.start.basis})` : `${c.settings.lowRatePerSecond}/s`} within [${c.settings.lowRatePerSecond}, ${c.settings.highRatePerSecond}]/s until one held and one failed, then bisection to ${pct(c.settings.resolution)} of the passing rate; at most ${c.settings.maxProbes} probes and ${c.settings.maxMinutes} min (stopped by: ${c.stoppedBy}, after ${num(c.elapsedSeconds, 0)} s). Probe length: ${c.probeRule}. A probe holds when its level is valid, drops nothing, keeps up, and meets every bound and the attainment.`;

/** How the twin's figure was found and checked (its fit, prediction and windows follow the heading). */
const twinMethodText = (c: SloCapacity) =>
  `The highest Poisson request rate whose long run holds ${describeSlo(c.slo)}, by the candidate's calibrated twin (${num(c.elapsedSeconds, 0)} s in all). Window length: ${c.probeRule}. A window holds when its level is valid, drops nothing, keeps up, and meets every bound and the attainment; it confirms the twin when it falls in the twin's band, holding or not.`;

function capacityLines(c: SloCapacity): string[] {
  const cap = c.capacityRatePerSecond;
  const offered = c.rateBasis === "offered" ? " offered" : "";
  const head =
    cap.value === null
      ? `n/a (${cap.reason})`
      : `${num(cap.value, 3)} req/s${c.twin?.basis === "twin" ? "" : offered}, ${capacityBracketText(c, " req/s")} (resolution ${pct(c.relativeResolution)})${c.twin?.basis === "twin" ? "" : confirmation(c)}${capacityBasisText(c.twin)}`;
  const targets =
    c.highestPassingTargetRatePerSecond === undefined
      ? ""
      : " Rates are offered (sent in the window ÷ its seconds), their targets beside them: a probe that ended early offered its target's Poisson process over a short stretch, so its offered rate strays from its target, and the resolution is stated in targets.";
  const at = c.atCapacity;
  return [
    "",
    `### SLO capacity: **${head}**`,
    ...twinLines(c),
    "",
    `Plot: \`<this report's name>.slo.svg\` beside it (each bound's percentile against the offered rate, the SLO and the capacity marked). ${c.twin?.basis === "twin" ? twinMethodText(c) : searchMethodText(c)}${targets}`,
    ...(c.firstMisses.length > 0
      ? ["", `First to fail as the rate rises: ${c.firstMisses.map(describeMiss).join("; ")}.`]
      : []),
    ...(at
      ? [
          "",
          `At the capacity: peak running ${num(at.peakRunning.value, 0)}, waiting ${num(at.peakWaiting.value, 0)}, KV cache ${num(at.peakKvCacheUsagePercent.value, 1)} %, preemptions ${num(at.preemptionsDelta.value, 0)}.`,
        ]
      : []),
    "",
    ...table(
      [
        "offered req/s",
        "target req/s",
        "probe",
        "window s",
        "completed",
        "attainment",
        "goodput req/s",
        "holds",
        "why not",
      ],
      c.probes.map((p) => [
        num(p.ratePerSecond, 3),
        num(p.targetRatePerSecond ?? null, 3),
        p.kind ?? "scout",
        num(p.windowSeconds, 1),
        String(p.completed),
        pct(p.attainment),
        num(p.goodputRequestsPerSecond, 3),
        p.holds ? "yes" : "no",
        p.misses.map(describeMiss).join("; ") || "-",
      ]),
    ),
  ];
}

/** Pure: the SLO section; nothing when no level recorded SLO figures and no capacity was searched. */
export function sloSectionLines(load: LoadPhase): string[] {
  const levels = [
    ...load.levels.map((l) => [`c=${l.concurrency}`, l] as const),
    ...load.rateLevels.map((l) => [`${num(l.openLoop.targetRatePerSecond, 3)}/s`, l] as const),
  ];
  const slo = levels.map(([, l]) => l.slo?.value?.slo).find((s) => s !== undefined);
  const out: string[] = [];
  if (slo)
    out.push(
      "",
      `### SLO: ${describeSlo(slo)}`,
      "",
      `Attainment: the window's successful requests meeting every bound at once ÷ those completed plus those cut off at the window's end already past a ${cutOffCountedLabels()} bound (misses). Goodput: the requests met per second of the window (vLLM bench's \`--goodput\` divides by the whole run). Each bound's column: its percentile over the window's successful requests (ms) and the share of requests meeting it alone.`,
      "",
      ...table(["level", "met / completed", "attainment", "goodput req/s", "bounds", "SLO"], levelRows(levels)),
    );
  if (load.capacity) out.push(...capacityLines(load.capacity));
  return out;
}
