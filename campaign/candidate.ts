import { measured, missing, parseStackOutputs, resolveEndpoint, type StackOutputs } from "../benchmarks";
import { servingName } from "../components/render";
import type { BenchmarkResult } from "../result";
import { changeText, knobChanges } from "../verdict";
import type { CampaignControl, CampaignDeps, CampaignSettings } from "./deps";
import { errorLine, type Prepared, prepare } from "./prepare";
import { type CandidateRecord, type FailureStep, failureText } from "./record";
import { resumeDecision } from "./resume";
import type { RolloutRef } from "./rollout-watch";
import { startOf } from "./starts";
import { type CandidateOutcome, candidateRecord, GPU_UNKNOWN, type RecordFields, slotFields, type Turn } from "./turn";
import { deployMeasurement, viaDeployOverrides } from "./via-deploy";

/**
 * `pulumi up` with the rollout watchdog beside it: a rollout that cannot succeed cancels the `up` (the
 * Automation API's SIGINT, a graceful cancel that leaves no pending operation) instead of letting the
 * provider wait out its timeout, and the error names the container's own reason.
 */
async function upWithWatchdog(
  deps: CampaignDeps,
  turn: Turn,
  prep: Prepared,
  config: Record<string, string>,
  ref: RolloutRef,
  cancel: AbortSignal,
): Promise<Record<string, unknown>> {
  const stopWatch = new AbortController();
  const stopUp = new AbortController();
  const failure: { reason: string | null } = { reason: null };
  const watchdog =
    deps.rollout?.(ref, prep.args, "failure", stopWatch.signal).then(
      (state) => {
        if (state.kind !== "failed") return;
        failure.reason = state.reason;
        stopUp.abort();
      },
      () => undefined,
    ) ?? Promise.resolve();
  try {
    return await deps.driver.up(turn.runStack, {
      config,
      ...(turn.slot > 0 ? { stackFileFrom: turn.stack } : {}),
      log: deps.pulumiLog,
      signal: AbortSignal.any([cancel, stopUp.signal]),
    });
  } catch (err) {
    if (failure.reason !== null) throw new Error(`rollout failed, up cancelled: ${failure.reason}`);
    throw err;
  } finally {
    stopWatch.abort();
    await watchdog;
  }
}

/** How far a turn got: the step it is in (what a failure names) and the seconds each finished part took. */
interface TurnClock {
  step: FailureStep;
  upSeconds: number | null;
  waitSeconds: number | null;
  benchSeconds: number | null;
}

/** A deployed candidate's measurement, and where its ready pod was placed (parallel slots record it). */
interface Measurement {
  readonly result: BenchmarkResult;
  readonly placed: Partial<CandidateRecord>;
}

/** Resume: the outcome of a candidate an earlier complete result for its config stands for; null: measure it. */
function resumedOutcome(
  settings: CampaignSettings,
  deps: CampaignDeps,
  stack: string,
  config: Record<string, unknown>,
  record: (r: RecordFields) => CandidateRecord,
): CandidateOutcome | null {
  const decision = resumeDecision(deps.storedResults(stack), {
    config,
    scenario: settings.scenario,
    kubernetesServer: settings.kubernetesServer,
  });
  if (!decision.skip) return null;
  deps.progress.end("skipped", `complete result for this config: ${decision.file}`);
  return {
    record: record({
      status: "skipped",
      detail: `earlier complete result ${decision.file}`,
      resultFile: decision.file,
      resultValid: decision.result.valid,
      start: startOf(decision.result),
    }),
    result: { result: decision.result, file: decision.file },
    deployed: false,
    deployedCold: false,
  };
}

/**
 * One candidate's turn: prepare its config, skip it when an earlier result stands for it (resume),
 * else deploy, wait for its rollout and serving, benchmark and write the result. Never throws: a
 * failure is the record's status and detail. `total` is for the progress line only.
 */
export async function runCandidate(
  settings: CampaignSettings,
  deps: CampaignDeps,
  control: CampaignControl,
  turn: Turn,
  baseConfig: Record<string, unknown>,
): Promise<CandidateOutcome> {
  const { runStack: stack, position, total } = turn;
  const p = deps.progress;
  const record = (r: RecordFields): CandidateRecord => candidateRecord(settings, turn, r);
  p.begin(position, total, stack);
  deps.pulumiLog(`\n===== [${position}/${total}] ${stack} =====\n`);
  const prep = prepare(deps, settings, turn.stack, turn.slot);
  if ("problems" in prep) {
    p.end("invalid config", "see the summary");
    return {
      record: record({ status: "invalid-config", detail: prep.problems }),
      result: null,
      deployed: false,
      deployedCold: false,
    };
  }
  const changed = knobChanges(baseConfig, prep.config);
  const common = {
    changes: changed.map(changeText),
    knobChanges: changed,
    args: prep.args,
    cacheRunId: prep.cold ? settings.coldRunId : null,
  };
  const resumed = settings.fresh
    ? null
    : resumedOutcome(settings, deps, stack, prep.config, (r) => record({ ...common, ...r }));
  if (resumed !== null) return resumed;

  const clock: TurnClock = { step: "up", upSeconds: null, waitSeconds: null, benchSeconds: null };
  try {
    const { result, placed } = await deployAndMeasure(settings, deps, control, turn, prep, clock);
    const file = deps.writeResult(result);
    const detail = !result.complete
      ? "incomplete: stopped"
      : result.valid
        ? null
        : result.invalidReasons.slice(0, 3).join("; ");
    p.end(result.valid ? "ok" : result.complete ? "invalid" : "incomplete", detail ?? undefined);
    const { upSeconds, waitSeconds, benchSeconds } = clock;
    return {
      record: record({
        ...common,
        status: "measured",
        detail,
        resultFile: file,
        resultValid: result.valid,
        start: startOf(result),
        upSeconds,
        waitSeconds,
        benchSeconds,
        ...(Object.keys(slotFields(settings, turn)).length > 0 ? placed : {}),
      }),
      result: result.complete ? { result, file } : null,
      deployed: true,
      deployedCold: prep.cold,
    };
  } catch (err) {
    const { step, upSeconds, waitSeconds, benchSeconds } = clock;
    const failure = { step, message: errorLine(err) };
    const detail = control.cancel.aborted ? `${step} cancelled (Ctrl-C twice)` : failureText(failure);
    p.end("FAILED", `${detail}; Pulumi log: ${settings.logFile}`);
    const status = control.stop.aborted ? "not-run" : "failed";
    return {
      record: record({
        ...common,
        status,
        detail,
        failure: status === "failed" && !control.cancel.aborted ? failure : null,
        upSeconds,
        waitSeconds,
        benchSeconds,
      }),
      result: null,
      deployed: true,
      deployedCold: prep.cold,
    };
  }
}

