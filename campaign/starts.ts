import {
  apiErrorMessage,
  Cluster,
  compileCell,
  type DeploymentRef,
  type Measured,
  measured,
  missing,
  readinessPhase,
  type StartPhases,
} from "../benchmarks";
import { markdownTableLines } from "../common/markdown-table";
import type { BenchmarkResult, ReadinessPhase } from "../result";

/** How a candidate's pod came up: change → Ready from the API, and vLLM's phases from its log. */
export interface CandidateStart {
  readonly changeToReadySeconds: number | null;
  /** Null when the result has no readiness report or no log phases (with `why`). */
  readonly phases: StartPhases | null;
  readonly why: string | null;
}

/** The start a benchmark result recorded. Pure. */
export function startOf(result: BenchmarkResult): CandidateStart {
  return startOfReadiness(result.phases.readiness);
}

function startOfReadiness(readiness: ReadinessPhase | undefined): CandidateStart {
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

/**
 * The restore's start, from the readiness phase read after its `up` (`readRestoreReadiness`). A
 * change applied before the restore began (`restoreBeganAtMs`, this machine's clock against the API
 * server's stamps, whole seconds) means the `up` changed nothing and the pod is the one already
 * running: its start is not the restore's, so it is not reported as one. Pure.
 */
export function restoreStartOf(readiness: ReadinessPhase, restoreBeganAtMs: number): CandidateStart {
  if (readiness.status !== "ok" || readiness.report === null)
    return { changeToReadySeconds: null, phases: null, why: `restore: ${readiness.error ?? "readiness not read"}` };
  const changeAt = readiness.report.changeAppliedAt;
  // The API server stamps whole seconds: a change at or after the restore began is stamped no earlier than 1 s before it.
  if (changeAt !== null && Date.parse(changeAt) < restoreBeganAtMs - 1000)
    return {
      changeToReadySeconds: null,
      phases: null,
      why: `restore: nothing to change, baseline's pod was already running (its Deployment last changed ${changeAt}, before the restore)`,
    };
  const start = startOfReadiness(readiness);
  return start.why === null ? start : { ...start, why: `restore: ${start.why}` };
}

/**
 * Reads how the Deployment's current pod came up the way the benchmark's readiness phase does
 * (`readinessPhase`: rollout timeline from the API, vLLM's phases from the log). Never throws: no
 * cluster access is an `unavailable` phase with its reason.
 */
export async function readRestoreReadiness(
  kubeconfig: string | undefined,
  ref: DeploymentRef,
  waitReadySeconds: number,
  signal: AbortSignal,
): Promise<ReadinessPhase> {
  let cluster: Measured<Cluster>;
  try {
    cluster = measured(await Cluster.connect(ref, kubeconfig));
  } catch (err) {
    cluster = missing(apiErrorMessage(err));
  }
  return readinessPhase(cluster, waitReadySeconds, signal);
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
