import { strict as assert } from "node:assert";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeResult } from "../../../benchmarks/report/write";
import { RESULT_JSON_SCHEMA_PATH, resultJsonSchemaText } from "../../../result/json-schema";
import { readResult } from "../../../result/store";
import { level, result } from "./sample-result";

const repoRoot = join(__dirname, "..", "..", "..");

describe("result schema", () => {
  it("the checked-in JSON Schema is the one the zod schema emits", () => {
    const checkedIn = readFileSync(join(repoRoot, RESULT_JSON_SCHEMA_PATH), "utf8");
    assert.ok(
      checkedIn === resultJsonSchemaText(),
      `${RESULT_JSON_SCHEMA_PATH} is out of date: run \`npm run schema:result\` and commit it`,
    );
  });

  it("reads back what it wrote, validated", () => {
    const r = result("seqs4", [level(4, 2.2, 1800, 0, 0)]);
    const { json } = writeResult(r, mkdtempSync(join(tmpdir(), "result-schema-")));
    assert.deepEqual(readResult(json), r);
  });

  it("rejects a malformed file with every bad field named", () => {
    const r = result("seqs4", [level(4, 2.2, 1800, 0, 0)]);
    const broken = JSON.parse(JSON.stringify(r));
    broken.phases.load.levels[0].ttftMs.p50 = "fast";
    delete broken.phases.load.levels[0].warmupCounts;
    const path = join(mkdtempSync(join(tmpdir(), "result-schema-")), "bad.json");
    writeFileSync(path, JSON.stringify(broken));
    assert.throws(
      () => readResult(path),
      (e: Error) =>
        e.message.startsWith(`${path} is not a valid benchmark result:`) &&
        e.message.includes("phases.load.levels.0.ttftMs.p50: Invalid input: expected number, received string") &&
        e.message.includes("phases.load.levels.0.warmupCounts: Invalid input: expected object, received undefined"),
    );
  });

  it("names the schema version it reads when a file has another", () => {
    const path = join(mkdtempSync(join(tmpdir(), "result-schema-")), "old.json");
    writeFileSync(path, JSON.stringify({ ...result("x", []), schemaVersion: 3 }));
    assert.throws(
      () => readResult(path),
      new Error(
        `${path}: schemaVersion 3, this tool reads 4 (re-run the benchmark, or compare with the tool version that wrote it)`,
      ),
    );
  });
});
