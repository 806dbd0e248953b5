import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { CapacitySchema, capacityRefusals } from "./capacity-settings";
import { DEFAULT_SLO_ATTAINMENT, type Slo, SloAttainmentSchema, SloBoundsSchema, scenarioSlo } from "./slo";
import { SweepSchema } from "./sweep-settings";

/** The seed's short prompt ("summarise three advantages of Kubernetes"), sent verbatim. */
const SEED_SHORT_PROMPT = "Kubernetes의 장점을 세 가지로 요약해줘.";
/** The seed's filler sentence; payloads are this repeated (trailing space included). */
export const SEED_SENTENCE = "Kubernetes GPU serving reliability test. ";

export const PHASES = ["readiness", "identity", "sequential", "context", "load", "inputLength"] as const;

const positiveInt = z.number().int().positive();

/** Largest `load.targetRelativeError`: above it the batch-means error of a third of a window says little. */
export const MAX_TARGET_RELATIVE_ERROR = 0.5;

/** A fraction in (0, 0.5]; the message names the value and the range (the path names the field). */
const notAllowed = (v: unknown) =>
  `${JSON.stringify(v)} is not allowed: a fraction in (0, ${MAX_TARGET_RELATIVE_ERROR}], e.g. 0.05 for 5 %`;
const TargetRelativeErrorSchema = z.number({ error: (issue) => notAllowed(issue.input) }).superRefine((v, ctx) => {
  if (!(v > 0 && v <= MAX_TARGET_RELATIVE_ERROR)) ctx.addIssue({ code: "custom", message: notAllowed(v) });
});

export type { CapacitySettings } from "./capacity-settings";

/** The open loop: arrivals at a rate, independent of completions (`vllm bench serve --request-rate`). */
const OpenLoopSchema = z
  .object({
    /** Request rates to run, requests per second; ignored by a sweep, which computes its own. */
    ratesPerSecond: z.array(z.number().positive().max(100_000)).nonempty().default([1, 2, 4]),
    /** poisson: exponential gaps (vLLM's default, burstiness 1); constant: exactly 1/rate apart. */
    arrival: z.enum(["poisson", "constant"]).default("poisson"),
    /** Seed of the arrival schedule: the same seed gives the same schedule. */
    seed: z.number().int().nonnegative().default(0),
    /** Arrivals while this many requests are in flight are dropped and counted, never queued in the client. */
    maxInFlight: positiveInt.max(100_000).default(256),
    /** null: run `ratesPerSecond`; set: find the highest rate meeting the SLOs. */
    sweep: SweepSchema.nullable().default(null),
    /** Set: find the SLO capacity (needs `slo`); optional, not defaulted, so other scenarios keep their hash. */
    capacity: CapacitySchema.optional(),
    /**
     * Behind a Kubernetes Service, kube-proxy picks a pod per connection. keep-alive (the default when absent): the
     * load reuses idle connections, so each pod's share follows where the pooled connections landed; per-request:
     * every request of the open loop opens its own connection and sends `Connection: close`, so the Service balances
     * each request on its own (random per request), the balancing `campaign plan-replicas` calls per-request; each
     * request's TTFT then includes a TCP connect. Closed loops keep their connections whatever this says. Optional,
     * not defaulted, so other scenarios keep their hash.
     */
    connections: z
      .enum(["keep-alive", "per-request"], {
        error: (i) => `${JSON.stringify(i.input)} is not allowed; allowed: "keep-alive" (the default), "per-request"`,
      })
      .optional(),
  })
  .strict();
export type OpenLoop = z.infer<typeof OpenLoopSchema>;
export type OpenLoopConnections = NonNullable<OpenLoop["connections"]>;

/** The open loop's effective `connections`: keep-alive where the key is absent. */
export function openLoopConnections(openLoop: Pick<OpenLoop, "connections">): OpenLoopConnections {
  return openLoop.connections ?? "keep-alive";
}

const OPEN_LOOP_DEFAULTS = {
  ratesPerSecond: [1, 2, 4],
  arrival: "poisson",
  seed: 0,
  maxInFlight: 256,
  sweep: null,
} as const satisfies z.input<typeof OpenLoopSchema>;

