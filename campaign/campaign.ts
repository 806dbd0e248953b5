import type { Scenario } from "../benchmarks/inputs/scenario";
import { parseStackOutputs, resolveEndpoint, type StackOutputs } from "../benchmarks/inputs/stack-outputs";
import type { DeploymentRef } from "../benchmarks/kube/cluster";
import type { BenchmarkResult } from "../benchmarks/result/types";
import type { Mode } from "../benchmarks/verdict/candidate-summary";
import { throughputNoise } from "../benchmarks/verdict/noise";
import { recommend } from "../benchmarks/verdict/recommend";
import { type CompareRule, compareResults } from "../benchmarks/verdict/rule";
import { renderVllmArgs } from "../components/render/vllm-args";
import {
  BASELINE_STACK,
  checkStackConfig,
  formatProblems,
  parseCandidateConfig,
  type RawConfig,
  stackKey,
} from "../config";
import type { OrderMode } from "./order";
import type { ServingExpectation } from "./probe";
import type { CampaignProgress } from "./progress";
import type { StackDriver } from "./pulumi";
import { recoveryCommand } from "./recover";
import { configChanges, resumeDecision, type StoredResult } from "./resume";
import type { RolloutState } from "./rollout";
import type { RolloutRef } from "./rollout-watch";
import { startOf } from "./starts";
import {
  CAMPAIGN_KIND,
  CAMPAIGN_SCHEMA_VERSION,
  type CampaignSummary,
  type CandidateRecord,
  type CleanupRecord,
  type RestoreRecord,
} from "./summary";
import { type ObservedState, verifyBaseline } from "./verify";

export const BASELINE = "baseline";
const RUN_ID_KEY = stackKey("cacheRunId");

/** Everything that touches the world, so the orchestration is testable with fakes. */
export interface CampaignDeps {
  readonly driver: StackDriver;
  /** The stack's config as the engine will see it (Pulumi.yaml defaults + stack file). */
  readonly readConfig: (stack: string) => RawConfig;
  readonly storedResults: (stack: string) => StoredResult[];
  /** Writes a result file; returns its path. */
  readonly writeResult: (result: BenchmarkResult) => string;
  readonly benchmark: (req: {
    stack: string;
    outputs: StackOutputs;
    endpoint: string;
    signal: AbortSignal;
  }) => Promise<BenchmarkResult>;
  readonly waitServing: (endpoint: string, want: ServingExpectation, signal: AbortSignal) => Promise<number>;
  readonly observe: (endpoint: string, ref: DeploymentRef) => Promise<ObservedState>;
  /** Called with the summary so far after every step, so a killed campaign still leaves a record. */
  readonly checkpoint: (summary: CampaignSummary) => void;
  readonly progress: CampaignProgress;
  /**
   * Checked before each candidate and before restoring: a problem that makes every further
   * step pointless (the lab stopped), or null. Stops the campaign instead of letting each
   * `pulumi up` wait out its startup budget.
   */
  readonly preflight?: () => string | null;
  /**
   * Reads a candidate's rollout (campaign/rollout.ts). `failure`: runs beside `pulumi up` until stopped and
   * resolves early with a failed state (crash loop, image that cannot be pulled, pod that cannot be
   * scheduled), which cancels the `up`. `ready`: after `up`, until the serving pod is Ready with the
   * candidate's own args (`up` can return before the new pod exists).
   */
  readonly rollout?: (
    ref: RolloutRef,
    args: readonly string[],
    until: "failure" | "ready",
    signal: AbortSignal,
  ) => Promise<RolloutState>;
  /** Sink for Pulumi's output (a log file). */
  readonly pulumiLog: (text: string) => void;
  readonly now: () => number;
}

