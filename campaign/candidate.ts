import { measured, missing, parseStackOutputs, resolveEndpoint } from "../benchmarks";
import { servingName } from "../components/render";
import type { BenchmarkResult } from "../result";
import { changeText, knobChanges } from "../verdict";
import type { CampaignControl, CampaignDeps, CampaignSettings } from "./deps";
import { errorLine, type Prepared, prepare } from "./prepare";
import { type CandidateRecord, type FailureStep, failureText } from "./record";
import { resumeDecision } from "./resume";
import type { RolloutRef } from "./rollout-watch";
import { startOf } from "./starts";
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

/** What one candidate's turn produced: its record and, when complete, the result the verdict reads. */
interface CandidateOutcome {
  readonly record: CandidateRecord;
  readonly result: { readonly result: BenchmarkResult; readonly file: string } | null;
  /** Its `up` ran (whether or not it succeeded): a slot's stack then has objects to remove. */
  readonly deployed: boolean;
  /** It was deployed as a cold candidate: its stack (and claim) is destroyed once baseline is back. */
  readonly deployedCold: boolean;
}

type RecordFields = Partial<CandidateRecord> & Pick<CandidateRecord, "status">;

/**
 * A candidate's turn: `stack` is its stack file, `runStack` the Pulumi stack it runs under (the same
 * for slot 0; `<stack>.s<slot>` in a parallel slot, campaign/slots.ts). `total` is for the progress line.
 */
interface Turn {
  readonly stack: string;
  readonly runStack: string;
  readonly slot: number;
  readonly position: number;
  readonly total: number;
}

/** The record's slot fields, only in a parallel campaign, so a sequential summary stays as it was. */
const slotFields = (settings: CampaignSettings, turn: Omit<Turn, "total">): Partial<CandidateRecord> =>
  settings.parallel === undefined || settings.parallel.slots === 1
    ? {}
    : { candidate: turn.stack, slot: turn.slot, node: missing("not deployed"), gpu: missing(GPU_UNKNOWN) };

/**
 * A candidate's record with nothing measured, the fields `r` fills in: the one shape of a turn's
 * record, whether it ran, failed early or never ran (campaign/commands/run.ts's not-run turns).
 */
export const candidateRecord = (
  settings: CampaignSettings,
  turn: Omit<Turn, "total">,
  r: RecordFields,
): CandidateRecord => ({
  stack: turn.runStack,
  position: turn.position,
  detail: null,
  changes: [],
  knobChanges: [],
  failure: null,
  args: null,
  cacheRunId: null,
  resultFile: null,
  resultValid: null,
  upSeconds: null,
  waitSeconds: null,
  benchSeconds: null,
  ...slotFields(settings, turn),
  ...r,
});

/** Why a result names no GPU: the API server does not say which device the plugin gave a pod. */
const GPU_UNKNOWN =
  "the Kubernetes API does not say which device a pod was given (the kubelet's pod-resources API does; not read)";

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
  const seconds = (from: number) => (deps.now() - from) / 1000;
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
  if (!settings.fresh) {
    const decision = resumeDecision(deps.storedResults(stack), {
      config: prep.config,
      scenario: settings.scenario,
      kubernetesServer: settings.kubernetesServer,
    });
    if (decision.skip) {
      p.end("skipped", `complete result for this config: ${decision.file}`);
      return {
        record: record({
          ...common,
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
  }

  let upSeconds: number | null = null;
  let waitSeconds: number | null = null;
  let benchSeconds: number | null = null;
  let step: FailureStep = "up";
  const via = settings.viaDeploy;
  try {
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
    upSeconds = seconds(t0);
    p.took(upSeconds);
    const outputs = parseStackOutputs(rawOutputs, `stack ${stack}`);
    let placed: Partial<CandidateRecord> = {};
    if (deps.rollout !== undefined) {
      step = "rollout";
      const state = await deps.rollout(ref, prep.args, "ready", control.stop);
      if (state.kind === "failed") throw new Error(`rollout failed: ${state.reason}`);
      if (state.kind !== "ready")
        throw new Error(`the serving pod does not run ${stack}'s args (${state.detail}); nothing was measured`);
      placed = {
        node: state.node ? measured(state.node) : missing("the ready pod names no node"),
        gpu: state.gpu ? measured(state.gpu) : missing(GPU_UNKNOWN),
      };
    }
    let result: BenchmarkResult;
    if (via !== undefined) {
      step = "reading measured";
      const m = deployMeasurement(rawOutputs, {
        stack,
        workDir: settings.workDir,
        upStartedMs: t0,
        scenario: settings.scenario,
      });
      result = m.result;
      // The up held the deploy and the benchmark: each is recorded as its own part (the readiness wait is the benchmark's).
      upSeconds = m.deploySeconds;
      benchSeconds = m.benchSeconds;
    } else {
      const endpoint =
        settings.endpoint ?? (await deps.endpointOf?.(outputs, control.stop)) ?? resolveEndpoint(outputs, undefined);
      if (control.stop.aborted) throw new Error("campaign stopped (Ctrl-C) after deploying, before the benchmark");
      step = "wait";
      const t1 = deps.now();
      waitSeconds = await deps.waitServing(endpoint, prep.serving, control.stop);
      step = "bench";
      p.phase("bench");
      const t2 = deps.now();
      result = await deps.benchmark({ stack, outputs, endpoint, signal: control.stop });
      benchSeconds = seconds(t2);
      p.took(benchSeconds);
      waitSeconds = waitSeconds ?? seconds(t1);
    }
    const file = deps.writeResult(result);
    const detail = !result.complete
      ? "incomplete: stopped"
      : result.valid
        ? null
        : result.invalidReasons.slice(0, 3).join("; ");
    p.end(result.valid ? "ok" : result.complete ? "invalid" : "incomplete", detail ?? undefined);
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
