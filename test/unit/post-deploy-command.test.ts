import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { cliMain } from "../../benchmarks";
import { benchmarkCommand, shellQuote } from "../../components/post-deploy-benchmark";

/** Splits the single-quoted words benchmarkCommand produces back into argv, as sh would. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /'((?:[^']|'\\'')*)'|(\S+)/g;
  for (const m of line.matchAll(pattern)) words.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!);
  return words;
}

describe("post-deploy benchmark command", () => {
  it("quotes arguments for sh, including single quotes", () => {
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
    assert.deepEqual(shellWords(`a ${shellQuote('it\'s a {"x": 1}')}`), ["a", `it's a {"x": 1}`]);
  });

  it("is a command line the benchmark CLI accepts: it gets as far as the endpoint", async () => {
    const outputs = {
      namespace: "gemmaforge",
      deploymentName: "gemma4-12b",
      servedModelName: "gemma-4-12b-q4",
      config: { maxModelLen: 8192 },
    };
    const line = benchmarkCommand({
      stack: "seqs1",
      endpoint: "http://127.0.0.1:1",
      scenario: "",
      outputsJson: JSON.stringify(outputs),
    });
    const argv = shellWords(line);
    assert.deepEqual(argv.slice(0, 5), ["npx", "--no-install", "tsx", "benchmarks/cli.ts", "run"]);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "bench-"));
    const code = await cliMain([...argv.slice(4), "--no-cluster", "--quiet", "--out", out], process.cwd());
    // 3 = endpoint unreachable: every flag parsed (a usage error would be 2).
    assert.equal(code, 3);
  });
});
