import type { ChatRequest } from "../../measure/http/chat";
import { streamChat } from "../../measure/http/stream";
import {
  type CapacitySettings,
  type OpenLoop,
  type OpenLoopConnections,
  openLoopConnections,
  repeatSentence,
  sweepSlo,
} from "../../measure/inputs/scenario";
import { type Slo, scenarioSlo } from "../../measure/inputs/slo";
import { levelJudgement } from "../../measure/inputs/slo-judge";
import { probeSeed } from "../../measure/load/arrivals";
import { runClosedLoop } from "../../measure/load/closed-loop";
import { runOpenLoop } from "../../measure/load/open-loop";
import { measureCeiling, predictCeiling } from "../../measure/metrics/capacity";
import type { LoadLevel, LoadPhase, RateLevel, SloCapacity, SweepResult } from "../../result";
import { levelThroughput, probeRate, sweepRates, sweepResult } from "../../verdict";
import { capacitySearchRun, type ProbeLevel } from "./capacity-run";
import { twinCapacityRun } from "./capacity-twin";
import { twinCapacityRecord } from "./capacity-twin-record";
import { earlyEndChecks, earlyStopRecord } from "./early-stop";
import { levelLine } from "./level-line";
import { hopeless, type LoadInputs, measureLevel } from "./load-level";
import { PromptSource, usageRange } from "./prompts";
import { nowIso, type PhaseContext, Tokenizer } from "./shared";
import { closedLoopThroughput } from "./throughput-estimate";

export type { LoadInputs } from "./load-level";

type Sweep = NonNullable<OpenLoop["sweep"]>;

/** The load's plan and what it measured so far (a partial result keeps what ran). */
class LoadRun {
  readonly levels: LoadLevel[] = [];
  readonly rateLevels: RateLevel[] = [];
  error: string | null = null;

  constructor(
    private readonly ctx: PhaseContext,
    private readonly inputs: LoadInputs,
    private readonly req: ChatRequest,
    private readonly prompts: PromptSource,
    private readonly onLevel: (() => void) | undefined,
    /** The scenario's SLO, read once: every level records its judgement under it. */
    private readonly slo: Slo | null,
  ) {}

  private get cfg() {
    return this.ctx.scenario.load;
  }

  /** Each request gets the next prompt of the set (its own tag unless `prompts.uniquePrefix` is off). */
  private send = (signal: AbortSignal, onBytes: () => void, connections?: OpenLoopConnections) =>
    streamChat(
      this.ctx.client,
      { ...this.req, prompt: this.prompts.next() },
      this.cfg.requestTimeoutMs,
      signal,
      onBytes,
      connections,
    );

  async closed(concurrency: number): Promise<LoadLevel | null> {
    if (this.ctx.signal.aborted || this.error !== null) return null;
    const cfg = this.cfg;
    this.ctx.progress.log(
      `load: concurrency ${concurrency}, warm-up ${cfg.warmupSeconds} s, window ${cfg.durationSeconds} s`,
    );
    const planned = cfg.warmupSeconds + cfg.durationSeconds;
    this.ctx.progress.stage({ kind: "level", label: `closed loop c=${concurrency}`, plannedSeconds: planned });
    const early =
      cfg.targetRelativeError === undefined
        ? null
        : earlyEndChecks(cfg.targetRelativeError, concurrency, cfg.durationSeconds * 1000);
    const { level: base, loop } = await measureLevel(
      this.ctx,
      this.inputs,
      `load c=${concurrency}`,
      this.send,
      (hooks) =>
        runClosedLoop({
          concurrency,
          warmupMs: cfg.warmupSeconds * 1000,
          durationMs: cfg.durationSeconds * 1000,
          maxRequests: cfg.maxRequestsPerLevel,
          signal: this.ctx.signal,
          fatal: hopeless(concurrency),
          ...(early ? { earlyEnd: early.options } : {}),
          ...hooks,
        }),
    );
    const level: LoadLevel = {
      concurrency,
      ...base,
      slo: levelJudgement(base, this.slo),
      throughputEstimate: closedLoopThroughput(base.samples, base.windowStartEpochMs, base.windowEndEpochMs),
      earlyStop: earlyStopRecord(
        cfg.targetRelativeError,
        early?.last() ?? null,
        early?.checks() ?? 0,
        loop.endedEarlyAtEpochMs,
        cfg.durationSeconds,
      ),
    };
    this.levels.push(level);
    this.onLevel?.();
    this.ctx.progress.log(levelLine(`c=${concurrency}`, level));
    if (level.status === "failed") this.error = `concurrency ${concurrency}: ${level.error}`;
    return level;
  }

