import { z } from "zod";
import { knobJsType, TUNABLE_KNOBS, type TunableKnob, type TunableKnobValues } from "../../config";
import { SloBoundSchema } from "../../measure/inputs/slo";
import { judge, RecordedMissSchema } from "../../measure/inputs/slo-judge";
import { type Measured, measured, measuredOf, missing } from "../../measure/measured";
import { BatchBudgetSchema } from "../../measure/metrics/batch-budget";
import { MeasuredCeilingSchema, measureCeiling } from "../../measure/metrics/capacity";
import { type BenchmarkResult, capacityLevelAt } from "../../result";
import { levelThroughput, ThroughputBasisSchema } from "../throughput";
import { twinBinds } from "./twin-binds";

/**
 * What the proposal rules read from one candidate's run, small enough to ride in its committed
 * summary (`summaries/<stack>.json`, field `evidence`): per-level figures, the KV ceiling, the knobs
 * it ran with and the largest request its scenario sent. Derived from a result by a pure function.
 */

const int = z.number().int();

const LevelEvidenceSchema = z.strictObject({
  concurrency: int.positive(),
  valid: z.boolean(),
  /** The level's throughput as the recommendation reads it (`levelThroughput`: the estimate, else the count). */
  requestsPerSecond: z.number(),
  /** Which figure `requestsPerSecond` is; summaries written before it existed hold the count. */
  throughputBasis: ThroughputBasisSchema.default("count"),
  /** The estimate's relative standard error; null when read from the count. */
  throughputRelativeError: z.number().nullable().default(null),
  /** Peaks of vLLM's `num_requests_running` / `num_requests_waiting` over the window. */
  peakRunning: measuredOf(z.number()),
  peakWaiting: measuredOf(z.number()),
  preemptions: measuredOf(z.number()),
  peakKvCacheUsagePercent: measuredOf(z.number()),
});

/** The server and the latencies at one probe of the capacity search. */
const ProbeEvidenceSchema = z.strictObject({
  ratePerSecond: z.number(),
  peakRunning: measuredOf(z.number()),
  peakWaiting: measuredOf(z.number()),
  preemptions: measuredOf(z.number()),
  peakKvCacheUsagePercent: measuredOf(z.number()),
  /** vLLM's mean time in its queue over the window (`vllm:request_queue_time_seconds`), ms; null: not exported. */
  serverQueueMeanMs: z.number().nullable(),
  ttftP50Ms: z.number().nullable(),
  tpotP50Ms: z.number().nullable(),
  /** The probe's misses as the search recorded them (`judge`); sentences in summaries written before it. */
  misses: z.array(RecordedMissSchema),
  /**
   * Whether the server kept up with the arrivals (`judge`'s keep-up: its backlog did not grow through the
   * window): a probe can fail on that alone, every bound met by the requests that did complete. Absent in
   * summaries written before.
   */
  keptUp: z.boolean().optional(),
});

const BoundNameSchema = SloBoundSchema.pick({ metric: true, percentile: true });
/** A bound by metric and percentile; summaries written before the judge name it as text (`ttft:p99`), read here. */
const FailedBoundSchema = z.union([
  BoundNameSchema,
  z.string().transform((text, ctx) => {
    const [metric, percentile] = text.split(":");
    const read = BoundNameSchema.safeParse({ metric, percentile });
    if (read.success) return read.data;
    ctx.addIssue({ code: "custom", message: `${JSON.stringify(text)} is not a bound; allowed: METRIC:PERCENTILE` });
    return z.NEVER;
  }),
]);

/** What the SLO capacity search measured, for the SLO rule (`slo-bound.ts`). */
const CapacityEvidenceSchema = z.strictObject({
  /** The bounds that failed at the lowest failing rate, in the SLO's order. */
  failedBounds: z.array(FailedBoundSchema),
  capacityRatePerSecond: measuredOf(z.number()),
  /** The highest passing and the lowest failing probe; null where the search had none. */
  passing: ProbeEvidenceSchema.nullable(),
  failing: ProbeEvidenceSchema.nullable(),
  /** Where `failedBounds` were read, when not the failing window's own misses (the twin's long run). Absent: there. */
  failedBoundsFrom: z.string().optional(),
});
export type CapacityEvidence = z.infer<typeof CapacityEvidenceSchema>;

/** A knob's value schema, by the knob table's kind. */
const knobValueSchema = (key: TunableKnob) => {
  const type = knobJsType(key);
  return type === "integer" ? int : type === "number" ? z.number() : type === "boolean" ? z.boolean() : z.string();
};

/** What the rules read of each knob: the knob table's tunable knobs, each as its kind reads. */
type EvidenceKnobs = { readonly [K in TunableKnob]: Measured<TunableKnobValues[K]> };

/**
 * Every knob the one-knob rule counts (the knob table's), as `outputs.config` records it; a knob absent
 * from a summary written before it was read reads as unknown, with that reason.
 */
