import * as fs from "node:fs";
import * as path from "node:path";
import type { z } from "zod";
import { writeFileAtomic } from "../common/atomic-write";
import { formatIssues } from "../measure/inputs/scenario";
import { BenchmarkResultSchema, SCHEMA_VERSION } from "./schema";
import type { BenchmarkResult } from "./types";

/**
 * The results store: the one module that knows the on-disk layout and reads or writes it.
 *
 *   results/<stack>/<stamp>.json, .md       one benchmark run and its report (ignored by git)
 *   results/campaign-<id>.json, .md, .log   a campaign's record, report and Pulumi log
 *   results/comparison-<stamp>.svg          `bench compare`'s chart
 *   results/export/benchmark_report_v0.2,_<stack>_<stamp>_<level>.yaml   `bench export`'s llm-d-benchmark reports
 *   summaries/<stack>.json                  a candidate summary, small enough to commit
 *
 * Documents are given and returned as data: what they mean (and their Markdown) is the caller's;
 * a reader passes the schema the document must satisfy, so nothing read here is cast.
 */

/** The default results directory, relative to the working directory. */
export const RESULTS_DIR = "results";
/** Committed summaries live here, relative to the repository (not under `results/`, which is ignored and keyed by stack). */
export const SUMMARY_DIR = "summaries";

/** `2025-06-01T12:34:56.789Z` -> `2025-06-01T12-34-56Z`: sortable and safe in any file system. */
export function fileStamp(iso: string): string {
  return iso.replace(/\.\d+Z$/, "Z").replace(/:/g, "-");
}

/** Stack names become directory names: keep them to a safe alphabet. */
export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_") || "unnamed";
}

const jsonText = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`${file}: not a readable JSON file (${(err as Error).message})`);
  }
}