/** Every knob of a benchmark run. Defaults reproduce the seed's procedure. */
export const ScenarioSchema = z
  .object({
    /** Phases to run, in this fixed order whatever the order given. */
    phases: z
      .array(z.enum(PHASES))
      .nonempty()
      .default([...PHASES]),
    /**
     * The SLO's bounds: in a file `--slo`'s form (e.g. `ttft:p99:800,tpot:p99:40`), parsed here once; from the
     * flags, and in a result, typed. Each load level then records its judgement (`inputs/slo-judge.ts`).
     * Optional, not defaulted, so scenarios without it keep their hash.
     */
    slo: SloBoundsSchema.optional(),
    /** Fraction of completed requests that must meet every bound (`--slo-attainment`); default 0.99. */
    sloAttainment: SloAttainmentSchema.optional(),
    /** Per-request timeout for non-load requests, milliseconds. */
    requestTimeoutMs: positiveInt.default(120_000),
    /** Sent as `ignore_eos` so every request generates exactly max_tokens (vLLM and the simulator accept it). */
    ignoreEos: z.boolean().default(false),
    prompts: z
      .object({
        /**
         * Starts every prompt of `load` and `inputLength` with a tag no other request shares, so vLLM's prefix
         * cache (on by default) cannot serve it: the figures then cost what a user's distinct prompts cost.
         * `false` resends the seed's identical prompt, which measures cached prefill.
         */
        uniquePrefix: z.boolean().default(true),
      })
      .strict()
      .default({ uniquePrefix: true }),
    sequential: z
      .object({
        runs: positiveInt.max(1000).default(5),
        prompt: z.string().min(1).default(SEED_SHORT_PROMPT),
        maxTokens: positiveInt.default(128),
      })
      .strict()
      .default({ runs: 5, prompt: SEED_SHORT_PROMPT, maxTokens: 128 }),
    context: z
      .object({
        sentence: z.string().min(1).default(SEED_SENTENCE),
        /** The seed's payload sizes, in sentence repeats. */
        repeats: z.array(positiveInt).default([64, 256, 512, 768, 1024]),
        maxTokens: positiveInt.default(128),
        /** Upper bound on requests spent on the bisection. */
        maxBisectionRequests: positiveInt.max(200).default(60),
      })
      .strict()
      .default({
        sentence: SEED_SENTENCE,
        repeats: [64, 256, 512, 768, 1024],
        maxTokens: 128,
        maxBisectionRequests: 60,
      }),
    load: z
      .object({
        /** concurrency: closed loop, one level per `concurrency`; rate: open loop, one level per rate (`openLoop`). */
        mode: z.enum(["concurrency", "rate"]).default("concurrency"),
        openLoop: OpenLoopSchema.default({ ...OPEN_LOOP_DEFAULTS, ratesPerSecond: [1, 2, 4] }),
        concurrency: z.array(positiveInt.max(1024)).nonempty().default([1, 2, 4, 8]),
        durationSeconds: z.number().positive().max(3600).default(90),
        warmupSeconds: z.number().nonnegative().max(600).default(10),
        /** Hard cap on requests per level, so the loop is bounded in count as well as time. */
        maxRequestsPerLevel: positiveInt.default(100_000),
        /** Prompt of the load: the seed's sentence repeated this many times (256 ≈ 1550 tokens). */
        promptRepeats: positiveInt.default(256),
        maxTokens: positiveInt.default(128),
        /** Scrape interval of `/metrics` during each window; the issue requires <= 1 s. */
        metricsIntervalMs: positiveInt.max(1000).default(1000),
        /** Per-request timeout inside the load, milliseconds. */
        requestTimeoutMs: positiveInt.default(300_000),
        /**
         * Longest silence, seconds, with requests in flight and no byte on any of them, before the level is
         * invalid: a stopped server keeps connections open, so nothing fails and only the silence shows.
         */
        stallSeconds: z.number().positive().max(3600).default(5),
        /**
         * Ends a closed-loop level's window early once its throughput estimate's relative standard error is at or
         * below this fraction (`phases/early-stop.ts`). Absent: every level runs its whole window. Optional, not
         * defaulted, so scenarios without it keep their hash.
         */
        targetRelativeError: TargetRelativeErrorSchema.optional(),
      })
      .strict()
      .default({
        mode: "concurrency",
        openLoop: { ...OPEN_LOOP_DEFAULTS, ratesPerSecond: [1, 2, 4] },
        concurrency: [1, 2, 4, 8],
        durationSeconds: 90,
        warmupSeconds: 10,
        maxRequestsPerLevel: 100_000,
        promptRepeats: 256,
        maxTokens: 128,
        metricsIntervalMs: 1000,
        requestTimeoutMs: 300_000,
        stallSeconds: 5,
      }),
    inputLength: z
      .object({
        /** Sentence repeats; 64/256/512 give the seed's ~400/1550/3100 tokens. */
        repeats: z.array(positiveInt).nonempty().default([64, 256, 512]),
        runs: positiveInt.max(1000).default(5),
        maxTokens: positiveInt.default(128),
      })
      .strict()
      .default({ repeats: [64, 256, 512], runs: 5, maxTokens: 128 }),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.load.openLoop.capacity !== undefined && s.slo === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["load", "openLoop", "capacity"],
        message: "a capacity search without slo is not allowed; allowed: with slo (e.g. --slo ttft:p99:800)",
      });
    const slo = scenarioSlo(s);
    const c = s.load.openLoop.capacity;
    if (c !== undefined && slo !== null)
      for (const r of capacityRefusals(c, slo, s.load.warmupSeconds, s.load.maxTokens))
        ctx.addIssue({ code: "custom", path: r.path.split("."), message: r.message });
    if (s.sloAttainment !== undefined && s.slo === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["sloAttainment"],
        message: `${s.sloAttainment} without slo is not allowed; allowed: with slo only`,
      });
  });