/**
 * The deployed part of a turn: `pulumi up`, the rollout check, then the measurement (read from the `up`'s
 * outputs with --via-deploy, else benchmarked here). Throws; `clock` says in which step and what it timed.
 */
async function deployAndMeasure(
  settings: CampaignSettings,
  deps: CampaignDeps,
  control: CampaignControl,
  turn: Turn,
  prep: Prepared,
  clock: TurnClock,
): Promise<Measurement> {
  const { runStack: stack } = turn;
  const p = deps.progress;
  const via = settings.viaDeploy;
  // With --via-deploy the benchmark runs inside this up (campaign/via-deploy.ts).
  p.phase(via === undefined ? "up" : "up+bench");
  const t0 = deps.now();
  const ref = {
    namespace: String(prep.config["namespace"]),
    deploymentName: servingName({
      deploymentName: String(prep.config["deploymentName"]),
      slot: Number(prep.config["slot"] ?? 0),
    }),
    container: "vllm",
  };
  const config = {
    ...prep.overrides,
    ...(via === undefined ? {} : viaDeployOverrides(settings.endpoint, via.scenarioFile)),
  };
  const rawOutputs = await upWithWatchdog(deps, turn, prep, config, ref, control.cancel);
  clock.upSeconds = (deps.now() - t0) / 1000;
  p.took(clock.upSeconds);
  const outputs = parseStackOutputs(rawOutputs, `stack ${stack}`);
  const placed = await rolloutPlacement(deps, control, stack, prep, ref, clock);
  if (via === undefined)
    return { result: await benchmarkServing(settings, deps, control, stack, prep, outputs, clock), placed };
  clock.step = "reading measured";
  const m = deployMeasurement(rawOutputs, {
    stack,
    workDir: settings.workDir,
    upStartedMs: t0,
    scenario: settings.scenario,
  });
  // The up held the deploy and the benchmark: each is recorded as its own part (the readiness wait is the benchmark's).
  clock.upSeconds = m.deploySeconds;
  clock.benchSeconds = m.benchSeconds;
  return { result: m.result, placed };
}

/** The rollout check: the serving pod runs this candidate's args and is ready; where it was placed. */
async function rolloutPlacement(
  deps: CampaignDeps,
  control: CampaignControl,
  stack: string,
  prep: Prepared,
  ref: RolloutRef,
  clock: TurnClock,
): Promise<Partial<CandidateRecord>> {
  if (deps.rollout === undefined) return {};
  clock.step = "rollout";
  const state = await deps.rollout(ref, prep.args, "ready", control.stop);
  if (state.kind === "failed") throw new Error(`rollout failed: ${state.reason}`);
  if (state.kind !== "ready")
    throw new Error(`the serving pod does not run ${stack}'s args (${state.detail}); nothing was measured`);
  return {
    node: state.node ? measured(state.node) : missing("the ready pod names no node"),
    gpu: state.gpu ? measured(state.gpu) : missing(GPU_UNKNOWN),
  };
}

/** The benchmark from outside the cluster: find the endpoint, wait until it serves, run the benchmark. */
async function benchmarkServing(
  settings: CampaignSettings,
  deps: CampaignDeps,
  control: CampaignControl,
  stack: string,
  prep: Prepared,
  outputs: StackOutputs,
  clock: TurnClock,
): Promise<BenchmarkResult> {
  const p = deps.progress;
  const seconds = (from: number) => (deps.now() - from) / 1000;
  const endpoint =
    settings.endpoint ?? (await deps.endpointOf?.(outputs, control.stop)) ?? resolveEndpoint(outputs, undefined);
  if (control.stop.aborted) throw new Error("campaign stopped (Ctrl-C) after deploying, before the benchmark");
  clock.step = "wait";
  const t1 = deps.now();
  clock.waitSeconds = await deps.waitServing(endpoint, prep.serving, control.stop);
  clock.step = "bench";
  p.phase("bench");
  const t2 = deps.now();
  const result = await deps.benchmark({ stack, outputs, endpoint, signal: control.stop, progress: p });
  clock.benchSeconds = seconds(t2);
  p.took(clock.benchSeconds);
  clock.waitSeconds = clock.waitSeconds ?? seconds(t1);
  return result;
}
