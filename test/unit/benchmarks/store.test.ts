import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { z } from "zod";
import {
  campaignBase,
  campaignFiles,
  comparisonChartFile,
  completeResultsNewestFirst,
  readCampaignFiles,
  readSummaryFile,
  resultStackDirs,
  storedResults,
  summaryStacks,
  writeCampaignFiles,
  writeResultFiles,
  writeSummaryFile,
} from "../../../result/store";
import { level, result } from "./sample-result";

/** The on-disk layout is part of the product (users and scripts read it): these are its exact paths. */
describe("results store (result/store.ts): the one home of the results/ and summaries/ layout", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "store-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("writes a result as <stack>/<stamp>.json and .md and reads it back, newest complete first", () => {
    const older = { ...result("seqs 2", [level(4, 2, 500, 0, 0)]), startedAt: "2025-06-01T10:00:00.123Z" };
    const newer = { ...older, startedAt: "2025-06-02T10:00:00.000Z" };
    const partial = { ...older, startedAt: "2025-06-03T10:00:00.000Z", complete: false };
    const files = writeResultFiles(dir, older, "# report\n");
    assert.deepEqual(files, {
      json: path.join(dir, "seqs_2", "2025-06-01T10-00-00Z.json"),
      markdown: path.join(dir, "seqs_2", "2025-06-01T10-00-00Z.md"),
    });
    assert.equal(fs.readFileSync(files.markdown, "utf8"), "# report\n");
    assert.equal(fs.readFileSync(files.json, "utf8"), `${JSON.stringify(older, null, 2)}\n`);
    writeResultFiles(dir, newer, "");
    writeResultFiles(dir, partial, "");
    fs.writeFileSync(path.join(dir, "seqs_2", "broken.json"), "{");
    const warnings: string[] = [];
    assert.deepEqual(
      storedResults(dir, "seqs 2", (m) => warnings.push(m)).map((s) => path.basename(s.file)),
      ["2025-06-01T10-00-00Z.json", "2025-06-02T10-00-00Z.json", "2025-06-03T10-00-00Z.json"],
    );
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0] as string,
      /^ignoring .*broken\.json for resume: .*broken\.json: not a readable JSON file/,
    );
    assert.deepEqual(
      completeResultsNewestFirst(dir, "seqs 2").map((s) => s.result.startedAt),
      ["2025-06-02T10:00:00.000Z", "2025-06-01T10:00:00.123Z"],
    );
    assert.deepEqual(resultStackDirs(dir), ["seqs_2"]);
    assert.deepEqual(storedResults(dir, "absent"), []);
    assert.deepEqual(resultStackDirs(path.join(dir, "none")), []);
  });

  it("keeps campaign records as campaign-<id>.json and .md beside the results, and parses them by the caller's schema", () => {
    assert.equal(campaignBase(dir, "2025-06-01T10-00-00Z"), path.join(dir, "campaign-2025-06-01T10-00-00Z"));
    const written = writeCampaignFiles(dir, "b", { kind: "k", n: 2 }, "# b\n");
    assert.deepEqual(written, { json: path.join(dir, "campaign-b.json"), markdown: path.join(dir, "campaign-b.md") });
    writeCampaignFiles(dir, "a", { kind: "k", n: 1 }, "# a\n");
    writeCampaignFiles(dir, "c", { kind: "other" }, "");
    assert.deepEqual(
      campaignFiles(dir),
      ["a", "b", "c"].map((id) => path.join(dir, `campaign-${id}.json`)),
    );
    const warnings: string[] = [];
    const read = readCampaignFiles(dir, z.object({ kind: z.literal("k"), n: z.number() }), (m) => warnings.push(m));
    assert.deepEqual(
      read.map((r) => r.record.n),
      [1, 2],
    );
    assert.deepEqual(warnings, [`ignoring ${path.join(dir, "campaign-c.json")}: not a campaign summary`]);
  });

  it("keeps summaries as <dir>/<stack>.json, null when absent, and names the file and field when one does not parse", () => {
    const schema = z.strictObject({ stack: z.string(), n: z.number() });
    assert.equal(writeSummaryFile(dir, "seqs2", { stack: "seqs2", n: 1 }), path.join(dir, "seqs2.json"));
    assert.deepEqual(readSummaryFile(dir, "seqs2", schema, "a test summary"), { stack: "seqs2", n: 1 });
    assert.equal(readSummaryFile(dir, "seqs1", schema, "a test summary"), null);
    writeSummaryFile(dir, "bad", { stack: "bad", n: "one" });
    assert.throws(
      () => readSummaryFile(dir, "bad", schema, "a test summary"),
      new RegExp(`^Error: ${path.join(dir, "bad.json")} is not a test summary: n: `.replace(/\./g, "\\.")),
    );
    assert.deepEqual(summaryStacks(dir), ["bad", "seqs2"]);
  });

  it("puts the comparison chart at <dir>/comparison-<stamp>.svg", () => {
    assert.equal(
      comparisonChartFile("results", new Date("2025-06-01T10:00:00.500Z")),
      path.join("results", "comparison-2025-06-01T10-00-00Z.svg"),
    );
  });
});
