/**
 * `npm run docs:config`: rewrites the README's config key table from the schema (config/docs.ts)
 * and lists what Pulumi.yaml must change to match it. `--check`: only report; exit 1 on drift.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { configTableLines, type ProjectConfig, projectFileProblems, withConfigTable } from "../config/docs";

const root = path.resolve(__dirname, "..");
const readmeFile = path.join(root, "README.md");
const project = (parse(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8")) as { config: ProjectConfig }).config;
const readme = fs.readFileSync(readmeFile, "utf8");
const wanted = withConfigTable(readme, configTableLines(project));
const problems = projectFileProblems(project);
if (wanted !== readme) {
  if (process.argv.includes("--check")) problems.push("README.md's config table is out of date: npm run docs:config");
  else fs.writeFileSync(readmeFile, wanted);
}
for (const p of problems) process.stderr.write(`${p}\n`);
process.exitCode = problems.length === 0 ? 0 : 1;
