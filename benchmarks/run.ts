import { readFileSync } from "node:fs";
import { cpus, hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { gitInfo } from "../common/git-info";
import { ApiClient } from "../measure/http/client";
import { probeHealth } from "../measure/http/probes";
import { PHASES, type Scenario } from "../measure/inputs/scenario";
import { maxNumSeqsOf, redactSecrets } from "../measure/inputs/stack-outputs";
import type { PodIdentity } from "../measure/kube/readiness";
import { type Measured, measured, missing } from "../measure/measured";
import type { GpuSourceOptions } from "../measure/metrics/gpu";
import type { MetricsSource } from "../measure/metrics/scraper";
import { type BenchmarkResult, type PhaseBase, RESULT_KIND, SCHEMA_VERSION } from "../result";
import { contextPhase } from "./phases/context-boundary";
import { identityPhase } from "./phases/identity";
import { loadPhase } from "./phases/load";
import { readinessPhase } from "./phases/readiness";
import { metricsSource } from "./phases/replicas";
import { inputLengthPhase, sequentialPhase } from "./phases/sequential";
import { nowIso, type PhaseContext } from "./phases/shared";
import { type ClusterOptions, type PodAccess, podAccess } from "./pod-access";
import { type Progress, silentProgress } from "./progress";

export interface RunOptions extends ClusterOptions {
  /** Stack (candidate) name; names the result directory. */
  readonly stack: string;
  /** Base URL of the OpenAI-compatible server. */
  readonly endpoint: string;
  /**
   * Defaults to `<endpoint>/metrics` (one replica, Recreate: the Service's only backend is the current pod); over
   * several pods it is not scraped (phases/replicas.ts).
   */
  readonly metricsUrl?: string | undefined;
  readonly scenario: Scenario;
  readonly gpu?: GpuSourceOptions;
  readonly apiKey?: string | undefined;
  /** Seconds to wait for `/health` to answer 200 before starting (0: check once). */
  readonly waitReadySeconds?: number;
  /** Aborting it (SIGINT) ends the run with a partial result marked incomplete. */
  readonly signal?: AbortSignal;
  readonly progress?: Progress;
  /** Repository directory, for the git commit recorded in the result. */
  readonly cwd?: string;
  /** The server runs random weights (the lab's `--model-dir` without weights); recorded in `environment`. */
  readonly dummyWeights?: boolean;
  /** The smaller card whose KV budget the server was given (the lab's --emulate-gpu-memory-gib); recorded in `environment`. */
  readonly emulatedGpu?: string;
}

/** The endpoint was not usable before any phase ran; nothing was measured. */
export class PreflightError extends Error {
  constructor(
    readonly kind: "unreachable" | "timeout" | "http",
    message: string,
  ) {
    super(message);
    this.name = "PreflightError";
  }
}

function toolInfo(cwd: string): BenchmarkResult["tool"] {
  let version = "unknown";
  try {
    version =
      (JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as { version?: string }).version ??
      version;
  } catch {
    // a copied benchmarks/ folder without package.json still runs
  }
  return { name: "vllm-tuner-benchmark", version, ...gitInfo(cwd) };
}

/** Polls `/health` until 200; throws PreflightError with what went wrong last. */
async function waitHealthy(client: ApiClient, seconds: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const h = await probeHealth(client, 10_000, signal);
    if (h.status === 200) return;
    const problem =
      h.status !== null
        ? new PreflightError("http", `${client.url("/health")} answered ${h.error}`)
        : new PreflightError(h.failure === "timeout" ? "timeout" : "unreachable", h.error ?? "no answer");
    if (Date.now() >= deadline || signal.aborted) throw problem;
    await sleep(Math.min(2000, deadline - Date.now()), undefined, { signal }).catch(() => {});
  }
}

/** How the phase loop ended, and the pod before and after it. */
type RunEnd = { aborted: boolean; stoppedReason: string | null; pod0: Pod; pod1: Pod };
type Pod = Measured<PodIdentity>;