/** Reads a result file, validated against the schema; every problem listed with the file named. */
export function readResult(file: string): BenchmarkResult {
  const raw = readJson(file);
  const version = (raw as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== SCHEMA_VERSION)
    throw new Error(
      `${file}: schemaVersion ${JSON.stringify(version)}, this tool reads ${SCHEMA_VERSION} (re-run the benchmark, or compare with the tool version that wrote it)`,
    );
  const parsed = BenchmarkResultSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`${file} is not a valid benchmark result:\n${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** Writes `<resultsDir>/<stack>/<stamp>.json` and its Markdown report `.md`, atomically; returns both paths. */
export function writeResultFiles(
  resultsDir: string,
  result: BenchmarkResult,
  markdown: string,
): { json: string; markdown: string } {
  const base = path.join(resultsDir, safeName(result.stack), fileStamp(result.startedAt));
  writeFileAtomic(`${base}.json`, jsonText(result));
  writeFileAtomic(`${base}.md`, markdown);
  return { json: `${base}.json`, markdown: `${base}.md` };
}

/** A result read back from the store, with the file it came from. */
export interface StoredResult {
  readonly file: string;
  readonly result: BenchmarkResult;
}

/** Earlier results of a stack (`<resultsDir>/<stack>/*.json`), oldest name first; unreadable files are reported, not fatal. */
export function storedResults(
  resultsDir: string,
  stack: string,
  warn: (message: string) => void = () => {},
): StoredResult[] {
  const dir = path.join(resultsDir, safeName(stack));
  if (!fs.existsSync(dir)) return [];
  const out: StoredResult[] = [];
  for (const f of fs
    .readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort()) {
    const file = path.join(dir, f);
    try {
      out.push({ file, result: readResult(file) });
    } catch (err) {
      warn(`ignoring ${file} for resume: ${(err as Error).message.split("\n")[0]}`);
    }
  }
  return out;
}

/** The newest complete result of a stack (by its start time), or undefined. */
export function newestCompleteResult(
  resultsDir: string,
  stack: string,
  warn: (message: string) => void = () => {},
): StoredResult | undefined {
  return completeResultsNewestFirst(resultsDir, stack, warn)[0];
}

/** A stack's complete results, newest start first. */
export function completeResultsNewestFirst(
  resultsDir: string,
  stack: string,
  warn: (message: string) => void = () => {},
): StoredResult[] {
  return storedResults(resultsDir, stack, warn)
    .filter((s) => s.result.complete)
    .sort((a, b) => Date.parse(b.result.startedAt) - Date.parse(a.result.startedAt));
}

/** The stack directories the results directory holds (each named by `safeName` of its stack). */
export function resultStackDirs(resultsDir: string): string[] {
  if (!fs.existsSync(resultsDir)) return [];
  return fs
    .readdirSync(resultsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
}

/** `<resultsDir>/comparison-<stamp>.svg`: where `bench compare` puts its chart unless told otherwise. */
export const comparisonChartFile = (resultsDir: string, at: Date): string =>
  path.join(resultsDir, `comparison-${fileStamp(at.toISOString())}.svg`);

/** Writes `bench compare`'s chart where the caller says (`comparisonChartFile` by default), creating its folder. */
export function writeChart(file: string, svg: string): void {
  writeFileAtomic(file, svg);
}

/** `<resultsDir>/campaign-<id>`, the stem of a campaign's `.json`, `.md` and `.log`. */
export function campaignBase(resultsDir: string, id: string): string {
  return path.join(resultsDir, `campaign-${id}`);
}

const CAMPAIGN_FILE = /^campaign-.*\.json$/;

/** The campaign records in a results directory, by name (which sorts by start time). */
export function campaignFiles(resultsDir: string): string[] {
  if (!fs.existsSync(resultsDir)) return [];
  return fs
    .readdirSync(resultsDir)
    .filter((f) => CAMPAIGN_FILE.test(f))
    .sort()
    .map((f) => path.join(resultsDir, f));
}

/** `campaign-<id>.json` and `.md`, written atomically (a checkpoint may be interrupted). */
export function writeCampaignFiles(
  resultsDir: string,
  id: string,
  record: unknown,
  markdown: string,
): { json: string; markdown: string } {
  const base = campaignBase(resultsDir, id);
  writeFileAtomic(`${base}.json`, jsonText(record));
  writeFileAtomic(`${base}.md`, markdown);
  return { json: `${base}.json`, markdown: `${base}.md` };
}

/** One campaign record parsed by `schema`; a file that is not one is reported through `warn` and left out. */
export function readCampaignFiles<S extends z.ZodType>(
  resultsDir: string,
  schema: S,
  warn: (message: string) => void,
): Array<{ file: string; record: z.infer<S> }> {
  const out: Array<{ file: string; record: z.infer<S> }> = [];
  for (const file of campaignFiles(resultsDir)) {
    try {
      const parsed = schema.safeParse(readJson(file));
      if (parsed.success) out.push({ file, record: parsed.data });
      else warn(`ignoring ${file}: not a campaign summary`);
    } catch (err) {
      warn(`ignoring ${file}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** `<dir>/<stack>.json`: a candidate summary's file. */
export const summaryFile = (dir: string, stack: string): string => path.join(dir, `${safeName(stack)}.json`);

/** The stacks with a summary in `dir`, by file name. */
export function summaryStacks(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => f.replace(/\.json$/, ""));
}

/**
 * Reads `<dir>/<stack>.json` with `schema`; null when there is none; throws naming the file and
 * every problem when it does not satisfy the schema (`what` says what it should have been).
 */
export function readSummaryFile<S extends z.ZodType>(
  dir: string,
  stack: string,
  schema: S,
  what: string,
): z.infer<S> | null {
  const file = summaryFile(dir, stack);
  if (!fs.existsSync(file)) return null;
  const parsed = schema.safeParse(readJson(file));
  if (!parsed.success)
    throw new Error(
      `${file} is not ${what}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return parsed.data;
}

/** Writes `<dir>/<stack>.json` atomically; returns the file. */
export function writeSummaryFile(dir: string, stack: string, summary: unknown): string {
  const file = summaryFile(dir, stack);
  writeFileAtomic(file, jsonText(summary));
  return file;
}

/** `tune-<branch>.json`: a tune's recorded state beside its campaigns (the branch's slashes as dashes). */
export const tuneStateFile = (resultsDir: string, branch: string): string =>
  path.join(resultsDir, `tune-${safeName(branch.replace(/\//g, "-"))}.json`);

/**
 * `<dir>/benchmark_report_v0.2,_<stack>_<stamp>_<level>.yaml`: one level of a run exported as an llm-d-benchmark
 * report, named as llm-d-benchmark's harness names its own (`benchmark_report_v0.2,_*.yaml`), so their tools find it.
 */
export const llmdReportFile = (dir: string, stack: string, startedAt: string, level: string): string =>
  path.join(dir, `benchmark_report_v0.2,_${safeName(stack)}_${fileStamp(startedAt)}_${safeName(level)}.yaml`);