  /**
   * An open-loop level; a capacity `probe` brings its own window, arrivals, seed and early end. A plain
   * level draws its schedule as a probe does: its own seed (the scenario's seed and the level's index) and
   * exactly round(rate × window) arrivals in the window, so it offers its target (to the rounding), not the
   * target times one draw's Poisson error; what it offered is recorded beside the target.
   */
  async open(ratePerSecond: number, probe?: ProbeLevel, kind = "open loop"): Promise<RateLevel | null> {
    if (this.ctx.signal.aborted || this.error !== null) return null;
    const cfg = { ...this.cfg, durationSeconds: probe?.windowSeconds ?? this.cfg.durationSeconds };
    const seed = probe?.seed ?? probeSeed(cfg.openLoop.seed, this.rateLevels.length);
    const windowArrivals = probe?.arrivals ?? Math.round(ratePerSecond * cfg.durationSeconds);
    const ctx = { ...this.ctx, scenario: { ...this.ctx.scenario, load: cfg } };
    const o = cfg.openLoop;
    const name = `rate ${ratePerSecond.toFixed(3)}/s`;
    this.ctx.progress.log(
      `load: ${name} (${o.arrival}, seed ${seed}), warm-up ${cfg.warmupSeconds} s, window ${+cfg.durationSeconds.toFixed(3)} s`,
    );
    const planned = cfg.warmupSeconds + cfg.durationSeconds;
    this.ctx.progress.stage({
      kind: "level",
      label: `${kind} ${+ratePerSecond.toFixed(3)}/s`,
      plannedSeconds: planned,
    });
    // Only open-loop levels follow `connections`: a closed loop's clients keep theirs.
    const send = (s: AbortSignal, b: () => void) => this.send(s, b, openLoopConnections(o));
    const { level: base, loop } = await measureLevel(ctx, this.inputs, `load ${name}`, send, (hooks) =>
      runOpenLoop({
        ratePerSecond,
        arrival: o.arrival,
        seed,
        maxInFlight: o.maxInFlight,
        windowArrivals,
        ...(probe?.earlyEnd ? { earlyEnd: probe.earlyEnd } : {}),
        warmupMs: cfg.warmupSeconds * 1000,
        durationMs: cfg.durationSeconds * 1000,
        maxRequests: cfg.maxRequestsPerLevel,
        signal: this.ctx.signal,
        // About two seconds of arrivals all failing: the endpoint is gone.
        fatal: hopeless(Math.ceil(ratePerSecond)),
        ...hooks,
      }),
    );
    const perSecond = (n: number) => (base.windowSeconds > 0 ? n / base.windowSeconds : 0);
    const open: RateLevel = {
      openLoop: {
        targetRatePerSecond: ratePerSecond,
        arrival: o.arrival,
        seed,
        maxInFlight: o.maxInFlight,
        scheduledInWindow: loop.scheduledInWindow,
        scheduledRatePerSecond: perSecond(loop.scheduledInWindow),
        sentInWindow: loop.sentInWindow,
        sentRatePerSecond: perSecond(loop.sentInWindow),
        droppedInWindow: loop.droppedInWindow,
        droppedInWarmup: loop.droppedInWarmup,
        peakInFlight: loop.peakInFlight,
        ...(probe ? { endedEarly: loop.endedEarlyBecause } : {}),
      },
      ...base,
    };
    const level: RateLevel = { ...open, slo: levelJudgement(open, this.slo) };
    this.rateLevels.push(level);
    this.onLevel?.();
    this.ctx.progress.log(
      `${levelLine(name, level)}; offered ${level.openLoop.sentRatePerSecond.toFixed(3)}/s (target ${ratePerSecond.toFixed(3)}/s), dropped ${loop.droppedInWindow}`,
    );
    if (level.status === "failed") this.error = `${name}: ${level.error}`;
    return level;
  }

  /**
   * The SLO capacity: the calibrated twin's (`capacity-twin.ts`) where it stands, else the measured search
   * (`capacity-run.ts`) with the twin's record and why it did not; each window or probe an open-loop level.
   */
  async capacity(settings: CapacitySettings, slo: Slo): Promise<SloCapacity> {
    const started = Date.now();
    const common = {
      seed: this.cfg.openLoop.seed,
      warmupSeconds: this.cfg.warmupSeconds,
      maxTokens: this.cfg.maxTokens,
      closedLevels: this.levels,
      log: (line: string) => this.ctx.progress.log(line),
    };
    const window = (r: number, p: ProbeLevel) => this.open(r, p, "capacity window");
    const windows = { ...common, knobs: this.inputs, open: window };
    const twin = settings.method === "twin" ? await twinCapacityRun(settings, slo, windows) : null;
    const elapsed = () => (Date.now() - started) / 1000;
    if (twin?.record.basis === "twin") return twinCapacityRecord(slo, settings, twin, elapsed());
    if (twin) this.ctx.progress.log(`capacity: the measured search, since ${twin.record.why}`);
    // Only the search is held to `maxMinutes`, counted from its own start: the status shows what is left of it.
    this.ctx.progress.stage({ kind: "budget", label: "capacity", seconds: settings.maxMinutes * 60 });
    const probes = (r: number, p: ProbeLevel) => this.open(r, p, "capacity probe");
    const search = await capacitySearchRun(settings, slo, { ...common, open: probes, error: () => this.error });
    return twin ? { ...search, elapsedSeconds: elapsed(), twin: twin.record } : search;
  }

