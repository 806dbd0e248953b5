import * as fs from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { writeFileAtomic } from "../../common/atomic-write";
import { EXIT } from "../../common/exit-codes";
import { UsageError } from "../../common/usage-error";
import { llmdReportFile, readResult } from "../../result";
import { llmdReports } from "./llm-d-report";

/** What `bench export --format` accepts. */
export const EXPORT_FORMATS = ["llm-d-report"] as const;

/** Where exports go unless `--out` says otherwise, relative to the working directory. */
export const EXPORT_DIR = "results/export";

/**
 * `bench export --format llm-d-report RESULT.json... [--out DIR]`: each load level of each result as an
 * llm-d-benchmark Benchmark Report (v0.2 line, revision 0.2.1; YAML, as their harness writes them). Prints the files written.
 */
export function exportCommand(argv: string[], cwd: string, print: (line: string) => void): number {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { format: { type: "string" }, out: { type: "string", default: EXPORT_DIR } },
    strict: true,
    allowPositionals: true,
  });
  const allowed = `allowed: ${EXPORT_FORMATS.join(", ")}`;
  if (values.format === undefined) throw new UsageError(`export needs --format (${allowed})`);
  if (!(EXPORT_FORMATS as readonly string[]).includes(values.format))
    throw new UsageError(`--format ${JSON.stringify(values.format)} is not a format export writes (${allowed})`);
  if (positionals.length === 0) throw new UsageError("export needs result files, e.g. results/baseline/*.json");
  for (const f of positionals)
    if (!fs.existsSync(resolve(cwd, f))) throw new UsageError(`result file ${JSON.stringify(f)} does not exist`);
  // Read, validate and map every file before writing any, so a bad one leaves nothing half exported.
  const exports = positionals.map((file) => {
    const result = readResult(resolve(cwd, file));
    const reports = llmdReports(result);
    if (reports.length === 0)
      throw new Error(`${file}: nothing to export: the run has no load level (phases.load absent or empty)`);
    return { result, reports };
  });
  const out = resolve(cwd, values.out);
  for (const { result, reports } of exports)
    for (const { key, report } of reports) {
      const target = llmdReportFile(out, result.stack, result.startedAt, key);
      writeFileAtomic(target, stringify(report, { aliasDuplicateObjects: false }));
      print(target);
    }
  return EXIT.ok;
}