/** Why a run is not valid: an interruption, a stop, failed phases and levels, a pod that changed under the load. Pure. */
function invalidReasonsOf(phases: BenchmarkResult["phases"], run: RunEnd): string[] {
  const { pod0, pod1, stoppedReason } = run;
  const invalidReasons: string[] = [];
  if (run.aborted) invalidReasons.push("interrupted (SIGINT): partial result");
  if (stoppedReason) invalidReasons.push(stoppedReason);
  for (const [name, p] of Object.entries(phases) as Array<[string, PhaseBase]>) {
    if (p.status === "failed" || p.status === "incomplete")
      invalidReasons.push(`phase ${name} ${p.status}: ${p.error ?? ""}`);
  }
  for (const level of phases.load?.levels ?? []) {
    if (!level.valid) invalidReasons.push(`load c=${level.concurrency} invalid: ${level.invalidReasons.join("; ")}`);
  }
  for (const level of phases.load?.rateLevels ?? []) {
    if (!level.valid)
      invalidReasons.push(
        `load rate ${level.openLoop.targetRatePerSecond.toFixed(3)}/s invalid: ${level.invalidReasons.join("; ")}`,
      );
  }
  const [before, after] = [pod0.value, pod1.value];
  if (before && after && (before.uid !== after.uid || before.restartCount !== after.restartCount))
    invalidReasons.push(
      `pod changed or restarted during the run (${before.name}/${before.restartCount} -> ${after.name}/${after.restartCount})`,
    );
  return invalidReasons;
}

/** Sockets enough that the open loop's in-flight cap binds before the client's pool (else arrivals queue unseen). */
function clientConnections(load: Scenario["load"]): number {
  const inFlight = load.mode === "rate" ? load.openLoop.maxInFlight : 0;
  const sweep = load.openLoop.sweep?.throughputConcurrency ?? 0;
  return Math.max(16, ...load.concurrency, inFlight, sweep) + 4;
}

/** What a phase may read: the run's inputs, the pod, and the phases measured before it. */
interface PhaseRun {
  readonly ctx: PhaseContext;
  readonly opts: RunOptions;
  /** vLLM's `/metrics`, or why the run scrapes none. */
  readonly metrics: MetricsSource;
  readonly pod: PodAccess;
  readonly phases: BenchmarkResult["phases"];
}

/** Runs one phase and records it in `run.phases`. */
async function runPhase(phase: (typeof PHASES)[number], run: PhaseRun): Promise<void> {
  const { ctx, opts, metrics, pod, phases } = run;
  switch (phase) {
    case "readiness":
      phases.readiness = await readinessPhase(pod.cluster, opts.waitReadySeconds ?? 0, ctx.signal);
      break;
    case "identity":
      phases.identity = await identityPhase(ctx, {
        metrics,
        podLog: pod.podLog,
        card: pod.card,
        maxNumBatchedTokens: opts.outputs.config["maxNumBatchedTokens"],
      });
      break;
    case "sequential":
      phases.sequential = await sequentialPhase(ctx);
      break;
    case "context":
      phases.context = await contextPhase(ctx, phases.identity?.servedModel?.maxModelLen ?? null);
      break;
    case "load":
      phases.load = await loadPhase(ctx, {
        metrics,
        gpu: opts.gpu ?? {},
        namespace: opts.outputs.namespace,
        replicas: pod.replicas.count,
        podIdentity: pod.identity,
        kvCapacity: phases.identity?.kvCapacity ?? missing("the identity phase did not run"),
        maxNumSeqs: maxNumSeqsOf(opts.outputs),
        batchTokens: phases.identity?.batchBudget?.value?.tokens ?? null,
      });
      break;
    case "inputLength":
      phases.inputLength = await inputLengthPhase(ctx, metrics);
      break;
    default: {
      const never: never = phase;
      throw new Error(`unknown phase ${String(never)}`);
    }
  }
}