  /** GuideLLM's sweep: synchronous and throughput probes (closed loop), then rates between them. */
  async sweep(sweep: Sweep): Promise<SweepResult> {
    const synchronous = probeRate((await this.closed(1)) ?? undefined, "synchronous (concurrency 1)");
    const throughput = probeRate(
      (await this.closed(sweep.throughputConcurrency)) ?? undefined,
      `throughput (concurrency ${sweep.throughputConcurrency})`,
    );
    const rates =
      synchronous.value === null
        ? []
        : sweepRates(synchronous.value, throughput.value ?? synchronous.value, sweep.steps);
    const before = this.rateLevels.length;
    for (const r of rates) await this.open(r);
    const slo = sweepSlo(this.ctx.scenario);
    return sweepResult(sweep, slo, synchronous, throughput, rates, this.rateLevels.slice(before));
  }
}

/** The seed's step 5, done right: per-level windows with pod-scoped metrics of exactly that window. */
export async function loadPhase(
  ctx: PhaseContext,
  inputs: LoadInputs,
  onLevel?: (levels: LoadLevel[]) => void,
): Promise<LoadPhase> {
  const startedAt = nowIso();
  const cfg = ctx.scenario.load;
  const body = repeatSentence(ctx.scenario.context.sentence, cfg.promptRepeats);
  // A failing /tokenize leaves promptTokens null: the load does not depend on it, the usage counts show it.
  const prompts = await PromptSource.create(new Tokenizer(ctx), body, ctx.scenario.prompts.uniquePrefix);
  const promptTokens = prompts.info.promptTokens;
  const req: ChatRequest = {
    model: ctx.model,
    prompt: body,
    maxTokens: cfg.maxTokens,
    ignoreEos: ctx.scenario.ignoreEos,
  };
  const slo = scenarioSlo(ctx.scenario);
  const run: LoadRun = new LoadRun(ctx, inputs, req, prompts, () => onLevel?.(run.levels), slo);
  let sweep: SweepResult | null = null;
  let capacity: SloCapacity | null = null;
  switch (cfg.mode) {
    case "concurrency":
      for (const c of cfg.concurrency) await run.closed(c);
      // The closed loop's levels are the evidence `propose` reads; the capacity is the goodput objective's figure.
      if (cfg.openLoop.capacity !== undefined && slo !== null)
        capacity = await run.capacity(cfg.openLoop.capacity, slo);
      break;
    case "rate":
      if (cfg.openLoop.capacity !== undefined && slo !== null)
        capacity = await run.capacity(cfg.openLoop.capacity, slo);
      else if (cfg.openLoop.sweep !== null) sweep = await run.sweep(cfg.openLoop.sweep);
      else for (const r of cfg.openLoop.ratesPerSecond) await run.open(r);
      break;
    default: {
      const never: never = cfg.mode;
      throw new Error(`unknown load mode ${String(never)}`);
    }
  }
  const interrupted = ctx.signal.aborted;
  return {
    status: interrupted ? "incomplete" : run.error !== null ? "failed" : "ok",
    error: interrupted ? "interrupted" : run.error,
    startedAt,
    finishedAt: nowIso(),
    promptTokens,
    maxTokens: cfg.maxTokens,
    prompts: {
      uniquePrefix: prompts.info.uniquePrefix,
      note: prompts.info.note,
      usagePromptTokens: usageRange(
        [...run.levels, ...run.rateLevels].flatMap((l) => l.samples.filter((s) => s.window).map((s) => s.promptTokens)),
      ),
    },
    levels: run.levels,
    rateLevels: run.rateLevels,
    sweep,
    ...(cfg.openLoop.capacity !== undefined ? { capacity } : {}),
    concurrencyCeiling: {
      predicted: predictCeiling(inputs.kvCapacity, promptTokens, cfg.maxTokens, inputs.maxNumSeqs),
      measured: measureCeiling(
        run.levels.map((l) => ({
          concurrency: l.concurrency,
          valid: l.valid,
          // Whether throughput still scales is read as the verdict reads it: steps of one request would fake a flat.
          requestsPerSecond: levelThroughput(l).requestsPerSecond,
          peakWaiting: l.server.peakWaiting,
        })),
      ),
    },
  };
}