export interface CampaignSettings {
  readonly id: string;
  /** Stacks in run order. */
  readonly stacks: readonly string[];
  readonly order: { readonly mode: OrderMode; readonly seed: number };
  readonly scenario: Scenario;
  readonly scenarioSource: string;
  readonly mode: Mode;
  /** On the lab with a real engine: what served the pods (absent: the simulator, or a cluster). */
  readonly labEngine?: string;
  /** A fixed endpoint (lab, --endpoint); undefined: each stack's NodePort. */
  readonly endpoint: string | undefined;
  readonly kubernetesServer: string | null;
  readonly kubeconfig: string | undefined;
  readonly workDir: string;
  readonly backend: string | undefined;
  /** Ignore earlier results: measure every candidate again. */
  readonly fresh: boolean;
  /** The cacheRunId cold candidates get, unique to this campaign. */
  readonly coldRunId: string;
  readonly targetConcurrency: number;
  /** Latency bounds the rule applies at the target (`campaign tune --slo-*`); absent: none. */
  readonly slo?: Pick<CompareRule, "sloP95Ms" | "sloTtftP95Ms">;
  /** Leave the cold stack (and its claim) after the campaign instead of destroying it. */
  readonly keepCold: boolean;
  readonly logFile: string;
  /** The Pulumi CLI the campaign runs, for the recovery hints (the lab's is not on PATH). */
  readonly pulumi?: string | undefined;
  readonly tool: CampaignSummary["tool"];
}

/**
 * `stop`: first Ctrl-C. The benchmark ends early (its partial result is kept, marked incomplete),
 * no further candidate starts, baseline is restored. `cancel`: second Ctrl-C; a running Pulumi
 * operation is cancelled and baseline is not restored (the summary says how to do it by hand).
 */
export interface CampaignControl {
  readonly stop: AbortSignal;
  readonly cancel: AbortSignal;
}

/** Same as the stack output `config`: the parsed config through JSON. */
const asRecord = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

/**
 * The telling line of an error, for the progress line and the summary. The Automation API's errors start
 * with `code: N` and carry the CLI's stderr below: its `error:` line (a stale lock, a failed await) is
 * the one that says what happened.
 */
export function errorLine(err: unknown): string {
  const lines = ((err as Error)?.message ?? String(err))
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const telling =
    lines.find((l) => /^error: /.test(l) && !/^error: update failed$/.test(l)) ??
    lines.find((l) => !/^(code: -?\d+|stdout:|stderr:|err\?:)/.test(l)) ??
    lines[0];
  return telling?.slice(0, 400) ?? String(err);
}

export interface Prepared {
  readonly overrides: Record<string, string>;
  readonly config: Record<string, unknown>;
  readonly serving: ServingExpectation;
  readonly args: string[];
  readonly cold: boolean;
}

/** Parses a stack's config, giving cold candidates this campaign's cacheRunId. */
export function prepare(
  deps: Pick<CampaignDeps, "readConfig">,
  settings: Pick<CampaignSettings, "coldRunId">,
  stack: string,
): Prepared | { problems: string } {
  const raw = deps.readConfig(stack);
  const first = parseCandidateConfig(raw);
  const cold = first.ok ? first.config.cacheMode === "cold" : raw[stackKey("cacheMode")] === "cold";
  const overrides: Record<string, string> = cold ? { [RUN_ID_KEY]: settings.coldRunId } : {};
  // The rules the program applies at preview, one-knob included, so a two-knob stack is refused before anything runs.
  const parsed = checkStackConfig(stack, deps.readConfig(BASELINE_STACK), { ...raw, ...overrides });
  if (!parsed.ok) return { problems: formatProblems(parsed.problems) };
  const c = parsed.config;
  return {
    overrides,
    config: asRecord(c),
    serving: { servedModelName: c.servedModelName, maxModelLen: c.maxModelLen },
    args: renderVllmArgs(c),
    cold,
  };
}

/**
 * `pulumi up` with the rollout watchdog beside it: a rollout that cannot succeed cancels the `up` (the
 * Automation API's SIGINT, a graceful cancel that leaves no pending operation) instead of letting the
 * provider wait out its timeout, and the error names the container's own reason.
 */