/** Runs the selected phases in order; returns why the run stopped before the end, or null. */
async function runPhases(selected: readonly (typeof PHASES)[number][], run: PhaseRun): Promise<string | null> {
  const { client, signal, progress } = run.ctx;
  const stopped = (reason: string): string => {
    progress.log(reason);
    return reason;
  };
  for (const phase of selected) {
    if (signal.aborted) break;
    progress.log(`phase ${phase}`);
    progress.stage({ kind: "phase", phase });
    try {
      await runPhase(phase, run);
    } catch (err) {
      // A bug or an unforeseen failure must not lose what the earlier phases measured.
      return stopped(`phase ${phase} stopped: ${(err as Error).message}`);
    }
    if (signal.aborted) break;
    // A dead endpoint fails every later phase the same way: stop and say so once.
    try {
      await waitHealthy(client, 0, signal);
    } catch (err) {
      return stopped(`endpoint lost after phase ${phase}: ${(err as Error).message}`);
    }
  }
  return null;
}

/** Runs the selected phases against one candidate; resolves with a (possibly partial) result. */
export async function runBenchmark(opts: RunOptions): Promise<BenchmarkResult> {
  const startedAt = nowIso();
  const progress = opts.progress ?? silentProgress;
  const signal = opts.signal ?? new AbortController().signal;
  const { scenario } = opts;
  const selected = PHASES.filter((p) => scenario.phases.includes(p));
  const model = opts.outputs.servedModelName;
  const metricsUrl = opts.metricsUrl ?? `${opts.endpoint}/metrics`;
  const connections = clientConnections(scenario.load);
  const client = new ApiClient({ endpoint: opts.endpoint, apiKey: opts.apiKey, connections });
  const ctx: PhaseContext = { client, model, scenario, signal, progress };
  const phases: BenchmarkResult["phases"] = {};
  try {
    const pod = await podAccess(opts, progress);
    progress.log(`benchmark ${opts.stack}: ${opts.endpoint} model ${model}, phases ${selected.join(", ")}`);
    await waitHealthy(client, opts.waitReadySeconds ?? 0, signal);
    const pod0 = await pod.identity();
    const metrics = metricsSource(metricsUrl, pod.replicas);
    const stoppedReason = await runPhases(selected, { ctx, opts, metrics, pod, phases });
    const pod1 = await pod.identity();
    const invalidReasons = invalidReasonsOf(phases, { aborted: signal.aborted, stoppedReason, pod0, pod1 });
    const complete = !signal.aborted && stoppedReason === null && selected.every((p) => phases[p] !== undefined);
    const podNow = pod1.value ?? pod0.value;
    return {
      schemaVersion: SCHEMA_VERSION,
      kind: RESULT_KIND,
      tool: toolInfo(opts.cwd ?? process.cwd()),
      environment: {
        node: process.version,
        platform: process.platform,
        arch: process.arch,
        hostname: hostname(),
        cpus: cpus().length,
        ...(opts.dummyWeights ? { weights: "dummy weights" as const } : {}),
        ...(opts.emulatedGpu ? { emulatedGpu: opts.emulatedGpu } : {}),
      },
      stack: opts.stack,
      startedAt,
      finishedAt: nowIso(),
      complete,
      valid: complete && invalidReasons.length === 0,
      invalidReasons,
      target: {
        endpoint: opts.endpoint,
        metricsUrl,
        servedModelName: model,
        kubernetesServer: pod.cluster.value?.server ?? null,
      },
      cluster: pod.cluster.value ? measured({ server: pod.cluster.value.server }) : missing(pod.cluster.reason),
      image: opts.outputs.image ?? null,
      vllmVersion: phases.identity?.vllmVersion.value ?? null,
      pod: podNow,
      node: podNow?.nodeName ?? null,
      replicas: pod.replicas,
      outputs: redactSecrets(opts.outputs) as Record<string, unknown>,
      scenario,
      phases,
    };
  } finally {
    await client.destroy();
  }
}
