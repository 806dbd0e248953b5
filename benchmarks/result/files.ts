import { readFileSync } from "node:fs";
import { formatIssues } from "../inputs/scenario";
import { type BenchmarkResult, ResultFileSchema } from "./types";

/** `2025-06-01T12:34:56.789Z` -> `2025-06-01T12-34-56Z`: sortable and safe in any file system. */
export function fileStamp(iso: string): string {
  return iso.replace(/\.\d+Z$/, "Z").replace(/:/g, "-");
}

/** Stack names become directory names: keep them to a safe alphabet. */
export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_") || "unnamed";
}

/** Reads result files for `compare`, rejecting other schema versions with the file named. */
export function readResult(path: string): BenchmarkResult {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`${path}: not a readable JSON file (${(err as Error).message})`);
  }
  const parsed = ResultFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(`${path} is not a benchmark result of this schema version:\n${formatIssues(parsed.error)}`);
  return raw as BenchmarkResult;
}
