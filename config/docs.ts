import { markdownTableLines } from "../common/markdown-table";
import { KNOB_GROUPS } from "./one-knob";
import { FIELD_NAMES, FIELDS, type FieldName, SECRET_DESCRIPTIONS, SECRET_KEYS } from "./schema";
import { knobYamlType, VLLM_KNOBS } from "./vllm-knobs";

/**
 * Each config key is described once, in the schema (`FIELDS[key].description`). From it come the
 * README's key table (rendered here) and the `description`s Pulumi.yaml must carry (checked here);
 * `npm run docs:config` rewrites the README table, a unit test fails when either drifts. Pure.
 */

/** Pulumi.yaml's `config:` block as parsed YAML. */
export type ProjectConfig = Readonly<
  Record<string, { readonly default?: unknown; readonly description?: unknown; readonly type?: unknown }>
>;

/** How a default reads in the table: strings that look like numbers keep their quotes. */
function shownDefault(value: unknown): string {
  if (value === undefined) return "—";
  if (typeof value === "string")
    return value === "" || /^[0-9.]+$/.test(value) ? `\`${JSON.stringify(value)}\`` : `\`${value}\``;
  return `\`${typeof value === "object" ? JSON.stringify(value) : String(value)}\``;
}

function knobNote(key: FieldName): string {
  const group = Object.values(KNOB_GROUPS).find((members) => members.includes(key));
  if (group === undefined) return "";
  const others = group.filter((k) => k !== key);
  return others.length === 0 ? " Knob." : ` Knob (with ${others.join(", ")}).`;
}

/** `<nodePort>` would read as an HTML tag in Markdown. */
const prose = (text: string) => text.replace(/</g, "\\<");

/** The README's table of keys: key, Pulumi.yaml's default, the schema's description. */
export function configTableLines(project: ProjectConfig): string[] {
  return markdownTableLines(
    ["key", "default", "meaning"],
    [
      ...FIELD_NAMES.map((k) => [
        `\`${k}\``,
        shownDefault(project[k]?.default),
        prose(FIELDS[k].description) + knobNote(k),
      ]),
      ...SECRET_KEYS.map((k) => [`\`${k}\` (secret)`, "—", prose(SECRET_DESCRIPTIONS[k])]),
    ],
  );
}

/** Where Pulumi.yaml's keys and descriptions differ from the schema; empty when they agree. */
export function projectFileProblems(project: ProjectConfig): string[] {
  const problems: string[] = [];
  for (const k of FIELD_NAMES) {
    const declared = project[k];
    if (declared === undefined) problems.push(`Pulumi.yaml does not declare ${k} (the schema has it)`);
    else if (declared.description !== FIELDS[k].description)
      problems.push(
        `Pulumi.yaml's description of ${k} is ${JSON.stringify(declared.description)}; the schema (config/schema.ts) says ${JSON.stringify(FIELDS[k].description)}`,
      );
  }
  for (const { key } of VLLM_KNOBS) {
    const declared = project[key];
    if (declared !== undefined && declared.type !== knobYamlType(key))
      problems.push(
        `Pulumi.yaml types ${key} as ${JSON.stringify(declared.type ?? null)}; its knob row (config/vllm-knobs.ts) is written as ${knobYamlType(key)}`,
      );
  }
  for (const k of Object.keys(project)) {
    if (!(FIELD_NAMES as string[]).includes(k))
      problems.push(`Pulumi.yaml declares ${k}, which the schema does not know`);
  }
  return problems;
}

/** Replaces the table that starts with `| key | default | meaning |` in `readme`; throws when there is none. */
export function withConfigTable(readme: string, table: readonly string[]): string {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => l.startsWith("| key | default | meaning |"));
  if (start < 0) throw new Error("README.md has no config key table (| key | default | meaning |)");
  let end = start;
  while (end < lines.length && lines[end]!.startsWith("|")) end++;
  return [...lines.slice(0, start), ...table, ...lines.slice(end)].join("\n");
}
