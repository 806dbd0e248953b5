import * as fs from "node:fs";
import * as path from "node:path";
import { isScalar, parseDocument } from "yaml";
import { writeFileAtomic } from "../../common/atomic-write";
import { knobRow, knobText } from "../../config";

/**
 * A promotion moves baseline: the knob's value becomes the project's default in `Pulumi.yaml`
 * (`config.<key>.default`), so every candidate stays one knob from the new baseline. The file is
 * edited through the `yaml` Document API so its comments and layout survive, and only the
 * default's scalar changes: the diff of a promotion is one line.
 */

/** The default as Pulumi.yaml spells it: a decimal knob as a string with its places (`"0.85"`), an integer bare. Pure. */
function defaultValue(key: string, value: number): string | number {
  return knobRow(key).value.kind === "decimal" ? knobText(key, value) : value;
}

/** Pure: `text` with `config.<key>.default` set to `value`; throws naming the key when it has no default. */
export function setConfigDefault(text: string, key: string, value: number): string {
  const doc = parseDocument(text);
  const node = doc.getIn(["config", key, "default"], true);
  if (!isScalar(node))
    throw new Error(`Pulumi.yaml has no config.${key}.default to promote into (keys with a default can be tuned)`);
  node.value = defaultValue(key, value);
  return doc.toString({ lineWidth: 0 });
}

/** Reads the default back, for the state file and the report. Pure. */
export function configDefault(text: string, key: string): unknown {
  const node = parseDocument(text).getIn(["config", key, "default"], true);
  return isScalar(node) ? node.value : undefined;
}

/** Edits `<dir>/Pulumi.yaml` in place, atomically (a kill leaves the old file or the new one). */
export function promoteDefault(dir: string, key: string, value: number): void {
  const file = path.join(dir, "Pulumi.yaml");
  writeFileAtomic(file, setConfigDefault(fs.readFileSync(file, "utf8"), key, value));
}