export type Scenario = z.infer<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;

/** Overrides that make a whole run finish well under a minute (the demo). */
export const SHORT_PRESET: ScenarioInput = {
  sequential: { runs: 3 },
  context: { repeats: [64, 256], maxBisectionRequests: 40 },
  load: { concurrency: [1, 2, 4], durationSeconds: 5, warmupSeconds: 1 },
  inputLength: { runs: 2 },
};

/** Open loop: the highest request rate meeting the SLOs, found as GuideLLM's sweep does. */
const SWEEP_PRESET: ScenarioInput = {
  load: { mode: "rate", openLoop: { sweep: { steps: 6, throughputConcurrency: 8, slo: {} } } },
};

/** The closed-loop level every twin fit in docs/slo.md was taken from. */
const GOODPUT_FIT_CONCURRENCY = 8;

/**
 * The goodput objective's procedure, the layer under the preset and the scenario file (either overrides it): it ranks by the calibrated twin's
 * capacity, which is fitted to the closed loop, so the closed loop is the level at the target (where `propose`
 * reads its evidence) and c=8 (at least: where every fit in docs/slo.md was taken), 30 s each; the sequential,
 * context and input-length phases and the other levels inform no figure it ranks by.
 */
export function goodputProcedure(targetConcurrency: number): ScenarioInput {
  const levels = [...new Set([targetConcurrency, Math.max(GOODPUT_FIT_CONCURRENCY, targetConcurrency)])];
  return { phases: ["readiness", "identity", "load"], load: { concurrency: levels, durationSeconds: 30 } };
}

export const PRESETS = { default: {}, short: SHORT_PRESET, sweep: SWEEP_PRESET } as const satisfies Record<
  string,
  ScenarioInput
>;
export type PresetName = keyof typeof PRESETS;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Deep merge where arrays and scalars of `over` replace those of `base`. */
function mergeDeep(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = mergeDeep(base[k], v);
  return out;
}

/** Lists every zod issue as `path: message`, one a line. */
export function formatIssues(error: z.ZodError): string {
  return error.issues.map((i) => `  - ${i.path.join(".") || "(root)"}: ${i.message}`).join("\n");
}

/** Validates a scenario built from a preset plus file contents plus CLI overrides. */
export function buildScenario(layers: readonly unknown[], source = "scenario"): Scenario {
  const merged = layers.reduce<unknown>((acc, layer) => mergeDeep(acc, layer), {});
  const parsed = ScenarioSchema.safeParse(merged);
  if (!parsed.success) throw new Error(`invalid ${source}:\n${formatIssues(parsed.error)}`);
  return parsed.data;
}

/**
 * The SLO a sweep's rates are judged under: the scenario's, else the sweep's deprecated `slo` keys
 * (`ttftP95Ms`, `e2eP95Ms`) as p95 bounds of the one SLO, with the default attainment; null: neither.
 */
export function sweepSlo(scenario: Pick<Scenario, "slo" | "sloAttainment" | "load">): Slo | null {
  const own = scenarioSlo(scenario);
  const legacy = scenario.load.openLoop.sweep?.slo;
  if (own !== null || legacy === undefined) return own;
  const bounds = [
    ...(legacy.ttftP95Ms === undefined
      ? []
      : [{ metric: "ttft" as const, percentile: "p95" as const, ms: legacy.ttftP95Ms }]),
    ...(legacy.e2eP95Ms === undefined
      ? []
      : [{ metric: "e2e" as const, percentile: "p95" as const, ms: legacy.e2eP95Ms }]),
  ];
  return bounds.length === 0 ? null : { bounds, attainment: DEFAULT_SLO_ATTAINMENT };
}

/** Reads a YAML or JSON scenario file (YAML is a superset of JSON). */
export function readScenarioFile(path: string): unknown {
  const text = readFileSync(path, "utf8");
  return parseYaml(text) ?? {};
}

/** Builds the prompt of `repeats` copies of the sentence, as the seed's shell loop did. */
export function repeatSentence(sentence: string, repeats: number): string {
  return sentence.repeat(repeats);
}