async function upWithWatchdog(
  deps: CampaignDeps,
  stack: string,
  prep: Prepared,
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
    return await deps.driver.up(stack, {
      config: prep.overrides,
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

export async function runCampaign(
  settings: CampaignSettings,
  deps: CampaignDeps,
  control: CampaignControl,
): Promise<CampaignSummary> {
  const startMs = deps.now();
  const startedAt = new Date(startMs).toISOString();
  const seconds = (from: number) => (deps.now() - from) / 1000;
  const p = deps.progress;

  const base = prepare(deps, settings, BASELINE);
  if ("problems" in base)
    throw new Error(
      `baseline's config is invalid, so nothing can be restored; fix it first (npm run check:stacks):\n${base.problems}`,
    );

  const candidates: CandidateRecord[] = [];
  const results: Array<{ result: BenchmarkResult; file: string }> = [];
  const deployedCold = new Set<string>();
  let restore: RestoreRecord | null = null;
  const cleanup: CleanupRecord[] = [];
  let interrupted = false;
  let fatal: string | null = null;

  const summary = (): CampaignSummary => {
    const comparison =
      results.length > 0
        ? compareResults(results, { targetConcurrency: settings.targetConcurrency, ...settings.slo })
        : null;
    return {
      schemaVersion: CAMPAIGN_SCHEMA_VERSION,
      kind: CAMPAIGN_KIND,
      id: settings.id,
      startedAt,
      finishedAt: new Date(deps.now()).toISOString(),
      wallSeconds: seconds(startMs),
      tool: settings.tool,
      mode: settings.mode,
      ...(settings.labEngine ? { labEngine: settings.labEngine } : {}),
      workDir: settings.workDir,
      backend: settings.backend ?? null,
      kubeconfig: settings.kubeconfig ?? null,
      kubernetesServer: settings.kubernetesServer,
      endpoint: settings.endpoint ?? null,
      order: { ...settings.order, stacks: [...settings.stacks] },
      scenario: { source: settings.scenarioSource, scenario: settings.scenario },
      fresh: settings.fresh,
      interrupted,
      labLost: fatal,
      candidates: [...candidates],
      restore,
      cleanup: [...cleanup],
      comparison,
      recommendation: recommend(comparison, candidates, base.args, (stack) => {
        const r = results.find((x) => x.result.stack === stack)?.result;
        return r === undefined ? null : throughputNoise(r, settings.targetConcurrency);
      }),
      logFile: settings.logFile,
      pulumi: settings.pulumi,
    };
  };

  const total = settings.stacks.length;
  for (const [i, stack] of settings.stacks.entries()) {
    const position = i + 1;
    const record = (r: Partial<CandidateRecord> & Pick<CandidateRecord, "status">): void => {
      candidates.push({
        stack,
        position,
        detail: null,
        changes: [],
        args: null,
        cacheRunId: null,
        resultFile: null,
        resultValid: null,
        upSeconds: null,
        waitSeconds: null,
        benchSeconds: null,
        ...r,
      });
      deps.checkpoint(summary());
    };
    if (control.stop.aborted) {
      interrupted = true;
      record({ status: "not-run", detail: "campaign stopped (Ctrl-C)" });
      continue;
    }
    fatal ??= deps.preflight?.() ?? null;
    if (fatal !== null) {
      if (!candidates.some((c) => c.detail === fatal)) p.note(`stopping: ${fatal}`);
      record({ status: "not-run", detail: fatal });
      continue;
    }
    p.begin(position, total, stack);
    deps.pulumiLog(`\n===== [${position}/${total}] ${stack} =====\n`);
    const prep = prepare(deps, settings, stack);
    if ("problems" in prep) {
      p.end("invalid config", "see the summary");
      record({ status: "invalid-config", detail: prep.problems });
      continue;
    }
    const common = {
      changes: configChanges(base.config, prep.config),
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
        results.push({ result: decision.result, file: decision.file });
        record({
          ...common,
          status: "skipped",
          detail: `earlier complete result ${decision.file}`,
          resultFile: decision.file,
          resultValid: decision.result.valid,
          start: startOf(decision.result),
        });
        continue;
      }
    }

    let upSeconds: number | null = null;
    let waitSeconds: number | null = null;
    let benchSeconds: number | null = null;
    let step = "up";
    try {
      p.phase("up");
      const t0 = deps.now();
      if (prep.cold) deployedCold.add(stack);
      const ref = {
        namespace: String(prep.config["namespace"]),
        deploymentName: String(prep.config["deploymentName"]),
        container: "vllm",
      };
      const rawOutputs = await upWithWatchdog(deps, stack, prep, ref, control.cancel);
      upSeconds = seconds(t0);
      p.took(upSeconds);
      const outputs = parseStackOutputs(rawOutputs, `stack ${stack}`);
      if (deps.rollout !== undefined) {
        step = "rollout";
        const state = await deps.rollout(ref, prep.args, "ready", control.stop);
        if (state.kind === "failed") throw new Error(`rollout failed: ${state.reason}`);
        if (state.kind !== "ready")
          throw new Error(`the serving pod does not run ${stack}'s args (${state.detail}); nothing was measured`);
      }
      const endpoint = settings.endpoint ?? resolveEndpoint(outputs, undefined);
      if (control.stop.aborted) throw new Error("campaign stopped (Ctrl-C) after deploying, before the benchmark");
      step = "wait";
      const t1 = deps.now();
      waitSeconds = await deps.waitServing(endpoint, prep.serving, control.stop);
      step = "bench";
      p.phase("bench");
      const t2 = deps.now();
      const result = await deps.benchmark({ stack, outputs, endpoint, signal: control.stop });
      benchSeconds = seconds(t2);
      p.took(benchSeconds);
      waitSeconds = waitSeconds ?? seconds(t1);
      const file = deps.writeResult(result);
      if (result.complete) results.push({ result, file });
      const detail = !result.complete
        ? "incomplete: stopped"
        : result.valid
          ? null
          : result.invalidReasons.slice(0, 3).join("; ");
      p.end(result.valid ? "ok" : result.complete ? "invalid" : "incomplete", detail ?? undefined);
      record({
        ...common,
        status: "measured",
        detail,
        resultFile: file,
        resultValid: result.valid,
        start: startOf(result),
        upSeconds,
        waitSeconds,
        benchSeconds,
      });
    } catch (err) {
      const detail = control.cancel.aborted ? `${step} cancelled (Ctrl-C twice)` : `${step} failed: ${errorLine(err)}`;
      p.end("FAILED", `${detail}; Pulumi log: ${settings.logFile}`);
      if (control.stop.aborted) interrupted = true;
      record({
        ...common,
        status: control.stop.aborted ? "not-run" : "failed",
        detail,
        upSeconds,
        waitSeconds,
        benchSeconds,
      });
    }
    if (control.stop.aborted) interrupted = true;
  }

  if (control.cancel.aborted) {
    p.note(`cancelled: baseline NOT restored. Restore it with: ${recoveryCommand(settings)}`);
    const s = summary();
    deps.checkpoint(s);
    return s;
  }

  fatal ??= deps.preflight?.() ?? null;
  if (fatal !== null) {
    restore = { upSeconds: null, error: fatal, verification: null };
    for (const stack of deployedCold)
      cleanup.push({ stack, action: "kept", detail: `not destroyed: ${fatal}`, seconds: null });
    p.note(`baseline not restored: ${fatal}`);
    const s = summary();
    deps.checkpoint(s);
    return s;
  }

  // Restore baseline and verify it the way the seed's engineer did (step 8), plus the live args.
  p.begin("restore", total, BASELINE);
  deps.pulumiLog(`\n===== restore ${BASELINE} =====\n`);
  const t0 = deps.now();
  let baselineOutputs: StackOutputs | null = null;
  try {
    p.phase("up");
    baselineOutputs = parseStackOutputs(
      await deps.driver.up(BASELINE, { log: deps.pulumiLog, signal: control.cancel }),
      `stack ${BASELINE}`,
    );
    const upSeconds = seconds(t0);
    p.took(upSeconds);
    const endpoint = settings.endpoint ?? resolveEndpoint(baselineOutputs, undefined);
    p.phase("verify");
    // Wait (bounded) so a slow switch-over shows as a verification failure, not a race.
    await deps.waitServing(endpoint, base.serving, control.cancel).catch(() => undefined);
    const observed = await deps.observe(endpoint, {
      namespace: baselineOutputs.namespace,
      deploymentName: baselineOutputs.deploymentName,
      containerName: "vllm",
    });
    const expectedImage = typeof base.config["image"] === "string" ? base.config["image"] : "";
    const verification = verifyBaseline(observed, {
      servedModelName: base.serving.servedModelName,
      maxModelLen: base.serving.maxModelLen,
      args: base.args,
      image: expectedImage,
    });
    restore = { upSeconds, error: null, verification };
    p.end(
      verification.ok ? "ok" : "VERIFICATION FAILED",
      verification.ok
        ? undefined
        : verification.checks
            .filter((c) => !c.ok)
            .map((c) => `${c.name}: ${c.detail}`)
            .join("; "),
    );
  } catch (err) {
    restore = { upSeconds: null, error: errorLine(err), verification: null };
    p.end("FAILED", `${errorLine(err)}; restore with: ${recoveryCommand(settings)}; Pulumi log: ${settings.logFile}`);
  }
  deps.checkpoint(summary());

  // A cold claim can go only once no pod mounts it: after baseline is back.
  for (const stack of deployedCold) {
    if (settings.keepCold) {
      cleanup.push({ stack, action: "kept", detail: "--keep-cold", seconds: null });
      continue;
    }
    if (restore.error !== null) {
      cleanup.push({
        stack,
        action: "kept",
        detail: `baseline not restored, its claim may still be mounted; destroy it after restoring: pulumi destroy --stack ${stack}`,
        seconds: null,
      });
      continue;
    }
    p.begin("cleanup", total, stack);
    p.phase("destroy");
    const t = deps.now();
    try {
      await deps.driver.destroy(stack, { log: deps.pulumiLog, signal: control.cancel });
      const s = seconds(t);
      p.took(s);
      p.end("ok");
      cleanup.push({
        stack,
        action: "destroyed",
        detail: `cold claim of run ${settings.coldRunId} deleted`,
        seconds: s,
      });
    } catch (err) {
      p.end("FAILED", errorLine(err));
      cleanup.push({
        stack,
        action: "kept",
        detail: `destroy failed: ${errorLine(err)}; retry: pulumi destroy --stack ${stack}`,
        seconds: null,
      });
    }
  }
  const s = summary();
  deps.checkpoint(s);
  return s;
}

export interface PlannedCandidate {
  readonly position: number;
  readonly stack: string;
  readonly action: "run" | "skip" | "invalid-config";
  readonly detail: string;
  readonly changes: string[];
}

/** What `run` would do, without touching Pulumi or the cluster (`campaign plan`). */
export function planCampaign(
  settings: Pick<CampaignSettings, "stacks" | "coldRunId" | "fresh" | "scenario" | "kubernetesServer">,
  deps: Pick<CampaignDeps, "readConfig" | "storedResults">,
): PlannedCandidate[] {
  const base = prepare(deps, settings, BASELINE);
  const baseConfig = "problems" in base ? {} : base.config;
  return settings.stacks.map((stack, i) => {
    const prep = prepare(deps, settings, stack);
    if ("problems" in prep)
      return { position: i + 1, stack, action: "invalid-config", detail: prep.problems, changes: [] };
    const changes = configChanges(baseConfig, prep.config);
    if (settings.fresh) return { position: i + 1, stack, action: "run", detail: "--fresh", changes };
    const d = resumeDecision(deps.storedResults(stack), {
      config: prep.config,
      scenario: settings.scenario,
      kubernetesServer: settings.kubernetesServer,
    });
    return d.skip
      ? { position: i + 1, stack, action: "skip", detail: `complete result ${d.file}`, changes }
      : { position: i + 1, stack, action: "run", detail: d.reason, changes };
  });
}
