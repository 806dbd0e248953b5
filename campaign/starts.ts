import type { StartPhases } from "../benchmarks/kube/start-phases";
import { compileCell } from "../benchmarks/report/start-phases";
import type { BenchmarkResult } from "../benchmarks/result/types";
import { markdownTableLines } from "../common/markdown-table";

/** How a candidate's pod came up: change → Ready from the API, and vLLM's phases from its log. */
export interface CandidateStart {
  readonly changeToReadySeconds: number | null;
  /** Null when the result has no readiness report or no log phases (with `why`). */
  readonly phases: StartPhases | null;
  readonly why: string | null;
}

/** The start a benchmark result recorded. Pure. */
export function startOf(result: BenchmarkResult): CandidateStart {
  const readiness = result.phases.readiness;
  const phases = readiness?.startPhases ?? null;
  return {
    changeToReadySeconds: readiness?.report?.changeToReadySeconds ?? null,
    phases,
    why:
      readiness === undefined
        ? "the readiness phase did not run"
        : phases === null
          ? "the result predates start phases, or the readiness phase failed"
          : null,
  };
}

const s = (m: { value: number | null } | undefined) => (m?.value == null ? "n/a" : `${m.value} s`);

/** The "Starts" section of the campaign report: one row per start the campaign measured. Pure. */
export function startsLines(starts: ReadonlyArray<readonly [string, CandidateStart | null | undefined]>): string[] {
  const why = new Set<string>();
  const rows = starts.map(([stack, st]) => {
    if (st?.why) why.add(st.why);
    const p = st?.phases ?? null;
    return [
      stack,
      st?.changeToReadySeconds == null ? "n/a" : `${st.changeToReadySeconds} s`,
      p === null ? "n/a" : compileCell(p),
      s(p?.dynamoTransformSeconds),
      s(p?.cudaGraphCaptureSeconds),
      s(p?.engineInitSeconds),
      p?.apiServerUpOffsetSeconds.value == null ? "n/a" : `+${p.apiServerUpOffsetSeconds.value} s`,
    ];
  });
  return [
    ...markdownTableLines(
      [
        "stack",
        "change → Ready",
        "compile cache",
        "dynamo",
        "CUDA graphs",
        "engine init",
        "API up after process start",
      ],
      rows,
    ),
    ...[...why].map((w) => `- n/a: ${w}`),
  ];
}
