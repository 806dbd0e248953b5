import { readFileSync } from "node:fs";
import { formatIssues } from "../inputs/scenario";
import { BenchmarkResultSchema, SCHEMA_VERSION } from "./schema";
import type { BenchmarkResult } from "./types";

/** `2025-06-01T12:34:56.789Z` -> `2025-06-01T12-34-56Z`: sortable and safe in any file system. */
export function fileStamp(iso: string): string {
  return iso.replace(/\.\d+Z$/, "Z").replace(/:/g, "-");
}

/** Stack names become directory names: keep them to a safe alphabet. */
export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_") || "unnamed";
}

/** Reads a result file for `compare`, validated against the schema; every problem listed with the file named. */
export function readResult(path: string): BenchmarkResult {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`${path}: not a readable JSON file (${(err as Error).message})`);
  }
  const version = (raw as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== SCHEMA_VERSION)
    throw new Error(
      `${path}: schemaVersion ${JSON.stringify(version)}, this tool reads ${SCHEMA_VERSION} (re-run the benchmark, or compare with the tool version that wrote it)`,
    );
  const parsed = BenchmarkResultSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`${path} is not a valid benchmark result:\n${formatIssues(parsed.error)}`);
  return parsed.data;
}