const KnobsSchema = z.strictObject(
  Object.fromEntries(
    TUNABLE_KNOBS.map((k) => [
      k,
      measuredOf(knobValueSchema(k)).default(missing(`${k} is absent: the summary was written before it was read`)),
    ]),
  ),
) as unknown as z.ZodType<EvidenceKnobs, Partial<EvidenceKnobs>>;

export const CandidateEvidenceSchema = z.strictObject({
  stack: z.string().min(1),
  /** The knobs as `outputs.config` records them (a knob left at vLLM's default as the stack sets it: 0, true). */
  knobs: KnobsSchema,
  /**
   * The step's token budget the server ran with (`max_num_batched_tokens`), with where the figure came
   * from: its log, the flag, or vLLM's rule for the card. Absent from summaries written before it was read.
   */
  batchBudget: measuredOf(BatchBudgetSchema).optional(),
  /** Closed-loop levels, lowest concurrency first. */
  levels: z.array(LevelEvidenceSchema),
  /** The KV pool the server reported (`vllm:cache_config_info`, else its start-up log). */
  kvCacheTokens: measuredOf(z.number()),
  /** Whole requests of the load's size the KV pool holds at once (the benchmark's predicted ceiling). */
  kvCeiling: measuredOf(
    z.strictObject({ requests: int.nonnegative(), tokensPerRequest: int.positive(), kvCacheTokens: z.number() }),
  ),
  /**
   * Where the closed loop stopped scaling: the benchmark's rule (`measureCeiling`) over the levels'
   * throughput as the recommendation reads it (summaries written before the estimate: the count's).
   */
  measuredCeiling: measuredOf(MeasuredCeilingSchema),
  /** The scenario's largest request, prompt plus max_tokens (the context phase, which probes the limit itself, left out). */
  largestRequest: measuredOf(z.strictObject({ tokens: int.positive(), source: z.string() })),
  complete: z.boolean(),
  valid: z.boolean(),
  /** The SLO capacity search's evidence; null: none ran. Absent from summaries written before it existed. */
  capacity: CapacityEvidenceSchema.nullable().optional(),
});

export type LevelEvidence = z.output<typeof LevelEvidenceSchema>;
export type CandidateEvidence = z.infer<typeof CandidateEvidenceSchema>;

/** A knob's value as `outputs.config` records it (a Pulumi config string or the value), read by the table's kind. */
function knob<K extends TunableKnob>(config: Record<string, unknown>, key: K): Measured<TunableKnobValues[K]> {
  const raw = config[key];
  const type = knobJsType(key);
  const bad = () => missing(`outputs.config.${key} is ${raw === undefined ? "absent" : JSON.stringify(raw)}`);
  let v: unknown = raw;
  if (type === "boolean") v = raw === "true" ? true : raw === "false" ? false : raw;
  else if (type !== "string" && typeof raw === "string" && raw.trim() !== "") v = Number(raw);
  if (type === "boolean" || type === "string") return typeof v === type ? measured(v as TunableKnobValues[K]) : bad();
  if (typeof v !== "number" || !Number.isFinite(v) || (type === "integer" && !Number.isInteger(v))) return bad();
  return measured(v as TunableKnobValues[K]);
}

const knobsOf = (config: Record<string, unknown>): EvidenceKnobs =>
  Object.fromEntries(TUNABLE_KNOBS.map((k) => [k, knob(config, k)])) as unknown as EvidenceKnobs;

function largestRequest(result: BenchmarkResult): CandidateEvidence["largestRequest"] {
  const found: Array<{ tokens: number; source: string }> = [];
  const { load, inputLength, sequential } = result.phases;
  if (load) {
    const prompt = load.prompts.usagePromptTokens?.max ?? load.promptTokens;
    if (prompt !== null)
      found.push({
        tokens: prompt + load.maxTokens,
        source: `load: ${prompt} prompt + ${load.maxTokens} output tokens`,
      });
  }
  for (const c of inputLength?.cases ?? []) {
    const prompt = c.prompts.usagePromptTokens?.max ?? c.promptTokens;
    if (prompt !== null && inputLength)
      found.push({
        tokens: prompt + inputLength.maxTokens,
        source: `inputLength ${c.repeats} repeats: ${prompt} prompt + ${inputLength.maxTokens} output tokens`,
      });
  }
  const seqPrompt = Math.max(...(sequential?.runs ?? []).map((r) => r.promptTokens ?? 0));
  if (sequential && seqPrompt > 0)
    found.push({
      tokens: seqPrompt + sequential.maxTokens,
      source: `sequential: ${seqPrompt} prompt + ${sequential.maxTokens} output tokens`,
    });
  if (found.length === 0) return missing("no load, inputLength or sequential phase recorded its prompt tokens");
  return measured(found.reduce((a, b) => (b.tokens > a.tokens ? b : a)));
}

