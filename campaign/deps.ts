import type { DeploymentRef, Scenario, Slo, StackOutputs } from "../benchmarks";
import type { RawConfig, RecordedRuleSettings } from "../config";
import type { BenchmarkResult, ReadinessPhase } from "../result";
import type { Mode } from "../verdict";
import type { OrderMode } from "./order";
import type { ServingExpectation } from "./probe";
import type { CampaignProgress } from "./progress";
import type { StackDriver } from "./pulumi";
import type { CampaignSummary } from "./record";
import type { StoredResult } from "./resume";
import type { RolloutState } from "./rollout";
import type { RolloutRef } from "./rollout-watch";
import type { ObservedState } from "./verify";

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
    /** The candidate's own line: the benchmark's stages show as its status (a slot's too). */
    progress: CampaignProgress;
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
  /**
   * Where a stack's server answers when the campaign has no fixed endpoint and the stack's outputs
   * name none (the lab's loopback endpoint per Service, `.lab/services.json`); undefined: its NodePort.
   */
  readonly endpointOf?: (outputs: StackOutputs, signal: AbortSignal) => Promise<string | undefined>;
  /**
   * After the restore's `up`: how baseline's current pod came up, read as the benchmark's readiness
   * phase reads it (campaign/starts.ts `readRestoreReadiness`). Absent: the restore's start is not read.
   */
  readonly restoreReadiness?: (ref: DeploymentRef, signal: AbortSignal) => Promise<ReadinessPhase>;
  /** Sink for Pulumi's output (a log file). */
  readonly pulumiLog: (text: string) => void;
  readonly now: () => number;
}

/**
 * A campaign's settings. The rule's (config/rule.ts) as summaries record them, the SLO beside them;
 * one absent is its default (`compareRule` fills it in), so a new setting needs no change here.
 */
export interface CampaignSettings extends Partial<RecordedRuleSettings> {
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
  /** Latency bounds the rule applies (`--slo`, else the scenario's); absent: none. */
  readonly slo?: Slo;
  /**
   * `campaign run --parallel N` (campaign/slots.ts): slots, the seed of the order of the queue they
   * share, and whether the slots beside the real server outlive the campaign. Absent: one slot.
   */
  readonly parallel?: { readonly slots: number; readonly seed: number; readonly keepSlots: boolean };
  /**
   * `campaign run --via-deploy` (campaign/via-deploy.ts): each candidate measures itself inside its
   * `pulumi up` with this scenario file (the campaign's scenario, written for the run). Absent: the
   * campaign calls the benchmark.
   */
  readonly viaDeploy?: { readonly scenarioFile: string };
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
