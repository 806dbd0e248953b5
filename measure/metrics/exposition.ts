/** One sample of the Prometheus text exposition format. */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

function parseValue(text: string): number {
  switch (text) {
    case "+Inf":
    case "Inf":
      return Infinity;
    case "-Inf":
      return -Infinity;
    case "NaN":
      return NaN;
    default: {
      const v = Number(text);
      if (Number.isNaN(v)) throw new Error(`bad sample value ${JSON.stringify(text)}`);
      return v;
    }
  }
}

/** Parses `{a="x",b="y\"z"}` starting at `i` (the `{`); returns labels and the index after `}`. */
function parseLabels(line: string, i: number): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  i += 1;
  for (;;) {
    while (line[i] === " " || line[i] === ",") i += 1;
    if (line[i] === "}") return [labels, i + 1];
    const eq = line.indexOf("=", i);
    if (eq < 0) throw new Error("label without '='");
    const key = line.slice(i, eq).trim();
    i = eq + 1;
    if (line[i] !== '"') throw new Error(`label ${key} has no quoted value`);
    i += 1;
    let value = "";
    while (i < line.length && line[i] !== '"') {
      if (line[i] === "\\") {
        const next = line[i + 1];
        value += next === "n" ? "\n" : (next ?? "");
        i += 2;
      } else {
        value += line[i];
        i += 1;
      }
    }
    if (i >= line.length) throw new Error("unterminated label value");
    labels[key] = value;
    i += 1;
  }
}

/**
 * Parses the Prometheus text format (what vLLM, DCGM-exporter and the simulator serve).
 * Comment lines are skipped; a malformed line throws with its line number.
 */
export function parseExposition(text: string): MetricSample[] {
  const out: MetricSample[] = [];
  const lines = text.split("\n");
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim();
    if (line === "" || line.startsWith("#")) continue;
    try {
      const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
      if (!m) throw new Error("no metric name");
      const name = m[0];
      let i = name.length;
      let labels: Record<string, string> = {};
      if (line[i] === "{") [labels, i] = parseLabels(line, i);
      const rest = line.slice(i).trim().split(/\s+/);
      if (rest[0] === undefined || rest[0] === "") throw new Error("no value");
      out.push({ name, labels, value: parseValue(rest[0]) });
    } catch (err) {
      throw new Error(`metrics line ${n + 1}: ${(err as Error).message}: ${line.slice(0, 200)}`);
    }
  }
  return out;
}

/** Samples of `name` whose labels include every pair of `match`. */
export function select(
  samples: readonly MetricSample[],
  name: string,
  match: Readonly<Record<string, string>> = {},
): MetricSample[] {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}