/** Pure: the proposal rules' evidence from one result. */
export function candidateEvidence(result: BenchmarkResult): CandidateEvidence {
  const config = (result.outputs["config"] ?? {}) as Record<string, unknown>;
  const load = result.phases.load;
  const predicted = load?.concurrencyCeiling.predicted ?? missing("no load phase");
  const capacity = result.phases.identity?.kvCapacity ?? missing("no identity phase");
  const levels = [...(load?.levels ?? [])]
    .sort((a, b) => a.concurrency - b.concurrency)
    .map((l) => {
      const t = levelThroughput(l);
      return {
        concurrency: l.concurrency,
        valid: l.valid,
        requestsPerSecond: t.requestsPerSecond,
        throughputBasis: t.basis,
        throughputRelativeError: t.relativeStandardError,
        peakRunning: l.server.peakRunning,
        peakWaiting: l.server.peakWaiting,
        preemptions: l.server.preemptionsDelta,
        peakKvCacheUsagePercent: l.server.peakKvCacheUsagePercent,
      };
    });
  return {
    stack: result.stack,
    knobs: knobsOf(config),
    batchBudget: result.phases.identity
      ? (result.phases.identity.batchBudget ?? missing("the result was written before the batch budget was recorded"))
      : missing("no identity phase ran"),
    levels,
    kvCacheTokens:
      capacity.value !== null
        ? measured(capacity.value.kvCacheTokens)
        : predicted.value !== null
          ? measured(predicted.value.kvCacheTokens)
          : missing(capacity.reason ?? "unknown"),
    kvCeiling:
      predicted.value !== null
        ? measured({
            requests: predicted.value.kvLimit,
            tokensPerRequest: predicted.value.tokensPerRequest,
            kvCacheTokens: predicted.value.kvCacheTokens,
          })
        : missing(predicted.reason),
    measuredCeiling: load ? measureCeiling(levels) : missing("no load phase"),
    largestRequest: largestRequest(result),
    complete: result.complete,
    valid: result.valid,
    capacity: capacityEvidence(result),
  };
}

/** Pure: the capacity search's evidence, or null when none ran. */
function capacityEvidence(result: BenchmarkResult): CapacityEvidence | null {
  const c = result.phases.load?.capacity;
  if (!c) return null;
  const probe = (rate: number | null): CapacityEvidence["passing"] => {
    const l = capacityLevelAt(result.phases.load, rate);
    if (rate === null || !l) return null;
    return {
      ratePerSecond: rate,
      peakRunning: l.server.peakRunning,
      peakWaiting: l.server.peakWaiting,
      preemptions: l.server.preemptionsDelta,
      peakKvCacheUsagePercent: l.server.peakKvCacheUsagePercent,
      serverQueueMeanMs: l.serverLatency.queue.value?.meanMs ?? null,
      ttftP50Ms: l.ttftMs?.p50 ?? null,
      tpotP50Ms: l.tpotMs?.p50 ?? null,
      misses: c.probes.find((p) => p.ratePerSecond === rate)?.misses ?? [],
      keptUp: judge(l, c.slo).keepUp?.holds ?? true,
    };
  };
  // Past the twin's long-run capacity the SLO fails in the long run: its window above the capacity is the evidence
  // of what binds first there, whether or not that one window held by chance.
  const failingRate =
    c.lowestFailingRatePerSecond ??
    (c.twin?.basis === "twin" ? (c.probes.find((p) => p.kind === "scout")?.ratePerSecond ?? null) : null);
  const failing = capacityLevelAt(result.phases.load, failingRate);
  // The bounds over their percentile; when only the attainment failed, the bound met least (what binds first).
  const bounds = failing ? judge(failing, c.slo).bounds : [];
  const over = bounds.filter((b) => !b.within);
  const least = Math.min(...bounds.map((b) => b.metFraction));
  const failed = over.length > 0 ? over : bounds.filter((b) => b.metFraction === least && least < 1);
  // A twin's window above its capacity can hold by chance; its long run there still says what binds first.
  const fromTwin = failed.length === 0 && c.twin?.basis === "twin" ? twinBinds(c) : null;
  return {
    failedBounds: fromTwin ? [...fromTwin.bounds] : failed.map((b) => ({ metric: b.metric, percentile: b.percentile })),
    ...(fromTwin ? { failedBoundsFrom: fromTwin.text } : {}),
    capacityRatePerSecond: c.capacityRatePerSecond,
    passing: probe(c.highestPassingRatePerSecond),
    failing: probe(failingRate),
  };
}

/** A candidate a campaign could not start (campaign/start-failures.ts reads them from its records). */
export interface StartFailure {
  readonly stack: string;
  readonly knob: string;
  /** Baseline's value and the value that did not start. */
  readonly from: number;
  readonly value: number;
  readonly reason: string;
}
